import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { consoleBuildDir } from '../../src/http/console.js';
import { startFakeChatCompletions } from '../support/fake-chat-completions.js';
import { graphql, startTestServer, type TestServer } from '../support/harness.js';
import { agentReply } from '../support/mcp-fixture.js';
import { TestOAuthProvider } from '../support/oauth-provider.js';
import { eventually, FAST_WORKER } from '../support/sync-helpers.js';
import { chromiumAvailable, CHROMIUM_PATH, openConsoleBrowser, type ConsoleBrowser } from './browser.js';

/** Set to a folder (npm run web:screenshots) to write the README's screenshots of the main screens. */
const SCREENSHOTS = process.env.CATCHMENT_CONSOLE_SCREENSHOTS;
const NOTES = 400;
/** The notes, gannets.md and the two folders (entities too). */
const ENTITIES = NOTES + 3;
/** colony.png: listed, counted in the progress total, left out as an unsupported file type. */
const LEFT_OUT = 1;
/** The operator's OAuth app for the stub source (registered through the clients file), and a user's own app. */
const OPERATOR_CLIENT = { id: 'console-operator-client', secret: 'console-operator-secret-1234' };
const OWN_CLIENT = { id: 'console-own-client', secret: 'console-own-secret-5678' };
/** A stub connection of 30 entities at hierarchy depth 2 also yields their 1 + 3 folders. */
const STUB_ENTITIES = 34;

if (!chromiumAvailable()) {
  console.warn(`Web console e2e tests SKIPPED: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, as .ci/run does, or set CHROMIUM_PATH).`);
}
const describeWithChromium = chromiumAvailable() ? describe : describe.skip;

