import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { TestGitHubServer } from '../src/connectors/github/test-github-server.js';
import { TestGitLabServer } from '../src/connectors/gitlab/test-gitlab-server.js';
import { FakeGoogleDrive, FOLDER, GOOGLE_DOC } from '../src/connectors/google_drive/test-google-drive-server.js';
import { TestLinearServer } from '../src/connectors/linear/test-linear-server.js';
import { blocks } from '../src/connectors/notion/test-notion-content.js';
import { TestNotionServer } from '../src/connectors/notion/test-notion-server.js';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import { jobCounts, SaasService } from './support/saas-service.js';
import { eventually } from './support/sync-helpers.js';

/**
 * The SaaS sources through the running service as a user meets them: connected over REST (a browser
 * sign-in with the operator's app, a token from an earlier sign-in, a pasted token), synced by the
 * worker, searched, changed at the provider and synced again; a refused refresh asks the user to
 * sign in again. Each source runs against a local server speaking its provider's documented API and
 * OAuth token endpoint. No token or client secret may reach a response or a log line.
 */
let service: SaasService;
/** Every token and client secret of the tests, looked for in responses and logs at the end. */
const secrets: string[] = [];

beforeAll(async () => {
  service = await SaasService.start();
});
afterAll(async () => {
  await service?.stop();
});

describe("github against a local server speaking GitHub's REST, GraphQL and OAuth APIs", () => {
  const operatorApp = { clientId: 'Iv1.operator0github', clientSecret: 'github-operator-secret-0123456789' };
  let github: TestGitHubServer;

  beforeAll(async () => {
    github = await new TestGitHubServer().start();
    github.oauth.apps.set(operatorApp.clientId, operatorApp.clientSecret);
    secrets.push(operatorApp.clientSecret);
    await service.registerOperatorApp('github', { ...operatorApp, tokenUrl: `${github.url}/login/oauth/access_token` });
  });
  afterAll(() => github?.stop());

  test('oauth_browser with the operator app: the sign-in exchanges the code at GitHub, the first sync indexes the repository, search finds an issue, and a re-sync applies edits, additions and deletions', async () => {
    const widgets = github.addRepository('acme/widgets');
    const crash = github.addIssue(widgets, { title: 'Crash on start', body: 'The frobnicator crashes when the cache is empty.', labels: ['bug'] });
    const fix = github.addIssue(widgets, { title: 'Warm the cache', body: 'Warms the cache first.', pull: true });
    github.addComment(widgets, crash, 'Seen on Linux too.');
    github.addReview(widgets, fix, 'APPROVED', 'Looks good.');
    github.addRelease(widgets, 'v1.0', 'First release', 'Cache warming.');
    github.addDiscussion(widgets, 'Roadmap', 'What comes after 1.0?');
    widgets.files.set('README.md', Buffer.from('# Widgets\n\nWidgets for everyone.'));
    widgets.files.set('src/app.ts', Buffer.from('export const start = () => warmCache();\n'));
    const collection = await service.createCollection('GitHub');

    const created = await service.connect({ short_name: 'github', readable_collection_id: collection, config: { api_url: github.apiUrl, repositories: ['acme/widgets'] }, authentication: {}, redirect_url: `${service.url}/health` });
    expect(created).toMatchObject({ status: 'pending_auth', auth: { method: 'oauth_browser', authenticated: false } });
    const authUrl = new URL(created.auth.auth_url);
    expect(Object.fromEntries(authUrl.searchParams)).toMatchObject({ client_id: operatorApp.clientId, scope: 'repo read:org read:discussion', code_challenge_method: 'S256' });

    const landed = await service.signInWithBrowser(created.auth.auth_url, `${github.url}/login/oauth/authorize`, (request) => {
      const code = `gh-code-${Math.random().toString(36).slice(2)}`;
      github.oauth.codes.set(code, { clientId: request.get('client_id')!, redirectUri: request.get('redirect_uri')!, codeChallenge: request.get('code_challenge')! });
      return code;
    });
    expect(Object.fromEntries(landed.searchParams)).toEqual({ status: 'success', source_connection_id: created.id });
    const exchange = github.requests.find((request) => request.path === '/login/oauth/access_token')!;
    expect(exchange.status).toBe(200);
    const stored = (await service.storedCredentials(created.id)) as { accessToken: string };
    secrets.push(stored.accessToken);
    expect(github.tokens.has(stored.accessToken)).toBe(true);

    // 1 repository, 1 issue, 1 pull request, 1 comment, 1 review, 1 discussion, 1 release, 2 files.
    const first = await service.firstSync(created.id);
    expect(jobCounts(first)).toEqual({ status: 'COMPLETED', inserted: 9, updated: 0, deleted: 0, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ repository: 1, issue: 1, pull_request: 1, comment: 1, review: 1, discussion: 1, release: 1, file: 2 });
    expect(github.requests.filter((request) => request.path.startsWith('/repos/')).every((request) => request.authorization === `Bearer ${stored.accessToken}`)).toBe(true);

    const [hit] = await service.search(collection, 'frobnicator');
    expect(hit).toMatchObject({
      entity_id: 'acme/widgets/issues/1',
      name: 'Crash on start',
      breadcrumbs: [
        { entity_id: 'acme', name: 'acme', entity_type: 'owner' },
        { entity_id: 'acme/widgets', name: 'widgets', entity_type: 'repository' },
      ],
      web_url: `${github.url}/acme/widgets/issues/1`,
    });

    github.edit(crash, { title: 'Crash on cold start' });
    github.addComment(widgets, crash, 'The quuxinator fixes it.');
    widgets.files.delete('README.md');
    widgets.files.set('docs/guide.md', Buffer.from('# Guide\n\nStart the app.'));
    // Inserted: the comment and docs/guide.md; updated: the issue; deleted: README.md.
    expect(jobCounts(await service.sync(created.id))).toEqual({ status: 'COMPLETED', inserted: 2, updated: 1, deleted: 1, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ repository: 1, issue: 1, pull_request: 1, comment: 2, review: 1, discussion: 1, release: 1, file: 2 });
    const [comment] = await service.search(collection, 'quuxinator');
    expect(comment!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['acme', 'widgets', 'Crash on cold start']);
  });
});

