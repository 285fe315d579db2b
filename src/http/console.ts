import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response, type Router } from 'express';
import { ASSET_MAX_AGE_MS, setPageHeaders } from './browser-pages.js';

/** Where the console's page is served, and under which prefix its built assets are (Vite's `base`). */
export const CONSOLE_PATHS = { page: '/', assets: '/console/assets' } as const;

/**
 * The web console (web/), built by `npm install` (the `prepare` script) into web/dist. It is found
 * from this file, so the service serves it whatever its working directory, from the sources
 * (src/http) or the compiled output (dist/src/http).
 */
export function consoleBuildDir(): string | null {
  const candidates = ['../../web/dist', '../../../web/dist'].map((relative) => fileURLToPath(new URL(relative, import.meta.url)));
  return candidates.find((dir) => existsSync(`${dir}/index.html`)) ?? null;
}

/**
 * GET / answers the console's page (the same CSP as the other browser pages: scripts from this
 * origin only, no CDN) and /console/assets/* its hashed, long-cached files. Without a build the page
 * says how to make one instead of failing the server's start.
 */
export function consoleRouter(buildDir: string | null = consoleBuildDir()): Router {
  const router = express.Router();
  const page = buildDir ? readFileSync(`${buildDir}/index.html`, 'utf8') : null;
  router.get(CONSOLE_PATHS.page, (_req: Request, res: Response) => {
    setPageHeaders(res);
    if (page === null) {
      res.status(503).type('text/plain').send('The web console is not built: run `npm run web:build` (npm install does it) and restart the service.');
      return;
    }
    res.type('html').send(page);
  });
  if (buildDir) {
    router.use(
      CONSOLE_PATHS.assets,
      express.static(`${buildDir}/assets`, { immutable: true, maxAge: ASSET_MAX_AGE_MS, index: false, fallthrough: false, setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff') }),
    );
  }
  return router;
}