describeWithChromium('web console in headless Chromium', () => {
  let server: TestServer;
  let llm: Awaited<ReturnType<typeof startFakeChatCompletions>>;
  let receiver: Server;
  let receiverUrl: string;
  let folder: string;
  let clientsDir: string;
  const provider = new TestOAuthProvider();
  let browser: ConsoleBrowser;
  let page: Page;

  const shot = async (name: string) => {
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  const signIn = async (kind: 'an API key' | 'a bearer token', secret: string) => {
    await page.goto(`${server.url}/`);
    await page.getByLabel(kind).check();
    await page.getByLabel(kind === 'an API key' ? 'API key' : 'Bearer token', { exact: true }).fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const signOut = () => page.getByRole('button', { name: 'Sign out' }).click();

  beforeAll(async () => {
    if (!consoleBuildDir()) throw new Error('web/dist is missing: npm install builds the console (npm run web:build)');
    folder = mkdtempSync(path.join(tmpdir(), 'catchment-console-'));
    mkdirSync(path.join(folder, 'notes', 'coast'), { recursive: true });
    writeFileSync(path.join(folder, 'notes', 'coast', 'gannets.md'), '# Gannets\n\nThe gannet colony on the north cliff holds about two thousand nests.\n');
    writeFileSync(path.join(folder, 'notes', 'coast', 'colony.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    for (let i = 0; i < NOTES; i++) writeFileSync(path.join(folder, 'notes', `tide-${i}.md`), `# Tide note ${i}\n\nSpring tide ${i}: the ebb uncovers mussel bed number ${i}.\n`);
    llm = await startFakeChatCompletions((request, index) => agentReply(request, index, 'quick'));
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await provider.start();
    provider.clients.set(OPERATOR_CLIENT.id, OPERATOR_CLIENT.secret);
    provider.clients.set(OWN_CLIENT.id, OWN_CLIENT.secret);
    clientsDir = mkdtempSync(path.join(tmpdir(), 'catchment-console-clients-'));
    const clientsFile = path.join(clientsDir, 'oauth-clients.json');
    // An operator app serves one token endpoint: here the local provider's, which the stub connections name.
    writeFileSync(clientsFile, JSON.stringify({ stub: { client_id: OPERATOR_CLIENT.id, client_secret: OPERATOR_CLIENT.secret, token_url: provider.tokenUrl } }));
    server = await startTestServer({
      deployment: 'embedded',
      env: {
        ...FAST_WORKER,
        CATCHMENT_LOCAL_FOLDER_ROOTS: folder,
        CATCHMENT_LLM_URL: llm.url,
        CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true',
        CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
        CATCHMENT_OAUTH_CLIENTS_FILE: clientsFile,
      },
    });
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    // The provider's sign-in page is the one other place the browser goes (as it would go to github.com).
    browser = await openConsoleBrowser(server.url, [provider.origin]);
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await llm?.close();
    receiver?.close();
    await provider.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
    if (clientsDir) rmSync(clientsDir, { recursive: true, force: true });
  });

  test('GET / is the console, built and served by the API server, with API paths unchanged', async () => {
    const response = await page.goto(`${server.url}/`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    await expect(page.title()).resolves.toBe('Catchment console');
    await shot('sign-in');
    const health = await fetch(`${server.url}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${server.url}/collections`)).status).toBe(401);
  });

  test('sign in, create a collection, connect a folder (422 at the field), watch the sync live to COMPLETED', async () => {
    const collectionStream = page.waitForResponse((response) => response.url().endsWith('/graphql/stream') && (response.request().postData() ?? '').includes('collectionEvents'));
    await signIn('an API key', server.apiKey);
    // A collection made elsewhere appears without a reload (the collectionEvents subscription).
    await collectionStream;
    await page.waitForTimeout(300);
    await graphql(server.url, 'mutation { createCollection(input: { name: "Made elsewhere" }) { id } }', {}, { apiKey: server.apiKey });
    await page.getByRole('link', { name: 'Made elsewhere' }).waitFor({ timeout: 10_000 });
    // The key is kept for the tab only.
    expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0);
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['catchment.credentials']);

    await page.getByLabel('Name', { exact: true }).fill('Field notes');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('link', { name: 'Field notes' }).click();
    await page.getByRole('heading', { name: /Field notes/, level: 1 }).waitFor();

    await page.getByLabel('Source', { exact: true }).selectOption('local_folder');
    await page.getByLabel('Connection name').fill('Coast notes');
    await page.getByLabel(/Folder path/).fill('/etc');
    await page.getByRole('button', { name: 'Connect and sync' }).click();
    // The service's 422 issue for config.path, shown at the field.
    const pathError = page.locator('#config-path-error');
    await pathError.waitFor();
    expect(await pathError.textContent()).toMatch(/root|allow/i);
    expect(await page.getByLabel(/Folder path/).getAttribute('aria-invalid')).toBe('true');

    // Every status and inserted count the page shows, as the DOM changes (no reloads, no polling).
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seenProgress: string[] }).seenProgress = seen;
      new MutationObserver(() => {
        const status = document.querySelector('[data-testid="job-status"]')?.textContent;
        const inserted = [...document.querySelectorAll('.progress div')].find((d) => d.querySelector('dt')?.textContent === 'Inserted')?.querySelector('dd')?.textContent;
        const entry = `${status}:${inserted}`;
        if (status && seen.at(-1) !== entry) seen.push(entry);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const streams: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/graphql/stream')) streams.push(request.postData() ?? '');
    });
    await page.getByLabel(/Folder path/).fill(folder);
    await page.getByRole('button', { name: 'Connect and sync' }).click();
    await page.getByTestId('job-status').filter({ hasText: 'COMPLETED' }).waitFor({ timeout: 45_000 });
    const seen = await page.evaluate(() => (window as unknown as { seenProgress: string[] }).seenProgress);
    console.log(`progress seen by the page: ${seen.join(' → ')}`);
    expect(seen.at(-1)).toBe(`COMPLETED:${ENTITIES}`);
    // Counts moved while the job ran: at least one value between none and all of them was drawn.
    expect(seen.some((entry) => entry.startsWith('RUNNING:') && Number(entry.split(':')[1]) > 0 && Number(entry.split(':')[1]) < ENTITIES)).toBe(true);
    expect(streams.some((body) => body.includes('syncJobProgress'))).toBe(true);
    // local_folder lists the folder before reading it: the page shows "n of total" and a progress bar (the file
    // left out is listed, so it counts in both).
    expect(await page.getByTestId('job-total').textContent()).toBe(`${ENTITIES + LEFT_OUT} of ${ENTITIES + LEFT_OUT}`);
    expect(await page.getByRole('progressbar', { name: 'Entities processed' }).getAttribute('aria-valuenow')).toBe(String(ENTITIES + LEFT_OUT));
    await page.getByText(`${ENTITIES} entities`).waitFor();
    const history = page.locator('details', { hasText: 'Job history' });
    await history.locator('summary').click();
    await history.locator('tbody tr').first().waitFor();
    expect(await history.locator('tbody tr').first().textContent()).toContain('COMPLETED');
    await shot('collection');
  });

  test("the job's left-out items: counted by reason and listed with their path; the collection's entities: paged, counted by type, narrowed", async () => {
    const leftOut = page.locator('details.skipped');
    await leftOut.locator('summary').filter({ hasText: '1 item left out (unsupported file type: 1)' }).click();
    const row = leftOut.locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').allTextContents()).toEqual(['notes/coast/colony.png', 'unsupported file type', '—']);

    await page.getByRole('navigation', { name: 'Collection views' }).getByRole('link', { name: 'Entities' }).click();
    const range = page.getByTestId('entities-range');
    await range.filter({ hasText: `1–50 of ${ENTITIES}` }).waitFor();
    const byType = page.getByRole('list', { name: 'By type' });
    expect(await byType.getByRole('button').allTextContents()).toEqual([`file ${ENTITIES - 2}`, 'folder 2']);
    expect(await page.getByRole('list', { name: 'By connection' }).getByRole('button').allTextContents()).toEqual([`Coast notes ${ENTITIES}`]);
    const names = () => page.getByRole('table', { name: 'Entities of the collection' }).locator('tbody tr td:first-child').allTextContents();
    const firstPage = await names();
    expect(firstPage).toHaveLength(50);
    await page.getByRole('button', { name: 'Next' }).click();
    await range.filter({ hasText: `51–100 of ${ENTITIES}` }).waitFor();
    expect((await names()).some((name) => firstPage.includes(name))).toBe(false);

    await byType.getByRole('button', { name: /^folder/ }).click();
    await range.filter({ hasText: '1–2 of 2' }).waitFor();
    expect((await names()).sort()).toEqual(['coast', 'notes']);
    expect(await byType.getByRole('button', { name: /^folder/ }).getAttribute('aria-pressed')).toBe('true');
    await byType.getByRole('button', { name: /^folder/ }).click();
    await page.getByLabel('Name contains').fill('tide-39');
    await page.getByRole('button', { name: 'Filter' }).click();
    await range.filter({ hasText: '1–11 of 11' }).waitFor();
    expect((await names()).sort()).toEqual(['tide-39.md', ...Array.from({ length: 10 }, (_, i) => `tide-39${i}.md`)]);
    await shot('entities');
    await page.getByRole('navigation', { name: 'Collection views' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
  });

  test('search: every tier shows results with breadcrumbs and links; the agentic steps appear as they stream', async () => {
    await page.getByRole('link', { name: 'Search this collection' }).click();
    await page.getByRole('searchbox', { name: 'Query' }).fill('gannet colony nests');
    for (const tier of ['instant', 'classic']) {
      await page.getByLabel('Tier').selectOption(tier);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const first = page.locator('.result').first();
      await first.waitFor();
      expect(await first.textContent()).toContain('gannets.md');
      expect(await first.locator('.crumbs').textContent()).toContain('coast');
    }
    await expect(page.locator('.plan').textContent()).resolves.toMatch(/Plan \(language_model/);

    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByLabel('Field', { exact: true }).selectOption('name');
    await page.getByLabel('Operator').selectOption('equals');
    await page.getByLabel('Value').fill('tide-7.md');
    await page.getByLabel('Tier').selectOption('instant');
    await page.getByLabel('Strategy').selectOption('keyword');
    await page.getByRole('searchbox', { name: 'Query' }).fill('spring tide ebb');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: 'Results (1)' }).waitFor();
    expect(await page.locator('.result h3').textContent()).toContain('tide-7.md');
    await page.getByRole('button', { name: 'Remove' }).click();

    await page.getByLabel('Tier').selectOption('agentic');
    await page.getByRole('searchbox', { name: 'Query' }).fill('gannet colony nests');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('.agent-steps li[data-event="AgentDoneEvent"]').waitFor({ timeout: 30_000 });
    const steps = await page.locator('.agent-steps li').evaluateAll((items) => items.map((item) => item.getAttribute('data-event')));
    expect(steps[0]).toBe('AgentStartedEvent');
    expect(steps).toContain('AgentToolCallEvent');
    expect(steps.at(-1)).toBe('AgentDoneEvent');
    expect(await page.locator('.result').first().textContent()).toContain('gannets.md');
    await shot('search');
  });

  test('an OAuth source: "Sign in with Stub" goes to the provider (a local server speaking RFC 6749) and back through the service\'s callback; the page says so and the first sync runs', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Collections' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Team tracker');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('link', { name: 'Team tracker' }).click();
    await page.getByRole('heading', { name: /Team tracker/, level: 1 }).waitFor();
    const collectionPage = page.url();

    // GitHub has no operator app here: the browser way needs your own app, and the page gives the redirect URI to register.
    await page.getByLabel('Source', { exact: true }).selectOption('github');
    const ways = page.getByRole('radiogroup', { name: 'How to sign in' });
    expect(await ways.getByRole('radio').evaluateAll((radios) => radios.map((radio) => (radio as HTMLInputElement).value))).toEqual(['own_app', 'fields']);
    expect(await ways.getByLabel('Sign in with your own OAuth app').isChecked()).toBe(true);
    await page.getByText(`${server.url}/oauth/callback`).waitFor();

    // The stub has the operator's app: signing in is one button.
    await page.getByLabel('Source', { exact: true }).selectOption('stub');
    expect(await ways.getByRole('radio').evaluateAll((radios) => radios.map((radio) => (radio as HTMLInputElement).value))).toEqual(['browser', 'own_app', 'fields']);
    const connectStub = async (name: string) => {
      await page.getByLabel('Connection name').fill(name);
      await page.getByLabel('Entity count').fill('30');
      await page.getByLabel(/OAuth authorization endpoint/).fill(provider.authorizeUrl);
      await page.getByLabel(/OAuth token endpoint/).fill(provider.tokenUrl);
    };
    await connectStub('Tracker');
    const exchanges = provider.exchanges.length;
    await page.getByRole('button', { name: 'Sign in with Stub' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed in: “Tracker” is connected.' }).waitFor({ timeout: 15_000 });
    // The browser went to the provider, which sent it to the service's callback, which sent it back here.
    expect(provider.authorizations.at(-1)!.get('client_id')).toBe(OPERATOR_CLIENT.id);
    expect(provider.authorizations.at(-1)!.get('redirect_uri')).toBe(`${server.url}/oauth/callback`);
    expect(provider.exchanges.slice(exchanges)).toMatchObject([{ clientId: OPERATOR_CLIENT.id, outcome: 'issued' }]);
    // The outcome is read from the address once: the query is gone, the collection page stays.
    expect(page.url()).toBe(collectionPage);
    const tracker = page.getByRole('article', { name: 'Connection Tracker' });
    await tracker.getByTestId('job-status').filter({ hasText: 'COMPLETED' }).waitFor({ timeout: 30_000 });
    await tracker.getByText(`${STUB_ENTITIES} entities`).waitFor();
    expect(await tracker.getByRole('button', { name: 'Sign in again' }).count()).toBe(0);
    await shot('oauth-connected');
    await page.getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.getByRole('status').count()).toBe(0);
  });

  test('a denied sign-in comes back as an error; "Sign in again" gets a fresh link that completes; your own OAuth app signs in with its client', async () => {
    provider.denyAccess = true;
    await page.getByLabel('Source', { exact: true }).selectOption('stub');
    await page.getByLabel('Connection name').fill('Denied tracker');
    await page.getByLabel(/OAuth authorization endpoint/).fill(provider.authorizeUrl);
    await page.getByLabel(/OAuth token endpoint/).fill(provider.tokenUrl);
    await page.getByRole('button', { name: 'Sign in with Stub' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed for “Denied tracker”: Access was denied at the provider. (access_denied)' }).waitFor({ timeout: 15_000 });
    const denied = page.getByRole('article', { name: 'Connection Denied tracker' });
    await denied.getByText('pending_auth', { exact: true }).waitFor();
    expect(await denied.getByTestId('job-status').count()).toBe(0);

    provider.denyAccess = false;
    await denied.getByRole('button', { name: 'Sign in again' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed in: “Denied tracker” is connected.' }).waitFor({ timeout: 15_000 });
    await denied.getByTestId('job-status').filter({ hasText: 'COMPLETED' }).waitFor({ timeout: 30_000 });
    expect(await denied.getByRole('button', { name: 'Sign in again' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Dismiss' }).click();

    await page.getByLabel('Source', { exact: true }).selectOption('stub');
    await page.getByLabel('Connection name').fill('Own app tracker');
    await page.getByLabel(/OAuth authorization endpoint/).fill(provider.authorizeUrl);
    await page.getByLabel(/OAuth token endpoint/).fill(provider.tokenUrl);
    await page.getByLabel('Sign in with your own OAuth app').check();
    await page.getByLabel('Client ID').fill(OWN_CLIENT.id);
    await page.getByLabel('Client secret').fill(OWN_CLIENT.secret);
    const exchanges = provider.exchanges.length;
    await page.getByRole('button', { name: 'Continue to sign in' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed in: “Own app tracker” is connected.' }).waitFor({ timeout: 15_000 });
    expect(provider.exchanges.slice(exchanges)).toMatchObject([{ clientId: OWN_CLIENT.id, outcome: 'issued' }]);
    // Neither client secret nor any issued token reached the page.
    const html = await page.content();
    for (const secret of [OWN_CLIENT.secret, OPERATOR_CLIENT.secret, ...provider.issuedTokens]) expect(html).not.toContain(secret);
  });

  test('a pasted token the source stops accepting: the connection needs a new sign-in, and "Sign in again" signs it in through the browser with the operator\'s app', async () => {
    const readableId = decodeURIComponent(new URL(page.url()).hash.replace('#/collections/', ''));
    const created = await graphql(
      server.url,
      'mutation ($input: SourceConnectionCreateInput!) { createSourceConnection(input: $input) { id authMethod } }',
      {
        input: {
          shortName: 'stub',
          readableCollectionId: readableId,
          name: 'Pasted tracker',
          config: { entity_count: 30, oauth_authorize_url: provider.authorizeUrl, oauth_token_url: provider.tokenUrl },
          // The stub refuses the token "revoked" when it syncs: the first sync fails as needing a new sign-in.
          authentication: { accessToken: 'revoked' },
        },
      },
      { apiKey: server.apiKey },
    );
    expect(created.body.data?.createSourceConnection.authMethod).toBe('oauth_token');
    const status = () => graphql(server.url, 'query ($id: ID!) { sourceConnection(id: $id) { status authMethod } }', { id: created.body.data.createSourceConnection.id }, { apiKey: server.apiKey });
    await eventually(status, (answer) => answer.body.data?.sourceConnection.status === 'needs_reauth');
    await page.reload();
    const pasted = page.getByRole('article', { name: 'Connection Pasted tracker' });
    await pasted.getByText('needs_reauth', { exact: true }).waitFor();
    const exchanges = provider.exchanges.length;
    await pasted.getByRole('button', { name: 'Sign in again' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed in: “Pasted tracker” is connected.' }).waitFor({ timeout: 15_000 });
    expect(provider.exchanges.slice(exchanges)).toMatchObject([{ clientId: OPERATOR_CLIENT.id, outcome: 'issued' }]);
    await pasted.getByTestId('job-status').filter({ hasText: 'COMPLETED' }).waitFor({ timeout: 30_000 });
    expect((await status()).body.data?.sourceConnection).toEqual({ status: 'active', authMethod: 'oauth_browser' });
    await page.getByRole('button', { name: 'Dismiss' }).click();
  });

  test('webhooks: an admin bearer token creates a subscription; its messages and attempts are listed', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('note').filter({ hasText: 'bearer token' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create subscription' }).isDisabled()).toBe(true);

    const viewer = await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey });
    const token = await server.running.core.services.auth.issueToken({ organizationId: viewer.body.data.viewer.organization.id, email: 'admin@example.com', role: 'admin' });
    await signOut();
    await signIn('a bearer token', token.access_token);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(receiverUrl);
    await page.getByLabel('collection.created').check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByRole('cell', { name: receiverUrl }).waitFor();

    await page.getByRole('link', { name: 'Collections' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Hooked');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('link', { name: 'Hooked' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const message = page.getByRole('list', { name: 'Webhook messages' }).getByRole('button', { name: /collection\.created/ }).first();
    for (let i = 0; i < 50 && !(await message.isVisible()); i++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(200);
    }
    await message.click();
    await page.getByRole('heading', { name: 'Delivery attempts' }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await shot('webhooks');
  });

  test("isolation: another organization's key sees none of it", async () => {
    const other = await server.running.core.services.organizations.createOrganization('Other org');
    await signOut();
    // Keyboard only: the key field has the focus, Enter signs in.
    await page.getByLabel('API key', { exact: true }).waitFor();
    await page.keyboard.type(other.api_key);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Collections' }).click();
    await page.getByText('No collections yet.').waitFor();
    // A small laptop screen: nothing wider than the window.
    await page.setViewportSize({ width: 1024, height: 640 });
    for (const route of ['#/', '#/webhooks']) {
      await page.goto(`${server.url}/${route}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${server.url}/`);
    await page.goto(`${server.url}/#/collections/field-notes`);
    await page.getByRole('alert').filter({ hasText: 'No collection' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No subscriptions.').waitFor();
    await page.getByText('No messages yet.').waitFor();
  });

  test('no script errors, and no request left the server', () => {
    expect(browser.scriptErrors).toEqual([]);
    expect(browser.outsideRequests).toEqual([]);
  });
});
