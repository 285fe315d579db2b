import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { requestTokens, TokenRequestRefusedError, type TokenSet } from '../../modules/connections/oauth/token-endpoint.js';
import { collectRun, connectionContext, connectorEnvironment, parsedConfig, rejection } from '../connector-testing.js';
import type { SourceEntity } from '../connector.js';
import { CredentialsRejectedError, SourceConfigError, SourceHttpError } from '../contract/errors.js';
import { describeSchema, parseConfig } from '../contract/schemas.js';
import type { TokenProvider } from '../contract/source-http.js';
import type { GitLabCursor } from './config.js';
import connector from './index.js';
import { type FakeIssuable, type FakeNote, type FakeProject, TestGitLabServer } from './test-gitlab-server.js';

const TOKEN = 'glpat-Zx8mQ2vLr5Tn9WcYp3Kd';
const REDIRECT_URI = 'https://catchment.example/oauth/callback';

let server: TestGitLabServer;
let handbook: FakeProject;
let tools: FakeProject;
let onboarding: FakeIssuable;
let vpn: FakeIssuable;
let stale: FakeIssuable;
let staleNote: FakeNote;
/** Waits the connection's HTTP client asked for (retries, pacing), recorded instead of waited. */
let sleeps: number[];

beforeEach(async () => {
  server = await new TestGitLabServer().start();
  server.accessTokens.set(TOKEN, { expiresAt: null });
  // Two items a page, so every listing here spans pages.
  server.maxPerPage = 2;
  sleeps = [];
  handbook = server.addProject({ path: 'handbook', namespace: 'acme', name: 'Handbook', description: 'How we work' });
  onboarding = server.addIssuable(handbook, 'issues', { title: 'Onboarding checklist', description: 'Steps for new hires', labels: ['docs'] });
  server.addNote(onboarding, 'Added the laptop step');
  server.addNote(onboarding, 'changed the description', true);
  server.addNote(onboarding, 'Looks complete');
  vpn = server.addIssuable(handbook, 'issues', { title: 'VPN guide outdated' });
  stale = server.addIssuable(handbook, 'issues', { title: 'Stale page', state: 'closed' });
  staleNote = server.addNote(stale, 'Closing as duplicate');
  const rewrite = server.addIssuable(handbook, 'mergeRequests', { title: 'Rewrite the VPN guide', description: 'Fixes #2' });
  server.addNote(rewrite, 'LGTM');
  server.addIssuable(handbook, 'mergeRequests', { title: 'Draft: holidays' });
  handbook.wiki.set('home', { slug: 'home', title: 'Home', content: 'Welcome to the handbook', format: 'markdown' });
  handbook.wiki.set('team/oncall', { slug: 'team/oncall', title: 'On call', content: 'Rotation rules', format: 'markdown' });
  handbook.files.set('README.md', Buffer.from('# Handbook\n\nStart here.\n'));
  handbook.files.set('docs/guide.md', Buffer.from('# Guide\n\nThe VPN needs a token.\n'));
  handbook.files.set('src/app.ts', Buffer.from('export const answer = 42;\n'));
  handbook.files.set('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
  handbook.files.set('docs/huge.txt', Buffer.from('x'.repeat(5000)));
  tools = server.addProject({ path: 'tools', namespace: 'acme/platform', name: 'Tools', visibility: 'public', wikiEnabled: false });
  server.addIssuable(tools, 'issues', { title: 'Add a linter' });
  // Private, and the user is no member: never listed, never readable.
  server.addProject({ path: 'secret', namespace: 'other', name: 'Secret', member: false });
});

afterEach(async () => {
  await server.stop();
});

const configOf = (extra: Record<string, unknown> = {}) => ({ base_url: server.url, max_file_bytes: 1000, ...extra });

function run({
  config = configOf(),
  credentials = { access_token: TOKEN },
  tokens = null,
  cursor = null,
  resuming = false,
  checkpoints = [],
}: { config?: Record<string, unknown>; credentials?: { access_token: string } | null; tokens?: TokenProvider | null; cursor?: GitLabCursor | null; resuming?: boolean; checkpoints?: GitLabCursor[] } = {}) {
  const given = tokens ? null : credentials;
  return collectRun(connector, { config, credentials: given, tokens, cursor, resuming, checkpoints, waits: sleeps });
}

function countByType(entities: SourceEntity[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entity of entities) counts[entity.entityType] = (counts[entity.entityType] ?? 0) + 1;
  return counts;
}
const noteIdsOf = (issuable: FakeIssuable) => issuable.notes.filter((note) => !note.system).map((note) => `note:${handbook.id}:${note.id}`);
const since = (mark: number) => server.requests.slice(mark);

describe("gitlab against a local server speaking GitLab's REST API v4", () => {
  it('first sync: every project the token is a member of, with exact counts per entity type, breadcrumbs and web URLs', async () => {
    const result = await run();

    expect(result.complete).toBe(true);
    expect(countByType(result.entities)).toEqual({ project: 2, issue: 4, merge_request: 2, note: 4, wiki_page: 2, file: 3 });
    expect(result.ids.filter((id) => id.startsWith('file:'))).toEqual([`file:${handbook.id}:README.md`, `file:${handbook.id}:docs/guide.md`, `file:${handbook.id}:src/app.ts`]);
    expect(result.skipped).toEqual(
      expect.arrayContaining([
        { entityId: `file:${handbook.id}:assets/logo.png`, reason: 'unsupported file type' },
        { entityId: `file:${handbook.id}:docs/huge.txt`, reason: 'larger than max_file_bytes', detail: 'more than 1000 bytes' },
      ]),
    );
    expect(result.skipped).toHaveLength(2);

    const note = result.byId.get(noteIdsOf(onboarding)[1]!)!;
    expect(note.text).toBe('Looks complete');
    expect(note.breadcrumbs).toEqual([
      { entityId: `namespace:${handbook.namespace.id}`, name: 'acme', entityType: 'namespace' },
      { entityId: `project:${handbook.id}`, name: 'Handbook', entityType: 'project' },
      { entityId: `issue:${handbook.id}:1`, name: 'Onboarding checklist', entityType: 'issue' },
    ]);
    expect(note.webUrl).toBe(`${server.url}/acme/handbook/-/issues/1#note_${onboarding.notes[2]!.id}`);

    const issue = result.byId.get(`issue:${handbook.id}:1`)!;
    expect(issue.name).toBe('acme/handbook#1 Onboarding checklist');
    expect(issue.text).toContain('Steps for new hires');
    expect(issue.fields).toMatchObject({ iid: 1, state: 'opened', labels: ['docs'], author: 'ada' });
    expect(issue.access).toEqual({ viewers: null, isPublic: false });
    expect(result.byId.get(`merge_request:${handbook.id}:1`)!.webUrl).toBe(`${server.url}/acme/handbook/-/merge_requests/1`);
    expect(result.byId.get(`wiki_page:${handbook.id}:team/oncall`)!.webUrl).toBe(`${server.url}/acme/handbook/-/wikis/team/oncall`);
    const guide = result.byId.get(`file:${handbook.id}:docs/guide.md`)!;
    expect(guide.webUrl).toBe(`${server.url}/acme/handbook/-/blob/main/docs/guide.md`);
    expect(guide.text).toContain('The VPN needs a token.');
    expect(result.byId.get(`file:${handbook.id}:src/app.ts`)!.language).toBe('typescript');
    const toolsIssue = result.byId.get(`issue:${tools.id}:1`)!;
    expect(toolsIssue.breadcrumbs[0]).toEqual({ entityId: `namespace:${tools.namespace.id}`, name: 'acme/platform', entityType: 'namespace' });
    expect(toolsIssue.access).toEqual({ viewers: null, isPublic: true });

    // Every API request carried the pasted token as GitLab documents it; listings were followed page by page.
    const api = server.requests.filter((request) => request.path.startsWith('/api/v4/'));
    expect(api.every((request) => request.authorization === `Bearer ${TOKEN}` && request.status === 200)).toBe(true);
    expect(server.requestsTo(new RegExp(`^/api/v4/projects/${handbook.id}/issues$`)).map((request) => request.query.get('page'))).toEqual([null, '2']);
    expect(server.requestsTo(new RegExp(`^/api/v4/projects/${handbook.id}/repository/tree$`)).filter((request) => request.query.has('page_token')).length).toBeGreaterThan(0);
    expect(server.requestsTo(/^\/api\/v4\/projects$/)[0]!.query.get('membership')).toBe('true');
    // No wiki request to a project whose wiki is off, no tree of an empty repository.
    expect(server.requestsTo(new RegExp(`^/api/v4/projects/${tools.id}/(wikis|repository)`))).toEqual([]);
  });

  it('pages by x-next-page when an offset page has no Link header', async () => {
    server.omitOffsetLinks = true;
    const result = await run();
    expect(countByType(result.entities)).toEqual({ project: 2, issue: 4, merge_request: 2, note: 4, wiki_page: 2, file: 3 });
    expect(server.requestsTo(new RegExp(`^/api/v4/projects/${handbook.id}/issues$`)).map((request) => request.query.get('page'))).toEqual([null, '2']);
  });

  it('re-syncs incrementally: changed issues with their comments, new merge requests, changed wiki pages and files are read; the rest is kept, deletions are reported', async () => {
    const first = await run();
    const rewriteNote = `note:${handbook.id}:${handbook.mergeRequests.get(1)!.notes[0]!.id}`;
    const hugeSha = createHash('sha1').update('blob 5000\0').update('x'.repeat(5000)).digest('hex');

    server.editIssuable(vpn, { description: 'Use the new VPN client' });
    server.addNote(onboarding, 'One more step: badge photo');
    handbook.issues.delete(stale.iid);
    server.addIssuable(handbook, 'mergeRequests', { title: 'Add an on-call page' });
    handbook.wiki.set('home', { slug: 'home', title: 'Home', content: 'Welcome, read the guide first', format: 'markdown' });
    handbook.wiki.delete('team/oncall');
    handbook.wiki.set('faq', { slug: 'faq', title: 'FAQ', content: 'Questions', format: 'markdown' });
    handbook.files.set('README.md', Buffer.from('# Handbook\n\nStart with the guide.\n'));
    handbook.files.delete('src/app.ts');
    handbook.files.set('docs/new.md', Buffer.from('# New\n'));
    const mark = server.requests.length;

    const second = await run({ cursor: first.cursor });

    const p = handbook.id;
    expect(second.complete).toBe(true);
    expect(second.ids).toEqual(
      [
        `project:${p}`,
        `project:${tools.id}`,
        `issue:${p}:1`,
        ...noteIdsOf(onboarding),
        `issue:${p}:2`,
        `merge_request:${p}:3`,
        `wiki_page:${p}:home`,
        `wiki_page:${p}:faq`,
        `file:${p}:README.md`,
        `file:${p}:docs/new.md`,
      ].sort(),
    );
    expect(noteIdsOf(onboarding)).toHaveLength(3);
    expect(second.keeps).toEqual([`file:${p}:docs/guide.md`, `issue:${tools.id}:1`, `merge_request:${p}:1`, `merge_request:${p}:2`, rewriteNote].sort());
    expect(second.deletes).toEqual([`file:${p}:src/app.ts`, `issue:${p}:3`, `note:${p}:${staleNote.id}`, `wiki_page:${p}:team/oncall`].sort());
    expect(second.skipped.map((item) => item.reason).sort()).toEqual(['larger than max_file_bytes', 'unsupported file type']);

    const requests = since(mark);
    // Issues listed from the previous run's mark on; comments read only for the issues that changed.
    const issueListing = requests.filter((request) => request.path === `/api/v4/projects/${p}/issues` && request.query.has('updated_after'));
    expect(issueListing[0]!.query.get('updated_after')).toBe(first.cursor!.projects[p]!.issues.since);
    expect([...new Set(requests.filter((request) => /\/(issues|merge_requests)\/\d+\/notes$/.test(request.path)).map((request) => request.path))].sort()).toEqual(
      [`/api/v4/projects/${p}/issues/1/notes`, `/api/v4/projects/${p}/issues/2/notes`, `/api/v4/projects/${p}/merge_requests/3/notes`].sort(),
    );
    // Unchanged blobs (and the file known to be too large) are not downloaded again.
    const downloads = requests.filter((request) => request.path.endsWith('/raw')).map((request) => request.path.split('/').at(-2));
    expect(downloads).toHaveLength(2);
    expect(downloads).not.toContain(hugeSha);

    const third = await run({ cursor: second.cursor });
    expect(third.ids).toEqual([`project:${p}`, `project:${tools.id}`].sort());
    expect(third.deletes).toEqual([]);
  });

  it('finds deleted issues by the project count, and by listing every iid when GitLab gives no count (x-total)', async () => {
    const first = await run();
    const mark = server.requests.length;
    const unchanged = await run({ cursor: first.cursor });
    expect(unchanged.deletes).toEqual([]);
    // Counts match what is known: besides the listing by update, one request for the count, no listing of every iid.
    const toolsIssues = since(mark).filter((request) => request.path === `/api/v4/projects/${tools.id}/issues`);
    expect(toolsIssues.map((request) => request.query.get('updated_after') ?? request.query.get('per_page'))).toEqual([first.cursor!.projects[tools.id]!.issues.since, '1']);

    server.omitTotals = true;
    vpn.notes = [];
    handbook.issues.delete(vpn.iid);
    const after = await run({ cursor: unchanged.cursor });
    expect(after.deletes).toEqual([`issue:${handbook.id}:2`]);
    expect(after.keeps).toEqual(expect.arrayContaining([`issue:${handbook.id}:1`, `issue:${handbook.id}:3`, `issue:${tools.id}:1`]));
  });

  it("honours a 429's Retry-After: the request is sent again after the wait GitLab asked for, and the run is complete", async () => {
    server.interruptions.push({ path: new RegExp(`^/api/v4/projects/${handbook.id}/merge_requests$`), status: 429, retryAfter: '7' });

    const result = await run();

    expect(sleeps).toContain(7000);
    const listings = server.requestsTo(new RegExp(`^/api/v4/projects/${handbook.id}/merge_requests$`));
    expect(listings.map((request) => request.status)).toEqual([429, 200]);
    expect(listings[1]!.query.toString()).toBe(listings[0]!.query.toString());
    expect(countByType(result.entities)).toEqual({ project: 2, issue: 4, merge_request: 2, note: 4, wiki_page: 2, file: 3 });
  });

  it('resumes a run that failed half-way from its last checkpoint: what was done is not read again', async () => {
    const p = handbook.id;
    server.interruptions.push({ path: new RegExp(`^/api/v4/projects/${p}/merge_requests$`), status: 403, body: '{"message":"403 Forbidden"}' });
    const checkpoints: GitLabCursor[] = [];

    const failure = await rejection(run({ checkpoints }));
    expect(failure).toBeInstanceOf(SourceHttpError);
    const checkpoint = checkpoints.at(-1)!;
    expect(checkpoint.done).toEqual([]);
    expect(Object.keys(checkpoint.projects[p]!.issues.items).sort()).toEqual(['1', '2', '3']);
    const mark = server.requests.length;

    const resumed = await run({ cursor: checkpoint, resuming: true });

    expect(resumed.complete).toBe(false);
    const requests = since(mark);
    // The issues are listed from the checkpoint's mark on: the one at the mark is unchanged, so kept without reading its comments.
    const issueListings = requests.filter((request) => request.path === `/api/v4/projects/${p}/issues`);
    expect(issueListings[0]!.query.get('updated_after')).toBe(checkpoint.projects[p]!.issues.since);
    expect(requests.some((request) => /\/issues\/\d+\/notes$/.test(request.path) && request.path.includes(`/projects/${p}/`))).toBe(false);
    expect(resumed.ids.filter((id) => id.startsWith(`issue:${p}:`))).toEqual([]);
    expect(resumed.keeps.filter((id) => id.startsWith(`issue:${p}:`))).toEqual([`issue:${p}:1`, `issue:${p}:2`, `issue:${p}:3`]);
    expect(countByType(resumed.entities)).toEqual({ project: 2, issue: 1, merge_request: 2, note: 1, wiki_page: 2, file: 3 });

    // The resumed run's cursor is a finished run's: the next run reads nothing again.
    expect(resumed.cursor!.done).toBeUndefined();
    const next = await run({ cursor: resumed.cursor });
    expect(next.complete).toBe(true);
    expect(next.ids).toEqual([`project:${p}`, `project:${tools.id}`].sort());
  });

  it('refuses an invalid token with CredentialsRejectedError, and no error names the token', async () => {
    const wrong = 'glpat-WrongWrongWrong0000';
    const failure = await rejection(run({ credentials: { access_token: wrong } }));
    expect(failure).toBeInstanceOf(CredentialsRejectedError);
    expect(server.requests.at(-1)).toMatchObject({ status: 401, authorization: `Bearer ${wrong}` });

    const config = configOf();
    const check = await rejection(connector.validate(connectionContext(connector, { config, credentials: { access_token: wrong }, waits: sleeps }), connectorEnvironment()));
    expect(check).toBeInstanceOf(CredentialsRejectedError);

    // A refusal carrying GitLab's body (here a 403 on one listing) names the URL and the body, never the token.
    server.interruptions.push({ path: /\/issues$/, status: 403, body: '{"message":"403 Forbidden"}' });
    const other = await rejection(run());
    expect(other).toBeInstanceOf(SourceHttpError);
    expect(other.message).toContain('403 Forbidden');
    for (const error of [failure, check, other]) {
      expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(wrong);
      expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(TOKEN);
    }
  });

  it('validate: resolves projects by path and by id, and says which project does not exist or cannot be read', async () => {
    const environment = connectorEnvironment();
    const check = (extra: Record<string, unknown>) => {
      const config = configOf(extra);
      const credentials = { access_token: TOKEN };
      return connector.validate(connectionContext(connector, { config, credentials, waits: sleeps }), environment);
    };
    await expect(check({ projects: ['acme/handbook', String(tools.id)] })).resolves.toBeUndefined();
    expect(server.requestsTo(/^\/api\/v4\/projects\/acme%2Fhandbook$/)).toHaveLength(1);

    for (const missing of ['acme/nothing-here', 'other/secret']) {
      const error = await rejection(check({ projects: [missing] }));
      expect(error).toBeInstanceOf(SourceConfigError);
      expect((error as SourceConfigError).field).toBe('projects');
      expect(error.message).toContain(missing);
    }
    const notGitLab = await rejection(check({ base_url: `${server.url}/not-gitlab` }));
    expect(notGitLab).toBeInstanceOf(SourceConfigError);
    expect((notGitLab as SourceConfigError).field).toBe('base_url');
  });

  it('syncs only the configured projects, each once, and deletes what belonged to a project no longer configured', async () => {
    const both = await run({ config: configOf({ projects: ['acme/handbook', String(handbook.id), 'acme/platform/tools'] }) });
    expect(both.ids.filter((id) => id.startsWith('project:'))).toEqual([`project:${handbook.id}`, `project:${tools.id}`].sort());

    const one = await run({ config: configOf({ projects: ['acme/handbook'] }), cursor: both.cursor });
    expect(one.ids).toEqual([`project:${handbook.id}`]);
    expect(one.deletes).toEqual([`issue:${tools.id}:1`, `project:${tools.id}`]);
  });

  it("works with an OAuth token from GitLab's token endpoint (PKCE), refreshes it when it expires, and the rotated refresh token replaces the old one", async () => {
    if (connector.auth.kind !== 'oauth2') throw new Error('gitlab signs in with OAuth');
    const spec = connector.auth.oauth;
    const config = parsedConfig(connector, configOf({ projects: ['acme/platform/tools'] }));
    expect(spec.authorizeUrl(config)).toBe(`${server.url}/oauth/authorize`);
    const client = server.oauth.registerApp(REDIRECT_URI);
    const verifier = randomBytes(32).toString('base64url');
    const code = server.oauth.approve(client.clientId, REDIRECT_URI, createHash('sha256').update(verifier).digest('base64url'));
    const exchange = (grant: Parameters<typeof requestTokens>[0]['grant']) => requestTokens({ spec, config, client: { clientId: client.clientId, clientSecret: client.clientSecret }, grant, allowPrivateNetworks: true });

    // A wrong PKCE verifier is refused; the right one gets tokens, once.
    expect(await rejection(exchange({ type: 'authorization_code', code, redirectUri: REDIRECT_URI, codeVerifier: 'x'.repeat(43) }))).toBeInstanceOf(TokenRequestRefusedError);
    let tokens: TokenSet = await exchange({ type: 'authorization_code', code, redirectUri: REDIRECT_URI, codeVerifier: verifier });
    expect(tokens.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 7000_000);
    expect(await rejection(exchange({ type: 'authorization_code', code, redirectUri: REDIRECT_URI, codeVerifier: verifier }))).toBeInstanceOf(TokenRequestRefusedError);

    // A stand-in for the platform's token provider: the current tokens, refreshed at the token endpoint when GitLab refuses them.
    const provider: TokenProvider = {
      accessToken: async () => tokens.accessToken,
      refreshAfterRejection: async (rejected) => {
        if (rejected === tokens.accessToken) tokens = await exchange({ type: 'refresh_token', refreshToken: tokens.refreshToken! });
        return tokens.accessToken;
      },
    };
    const firstAccess = tokens.accessToken;
    const firstRefresh = tokens.refreshToken!;
    server.expire(firstAccess);

    const result = await run({ config: configOf({ projects: ['acme/platform/tools'] }), tokens: provider });

    expect(countByType(result.entities)).toEqual({ project: 1, issue: 1 });
    expect(tokens.accessToken).not.toBe(firstAccess);
    expect(tokens.refreshToken).not.toBe(firstRefresh);
    const api = server.requests.filter((request) => request.path.startsWith('/api/v4/'));
    expect(api[0]).toMatchObject({ status: 401, authorization: `Bearer ${firstAccess}` });
    expect(api.slice(1).every((request) => request.authorization === `Bearer ${tokens.accessToken}` && request.status === 200)).toBe(true);
    const refused = await rejection(exchange({ type: 'refresh_token', refreshToken: firstRefresh }));
    expect(refused).toBeInstanceOf(TokenRequestRefusedError);
    expect((refused as TokenRequestRefusedError).error).toBe('invalid_grant');
  });

  it("declares GitLab's OAuth endpoints and scopes, sends the token only to the instance's origin, and refuses a base URL that is not http(s)", () => {
    if (connector.auth.kind !== 'oauth2') throw new Error('gitlab signs in with OAuth');
    const config = parsedConfig(connector, {});
    expect(config.base_url).toBe('https://gitlab.com');
    expect(connector.auth.oauth.tokenUrl(config)).toBe('https://gitlab.com/oauth/token');
    expect(connector.auth.oauth).toMatchObject({ scopes: ['read_api', 'read_repository'], pkce: true, refresh: 'rotating', clientAuthentication: 'body' });
    expect(connector.credentialTargets(parsedConfig(connector, { base_url: 'https://git.example.com/gitlab/' }), null)).toEqual(['https://git.example.com']);
    expect(parseConfig(connector, { base_url: 'ftp://git.example.com' }).issues.map((issue) => issue.loc)).toEqual([['config', 'base_url']]);
    expect(parseConfig(connector, { projects: 'acme/handbook' }).issues.map((issue) => issue.type)).toEqual(['list_type']);
    // The catalog's fields, derived from the schemas.
    const fields = describeSchema(connector.config).fields;
    expect(fields.map((field) => [field.name, field.type, field.required])).toEqual([
      ['base_url', 'string', false],
      ['projects', 'array', false],
      ['include_issues', 'boolean', false],
      ['include_merge_requests', 'boolean', false],
      ['include_notes', 'boolean', false],
      ['include_wiki', 'boolean', false],
      ['include_files', 'boolean', false],
      ['max_file_bytes', 'integer', false],
    ]);
    expect(fields[1]!.itemsType).toBe('string');
    expect(describeSchema(connector.auth.pasted!.credentials).fields).toMatchObject([{ name: 'access_token', type: 'string', required: true, isSecret: true }]);
  });
});