describe("google_drive against a local server speaking Google's Drive API v3 and OAuth 2 endpoints", () => {
  let drive: FakeGoogleDrive;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    drive = await FakeGoogleDrive.start();
    receiver = await WebhookReceiver.start();
    secrets.push(drive.clientSecret);
    await service.registerOperatorApp('google_drive', { clientId: drive.clientId, clientSecret: drive.clientSecret, tokenUrl: `${drive.url}/token` });
  });
  afterAll(async () => {
    await receiver?.close();
    await drive?.close();
  });

  test('oauth_browser with the operator app; first sync, search, changes; then the user revokes access: the refused refresh fails the job, needs_reauth, and auth_expired is delivered signed', async () => {
    drive.add({ id: 'f-projects', name: 'Projects', mimeType: FOLDER });
    drive.add({ id: 'd-plan', name: 'Launch plan', mimeType: GOOGLE_DOC, parent: 'f-projects', exports: { 'text/plain': 'Countdown at T-10; the gyroscope is calibrated first.' } });
    drive.add({ id: 'b-notes', name: 'notes.md', mimeType: 'text/markdown', parent: 'f-projects', content: Buffer.from('# Notes\n\nRemember the oxygen.\n') });
    const collection = await service.createCollection('Drive');
    const config = { api_url: drive.url, corpora: 'user', oauth_authorize_url: `${drive.url}/o/oauth2/v2/auth`, oauth_token_url: `${drive.url}/token` };

    const created = await service.connect({ short_name: 'google_drive', readable_collection_id: collection, config, authentication: {}, redirect_url: `${service.url}/health` });
    expect(created).toMatchObject({ status: 'pending_auth', auth: { method: 'oauth_browser' } });
    const landed = await service.signInWithBrowser(created.auth.auth_url, `${drive.url}/o/oauth2/v2/auth`, (request) => {
      expect(Object.fromEntries(request)).toMatchObject({ access_type: 'offline', prompt: 'consent', scope: 'https://www.googleapis.com/auth/drive.readonly', code_challenge_method: 'S256' });
      return drive.approve(request.get('code_challenge')!, request.get('redirect_uri')!);
    });
    expect(Object.fromEntries(landed.searchParams)).toEqual({ status: 'success', source_connection_id: created.id });
    const stored = (await service.storedCredentials(created.id)) as { accessToken: string; refreshToken: string };
    expect(stored.refreshToken).toMatch(/^1\/\//);
    secrets.push(stored.accessToken, stored.refreshToken);

    // My Drive and Projects (folders), the exported Doc and notes.md (files).
    const first = await service.firstSync(created.id);
    expect(jobCounts(first)).toEqual({ status: 'COMPLETED', inserted: 4, updated: 0, deleted: 0, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ folder: 2, file: 2 });
    const [hit] = await service.search(collection, 'gyroscope');
    expect(hit).toMatchObject({
      entity_id: 'd-plan',
      name: 'Launch plan',
      breadcrumbs: [
        { entity_id: drive.rootId, name: 'My Drive', entity_type: 'folder' },
        { entity_id: 'f-projects', name: 'Projects', entity_type: 'folder' },
      ],
      web_url: 'https://docs.google.com/document/d/d-plan/edit?usp=drivesdk',
    });

    drive.update('d-plan', { exports: { 'text/plain': 'Countdown at T-5; the gyroscope is calibrated first.' } });
    drive.add({ id: 'b-log', name: 'log.txt', mimeType: 'text/plain', parent: 'f-projects', content: Buffer.from('All systems go, telemetry nominal') });
    drive.trash('b-notes');
    expect(jobCounts(await service.sync(created.id))).toEqual({ status: 'COMPLETED', inserted: 1, updated: 1, deleted: 1, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ folder: 2, file: 2 });
    expect((await service.search(collection, 'telemetry'))[0]!.entity_id).toBe('b-log');

    const admin = await service.adminToken();
    const subscribed = await service.call('POST', '/webhooks/subscriptions', { url: receiver.url, event_types: ['source_connection.auth_expired'] }, { token: admin });
    expect(subscribed.status).toBe(200);
    const signingSecret = (await service.call('GET', `/webhooks/subscriptions/${subscribed.body.id}?include_secret=true`, undefined, { token: admin })).body.secret as string;
    // The user removes the app's access at Google: the access token answers 401, the refresh invalid_grant.
    drive.revokeAccess();
    const failed = await service.sync(created.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toContain('invalid_grant');
    expect((await service.call('GET', `/source-connections/${created.id}`)).body.status).toBe('needs_reauth');
    expect(drive.requestsTo(/^\/token$/).at(-1)!.method).toBe('POST');
    const [delivery] = await eventually(async () => receiver.received, (list) => list.length >= 1);
    const payload = new StandardWebhook(signingSecret).verify(delivery!.body, delivery!.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toMatchObject({ event_type: 'source_connection.auth_expired', source_connection_id: created.id, collection_readable_id: collection, source_type: 'google_drive' });
  });
});

/** The authorization-code grant at a provider's form-encoded token endpoint (RFC 6749 §4.1.3, client in the body): the tokens of an earlier sign-in. */
async function exchangeCode(tokenUrl: string, form: Record<string, string>): Promise<{ access_token: string; refresh_token: string; expires_in: number }> {
  const response = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams({ grant_type: 'authorization_code', ...form }) });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string; expires_in: number };
}

