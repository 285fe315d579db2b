import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { consoleRouter } from './console.js';

async function serve(buildDir: string | null): Promise<{ url: string; server: Server }> {
  const app = express();
  app.use(consoleRouter(buildDir));
  app.use((_req, res) => res.status(404).json({ detail: 'Not Found' }));
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('console serving', () => {
  let build: string;
  const servers: Server[] = [];
  beforeAll(() => {
    build = mkdtempSync(path.join(tmpdir(), 'catchment-console-build-'));
    mkdirSync(path.join(build, 'assets'));
    writeFileSync(path.join(build, 'index.html'), '<!doctype html><title>Catchment console</title><script type="module" src="/console/assets/index-abc.js"></script>');
    writeFileSync(path.join(build, 'assets', 'index-abc.js'), 'console.log(1)');
  });
  afterAll(() => {
    for (const server of servers) server.close();
    rmSync(build, { recursive: true, force: true });
  });

  test('GET / is the built page with the pages\' CSP; hashed assets are cached for long; other paths fall through', async () => {
    const { url, server } = await serve(build);
    servers.push(server);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('/console/assets/index-abc.js');
    const asset = await fetch(`${url}/console/assets/index-abc.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${url}/console/assets/missing.js`)).status).toBe(404);
    expect(await (await fetch(`${url}/collections`)).json()).toEqual({ detail: 'Not Found' });
  });

  test('without a build, GET / says how to make one (503) and the server still starts', async () => {
    const { url, server } = await serve(null);
    servers.push(server);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(503);
    expect(await page.text()).toMatch(/npm run web:build/);
  });
});
