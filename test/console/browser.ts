import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's package (what .ci/run installs); the e2e tests skip, saying so, only when it is absent. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = () => existsSync(CHROMIUM_PATH);

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** Uncaught script errors and console errors of the page. */
  scriptErrors: string[];
  /** Requests to anything but the server under test and the origins allowed besides it (each was refused). */
  outsideRequests: string[];
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile and nothing running in the background, and one page that
 * may only talk to `serverUrl` and `otherOrigins` (say, an OAuth provider the user signs in at):
 * every other request is recorded and aborted.
 */
export async function openConsoleBrowser(serverUrl: string, otherOrigins: string[] = []): Promise<ConsoleBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'catchment-chromium-'));
  // A fresh profile directory (Playwright's own way of passing --user-data-dir).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    viewport: { width: 1280, height: 860 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const allowed = [serverUrl, ...otherOrigins].map((url) => `${new URL(url).origin}/`);
  const scriptErrors: string[] = [];
  const outsideRequests: string[] = [];
  page.on('pageerror', (error) => scriptErrors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') scriptErrors.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => void dialog.accept());
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed.some((origin) => url.startsWith(origin)) || url.startsWith('data:')) return route.continue();
    outsideRequests.push(url);
    return route.abort();
  });
  return {
    context,
    page,
    scriptErrors,
    outsideRequests,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