describe("gitlab against a local server speaking GitLab's REST API v4 and OAuth token endpoint", () => {
  let gitlab: TestGitLabServer;
  beforeAll(async () => {
    gitlab = await new TestGitLabServer().start();
  });
  afterAll(() => gitlab?.stop());

  test('oauth_token with its own client, expiring within the minute: refreshed before the first request and the rotated refresh token persisted; first sync, search, changes', async () => {
    const handbook = gitlab.addProject({ path: 'handbook', namespace: 'acme', name: 'Handbook', description: 'How we work' });
    const onboarding = gitlab.addIssuable(handbook, 'issues', { title: 'Onboarding checklist', description: 'New hires get a zeppelin tour on day one.' });
    gitlab.addNote(onboarding, 'Added the laptop step');
    gitlab.addIssuable(handbook, 'mergeRequests', { title: 'Rewrite the VPN guide', description: 'Fixes #1' });
    handbook.wiki.set('home', { slug: 'home', title: 'Home', content: 'Welcome to the handbook', format: 'markdown' });
    handbook.files.set('README.md', Buffer.from('# Handbook\n\nStart here.\n'));
    const app = gitlab.oauth.registerApp('https://catchment.example/oauth/callback');
    const given = await exchangeCode(`${gitlab.url}/oauth/token`, { code: gitlab.oauth.approve(app.clientId, 'https://catchment.example/oauth/callback'), redirect_uri: 'https://catchment.example/oauth/callback', client_id: app.clientId, client_secret: app.clientSecret });
    secrets.push(app.clientSecret, given.access_token, given.refresh_token);
    const collection = await service.createCollection('GitLab');

    const created = await service.connect({
      short_name: 'gitlab',
      readable_collection_id: collection,
      config: { base_url: gitlab.url, projects: ['acme/handbook'] },
      authentication: { access_token: given.access_token, refresh_token: given.refresh_token, expires_at: new Date(Date.now() + 30_000).toISOString(), client_id: app.clientId, client_secret: app.clientSecret },
    });
    expect(created).toMatchObject({ auth_method: 'oauth_token', is_authenticated: true });
    // 1 project, 1 issue with 1 comment, 1 merge request, 1 wiki page, 1 file.
    const first = await service.firstSync(created.id);
    expect(jobCounts(first)).toEqual({ status: 'COMPLETED', inserted: 6, updated: 0, deleted: 0, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ project: 1, issue: 1, note: 1, merge_request: 1, wiki_page: 1, file: 1 });
    const stored = (await service.storedCredentials(created.id)) as { accessToken: string; refreshToken: string };
    expect(stored.refreshToken).not.toBe(given.refresh_token);
    expect(stored.accessToken).not.toBe(given.access_token);
    secrets.push(stored.accessToken, stored.refreshToken);

    const [hit] = await service.search(collection, 'zeppelin');
    expect(hit).toMatchObject({
      entity_id: `issue:${handbook.id}:1`,
      name: 'acme/handbook#1 Onboarding checklist',
      breadcrumbs: [
        { entity_id: `namespace:${handbook.namespace.id}`, name: 'acme', entity_type: 'namespace' },
        { entity_id: `project:${handbook.id}`, name: 'Handbook', entity_type: 'project' },
      ],
      web_url: `${gitlab.url}/acme/handbook/-/issues/1`,
    });

    gitlab.editIssuable(onboarding, { title: 'Onboarding checklist for engineers' });
    gitlab.addNote(onboarding, 'The quokka mascot goes on the wiki.');
    handbook.wiki.delete('home');
    handbook.files.set('docs/vpn.md', Buffer.from('# VPN\n\nAsk for a token.\n'));
    // Inserted: the comment and docs/vpn.md; updated: the issue, and its earlier comment (read again
    // with it) whose breadcrumb names the issue; deleted: the wiki page.
    expect(jobCounts(await service.sync(created.id))).toEqual({ status: 'COMPLETED', inserted: 2, updated: 2, deleted: 1, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ project: 1, issue: 1, note: 2, merge_request: 1, file: 2 });
    for (const phrase of ['quokka', 'laptop']) {
      const [comment] = await service.search(collection, phrase);
      expect(comment!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['acme', 'Handbook', 'Onboarding checklist for engineers']);
    }
  });
});

describe("linear against a local server speaking Linear's GraphQL API and OAuth token endpoint", () => {
  const operatorApp = { clientId: 'linear-operator-client', clientSecret: 'linear-operator-secret-0123456789' };
  let linear: TestLinearServer;
  beforeAll(async () => {
    linear = await new TestLinearServer().start();
    linear.clients.set(operatorApp.clientId, operatorApp.clientSecret);
    secrets.push(operatorApp.clientSecret);
    await service.registerOperatorApp('linear', { ...operatorApp, tokenUrl: `${linear.url}/oauth/token` });
  });
  afterAll(() => linear?.stop());

  test("oauth_token refreshed with the operator's app once Linear refuses the expired access token; first sync, search, changes", async () => {
    const eng = linear.addTeam({ name: 'Engineering', key: 'ENG' });
    const telescope = linear.addProject({ name: 'Telescope', teamIds: [eng.id] });
    const calibrate = linear.addIssue({ teamId: eng.id, projectId: telescope.id, title: 'Calibrate the mirror', description: 'Use the laser collimator on Polaris.' });
    const logs = linear.addIssue({ teamId: eng.id, title: 'Rotate the logs' });
    linear.addComment({ issueId: calibrate.id, body: 'Polaris drifts by a degree.' });
    const spec = linear.addDocument({ title: 'Telescope spec', content: 'Aperture: 200 mm.', projectId: telescope.id });
    const given = await exchangeCode(`${linear.url}/oauth/token`, { code: linear.authorize(operatorApp.clientId, 'https://catchment.example/oauth/callback'), redirect_uri: 'https://catchment.example/oauth/callback', client_id: operatorApp.clientId, client_secret: operatorApp.clientSecret });
    secrets.push(given.access_token, given.refresh_token);
    const collection = await service.createCollection('Linear');

    const created = await service.connect({ short_name: 'linear', readable_collection_id: collection, config: { api_url: linear.url }, authentication: { access_token: given.access_token, refresh_token: given.refresh_token } });
    expect(created).toMatchObject({ auth_method: 'oauth_token', is_authenticated: true });
    const first = await service.firstSync(created.id);
    expect(jobCounts(first)).toEqual({ status: 'COMPLETED', inserted: 6, updated: 0, deleted: 0, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ team: 1, project: 1, issue: 2, comment: 1, document: 1 });
    const [hit] = await service.search(collection, 'collimator');
    expect(hit).toMatchObject({
      entity_id: `issue:${calibrate.id}`,
      name: 'ENG-1 Calibrate the mirror',
      breadcrumbs: [
        { entity_id: `team:${eng.id}`, name: 'Engineering', entity_type: 'team' },
        { entity_id: `project:${telescope.id}`, name: 'Telescope', entity_type: 'project' },
      ],
      web_url: 'https://linear.app/observatory/issue/ENG-1/calibrate-the-mirror',
    });

    linear.expireAccessTokens();
    linear.update(logs, { title: 'Rotate and compress the logs' });
    linear.addComment({ issueId: calibrate.id, body: 'The wombat eyepiece arrived.' });
    linear.trash(spec);
    expect(jobCounts(await service.sync(created.id))).toEqual({ status: 'COMPLETED', inserted: 1, updated: 1, deleted: 1, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ team: 1, project: 1, issue: 2, comment: 2 });
    const renewed = (await service.storedCredentials(created.id)) as { accessToken: string; refreshToken: string; client: unknown };
    expect(renewed).toMatchObject({ client: { kind: 'operator' } });
    expect(renewed.refreshToken).not.toBe(given.refresh_token);
    secrets.push(renewed.accessToken, renewed.refreshToken);
    expect((await service.search(collection, 'wombat'))[0]!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['Engineering', 'Telescope', 'ENG-1 Calibrate the mirror']);
  });
});

describe("notion against a local server speaking Notion's REST API", () => {
  const token = 'ntn_internal_integration_token_e2e_0123456789';
  let notion: TestNotionServer;
  beforeAll(async () => {
    notion = await new TestNotionServer().start();
    notion.tokens.add(token);
    secrets.push(token);
  });
  afterAll(() => notion?.stop());

  test('a pasted internal integration token; first sync, search, changes', async () => {
    const { paragraph, heading } = blocks;
    const engineering = notion.addPage({ title: 'Engineering', content: [heading(1, 'Handbook'), paragraph('How we work.')] });
    const runbooks = notion.addPage({ title: 'Runbooks', parent: { type: 'page_id', page_id: engineering }, content: [paragraph('Restart the flux capacitor service.')] });
    const tasks = notion.addDatabase({ title: 'Tasks', parent: { type: 'page_id', page_id: engineering }, properties: { Name: { type: 'title', title: {} } } });
    const writeDocs = notion.addPage({ title: 'Write docs', parent: { type: 'database_id', database_id: tasks }, content: [paragraph('Document the API.')] });
    const collection = await service.createCollection('Notion');

    const created = await service.connect({ short_name: 'notion', readable_collection_id: collection, config: { api_url: notion.url }, authentication: { credentials: { token } } });
    expect(created).toMatchObject({ auth_method: 'direct', is_authenticated: true });
    const first = await service.firstSync(created.id);
    expect(jobCounts(first)).toEqual({ status: 'COMPLETED', inserted: 4, updated: 0, deleted: 0, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ notion_page: 2, notion_database: 1, notion_database_row: 1 });
    const [hit] = await service.search(collection, 'capacitor');
    expect(hit).toMatchObject({
      entity_id: runbooks,
      name: 'Runbooks',
      breadcrumbs: [
        { entity_id: 'workspace', name: 'Acme', entity_type: 'notion_workspace' },
        { entity_id: engineering, name: 'Engineering', entity_type: 'notion_page' },
      ],
      web_url: notion.webUrlOf(runbooks),
    });

    notion.editPage(runbooks, { content: [paragraph('Restart the flux capacitor service, then check the logs.')] });
    notion.addPage({ title: 'Postmortems', parent: { type: 'page_id', page_id: runbooks }, content: [paragraph('Blameless, with a narwhal.')] });
    notion.trash(writeDocs);
    notion.searchIndexLag.add(writeDocs);
    expect(jobCounts(await service.sync(created.id))).toEqual({ status: 'COMPLETED', inserted: 1, updated: 1, deleted: 1, error: null });
    expect(await service.entityCounts(created.id)).toEqual({ notion_page: 3, notion_database: 1 });
    expect((await service.search(collection, 'narwhal'))[0]!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['Acme', 'Engineering', 'Runbooks']);
  });
});

describe('secrets', () => {
  test('no token, refresh token or client secret of these connections appears in any response or log line', () => {
    // Client secrets, pasted and given tokens, and the tokens the service obtained and holds sealed.
    expect(secrets).toHaveLength(16);
    expect(service.logLines).toBeGreaterThan(0);
    expect(service.secretsExposed(secrets)).toEqual({ inResponses: [], inLogs: [] });
  });
});
