import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { requestTokens } from '../../modules/connections/oauth/token-endpoint.js';
import { CredentialsRejectedError, SourceConfigError, TemporarilyUnavailableError } from '../connector.js';
import { collectRun, connectionContext, connectorEnvironment, parsedConfig, rejection } from '../connector-testing.js';
import { describeSchema, parseConfig } from '../contract/schemas.js';
import type { TokenProvider } from '../contract/source-http.js';
import connector from './index.js';
import type { GitHubCredentials, GitHubCursor } from './schemas.js';
import type { FakeIssue, FakeRepository } from './test-github-data.js';
import { TestGitHubServer } from './test-github-server.js';

const PAT = 'ghp_pastedPersonalAccessToken0123456789';

let github: TestGitHubServer;
let widgets: FakeRepository;
let secret: FakeRepository;
let crash: FakeIssue;
let fix: FakeIssue;
/** The waits the HTTP client took (retries and pacing), recorded instead of slept. */
let waits: number[];

beforeEach(async () => {
  github = await new TestGitHubServer().start();
  github.tokens.add(PAT);
  waits = [];
  secret = github.addRepository('acme/secret', { private: true, has_discussions: false });
  github.addIssue(secret, { title: 'Rotate the signing keys', body: 'Before the audit.' });
  widgets = github.addRepository('acme/widgets');
  crash = github.addIssue(widgets, { title: 'Crash on start', body: 'The app crashes when the cache is empty.', labels: ['bug'] });
  fix = github.addIssue(widgets, { title: 'Fix the crash on start', body: 'Warms the cache first.', pull: true });
  github.addComment(widgets, crash, 'Seen on Linux too.');
  github.addComment(widgets, fix, 'Can we add a test?');
  github.addReviewComment(widgets, fix, 'src/app.ts', 'Name this constant.');
  github.addReview(widgets, fix, 'APPROVED', 'Looks good.');
  github.addReview(widgets, fix, 'PENDING', 'draft, unseen');
  github.addRelease(widgets, 'v1.0', 'First release', 'Cache warming.');
  github.addDiscussion(widgets, 'Roadmap', 'What comes after 1.0?', [{ user: 'hubot', body: 'Plugins.' }]);
  widgets.files.set('README.md', Buffer.from('# Widgets\n\nWidgets for everyone.'));
  widgets.files.set('src/app.ts', Buffer.from('export const start = () => warmCache();\n'));
  widgets.files.set('docs/guide.md', Buffer.from('# Guide\n\nStart the app.'));
  widgets.files.set('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
});
afterEach(() => github.stop());

const baseConfig = () => ({ api_url: github.apiUrl });

/** A run with the platform's HTTP client, waits recorded instead of slept. */
function sync(options: { config?: Record<string, unknown>; credentials?: GitHubCredentials | null; tokens?: TokenProvider | null; cursor?: GitHubCursor | null; resuming?: boolean; checkpoints?: GitHubCursor[] } = {}) {
  const tokens = options.tokens ?? null;
  const credentials = tokens ? null : (options.credentials ?? { personal_access_token: PAT });
  return collectRun(connector, { config: options.config ?? baseConfig(), credentials, tokens, waits, cursor: options.cursor ?? null, resuming: options.resuming ?? false, checkpoints: options.checkpoints });
}

function countByType(entities: { entityType: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { entityType } of entities) counts[entityType] = (counts[entityType] ?? 0) + 1;
  return counts;
}
const apiRequests = () => github.requests.filter((request) => request.path !== '/login/oauth/access_token');

describe('github connector against a local server speaking GitHub\'s REST, GraphQL and OAuth APIs', () => {
  test('first sync: every kind with exact counts, breadcrumbs, web_url and visibility; requests carry the documented headers and the pasted token', async () => {
    github.maxPerPage = 1; // the listings page
    const run = await sync();
    expect(run.complete).toBe(true);
    expect(countByType(run.entities)).toEqual({ repository: 2, issue: 2, pull_request: 1, comment: 3, review: 1, discussion: 1, release: 1, file: 3 });
    expect(run.ids).toEqual(
      [
        'acme/secret',
        'acme/secret/issues/1',
        'acme/widgets',
        'acme/widgets/issues/1',
        'acme/widgets/pull/2',
        `acme/widgets/issues/comments/${widgets.comments[0]!.id}`,
        `acme/widgets/issues/comments/${widgets.comments[1]!.id}`,
        `acme/widgets/pulls/comments/${widgets.reviewComments[0]!.id}`,
        `acme/widgets/pull/2/reviews/${widgets.reviews.get(2)![0]!.id}`,
        `acme/widgets/discussions/${widgets.discussions[0]!.number}`,
        `acme/widgets/releases/${widgets.releases[0]!.id}`,
        'acme/widgets/files/README.md',
        'acme/widgets/files/docs/guide.md',
        'acme/widgets/files/src/app.ts',
      ].sort(),
    );
    const owner = { entityId: 'acme', name: 'acme', entityType: 'owner' };
    const repository = { entityId: 'acme/widgets', name: 'widgets', entityType: 'repository' };
    expect(run.byId.get(`acme/widgets/issues/comments/${widgets.comments[0]!.id}`)).toMatchObject({
      entityType: 'comment',
      text: 'Seen on Linux too.',
      breadcrumbs: [owner, repository, { entityId: 'acme/widgets/issues/1', name: 'Crash on start', entityType: 'issue' }],
      webUrl: `${github.url}/acme/widgets/issues/1#issuecomment-${widgets.comments[0]!.id}`,
      access: { viewers: null, isPublic: true },
    });
    expect(run.byId.get(`acme/widgets/pulls/comments/${widgets.reviewComments[0]!.id}`)!.breadcrumbs[2]).toEqual({ entityId: 'acme/widgets/pull/2', name: 'Fix the crash on start', entityType: 'pull_request' });
    expect(run.byId.get('acme/widgets/issues/1')).toMatchObject({ name: 'Crash on start', breadcrumbs: [owner, repository], webUrl: `${github.url}/acme/widgets/issues/1`, fields: expect.objectContaining({ labels: ['bug'], state: 'open' }) });
    expect(run.byId.get('acme/widgets/pull/2')).toMatchObject({ entityType: 'pull_request', webUrl: `${github.url}/acme/widgets/pull/2`, fields: { number: 2, merged_at: null, draft: false } });
    expect(run.byId.get('acme/widgets/issues/1')!.fields).toMatchObject({ number: 1, labels: ['bug'], comments: 1 });
    expect(run.byId.get('acme/widgets/issues/1')!.fields).not.toHaveProperty('draft');
    expect(run.byId.get('acme/widgets/files/src/app.ts')).toMatchObject({ webUrl: `${github.url}/acme/widgets/blob/main/src/app.ts`, language: 'typescript', text: 'export const start = () => warmCache();\n' });
    expect(run.byId.get(`acme/widgets/discussions/${widgets.discussions[0]!.number}`)!.text).toBe('Roadmap\n\nWhat comes after 1.0?\n\nhubot: Plugins.');
    expect(run.byId.get('acme/widgets')).toMatchObject({ breadcrumbs: [owner], webUrl: `${github.url}/acme/widgets` });
    expect(run.byId.get('acme/secret/issues/1')!.access).toEqual({ viewers: null, isPublic: false });
    expect(run.skipped).toEqual([{ entityId: 'acme/widgets/files/logo.png', reason: 'unsupported file type' }]);

    const rest = apiRequests().filter((request) => request.path !== '/api/graphql');
    expect(rest.every((request) => request.accept === 'application/vnd.github+json' || request.accept === 'application/vnd.github.raw+json')).toBe(true);
    expect(apiRequests().every((request) => request.apiVersion === '2022-11-28' && request.authorization === `Bearer ${PAT}` && [200, 409].includes(request.status))).toBe(true);
    // Pages after the first are followed by their Link; the secret repository has no tree yet (409).
    expect(rest.filter((request) => request.path === '/user/repos').map((request) => request.query.get('page'))).toEqual([null, '2']);
    // Listings by update time ask from the last item read on; a page holding only items already
    // read (here: one a page) is followed by its Link instead.
    const issueListings = rest.filter((request) => request.path === '/repos/acme/widgets/issues');
    expect(issueListings.map(({ query }) => [query.get('since'), query.get('page')])).toEqual([
      [null, null],
      [crash.updated_at, null],
      [crash.updated_at, '2'],
    ]);
    expect(rest.find((request) => request.path === '/repos/acme/secret/git/trees/main')!.status).toBe(409);
    // Discussions are asked for only where the repository has them.
    expect(apiRequests().filter((request) => request.path === '/api/graphql').map((request) => request.variables)).toEqual([{ owner: 'acme', name: 'widgets', first: 25, after: null }]);
  });

  test('incremental re-sync: exactly what was edited, added or deleted comes, unchanged files and releases are kept, and a quiet re-sync yields only the repositories', async () => {
    const first = await sync();
    github.edit(crash, { title: 'Crash on cold start' });
    const comment = github.addComment(widgets, fix, 'Added the test.');
    widgets.files.set('src/app.ts', Buffer.from('export const start = async () => await warmCache();\n'));
    widgets.files.delete('docs/guide.md');
    widgets.files.set('notes.md', Buffer.from('# Notes'));
    const [oldRelease] = widgets.releases.splice(0, 1);
    const release = github.addRelease(widgets, 'v2.0', 'Second release', 'Plugins.');
    github.edit(widgets.discussions[0]!, { body: 'What comes after 2.0?' });
    github.requests.length = 0;

    const second = await sync({ cursor: first.cursor });
    expect(second.complete).toBe(false);
    expect(second.ids).toEqual(
      [
        'acme/secret',
        'acme/widgets',
        'acme/widgets/issues/1',
        'acme/widgets/pull/2', // its new comment moved it on
        `acme/widgets/pull/2/reviews/${widgets.reviews.get(2)![0]!.id}`, // read again with its pull request
        `acme/widgets/issues/comments/${comment.id}`,
        `acme/widgets/discussions/${widgets.discussions[0]!.number}`,
        `acme/widgets/releases/${release.id}`,
        'acme/widgets/files/notes.md',
        'acme/widgets/files/src/app.ts',
      ].sort(),
    );
    expect(second.byId.get('acme/widgets/issues/1')!.name).toBe('Crash on cold start');
    expect(second.keeps).toEqual(['acme/widgets/files/README.md']);
    expect(second.deletes).toEqual(['acme/widgets/files/docs/guide.md', `acme/widgets/releases/${oldRelease!.id}`].sort());
    // The listings start at the marks of the first run.
    const issueListing = github.requests.find((request) => request.path === '/repos/acme/widgets/issues')!;
    expect(issueListing.query.get('since')).toBe(first.cursor!.repositories['acme/widgets']!.issues!.at);
    expect(Object.fromEntries(issueListing.query)).toMatchObject({ state: 'all', sort: 'updated', direction: 'asc', per_page: '100' });

    const third = await sync({ cursor: second.cursor });
    expect(third.ids).toEqual(['acme/secret', 'acme/widgets']);
    expect(third.keeps).toEqual(['acme/widgets/files/README.md', 'acme/widgets/files/notes.md', 'acme/widgets/files/src/app.ts', `acme/widgets/releases/${release.id}`].sort());
    expect(third.deletes).toEqual([]);
  });

  test('a repository no longer synced, or another selection of kinds, makes the run a full one that is complete', async () => {
    const first = await sync();
    const narrowed = await sync({ config: { ...baseConfig(), repositories: ['acme/widgets'] }, cursor: first.cursor });
    expect(narrowed.complete).toBe(true);
    expect(narrowed.ids).toContain('acme/widgets/issues/1');
    const fewerKinds = await sync({ config: { ...baseConfig(), include_files: false }, cursor: first.cursor });
    expect(fewerKinds.complete).toBe(true);
    expect(fewerKinds.ids.filter((id) => id.includes('/files/'))).toEqual([]);
  });

  test('a secondary rate limit (403 with Retry-After) and a 429 are waited out as asked, and the run is whole', async () => {
    github.interruptions.push({ status: 403, retryAfter: '3', path: /^\/repos\/acme\/widgets\/issues$/ }, { status: 429, retryAfter: '2', path: /\/git\/trees\// });
    const run = await sync();
    expect(waits).toEqual(expect.arrayContaining([3000, 2000]));
    const issueListings = github.requests.filter((request) => request.path === '/repos/acme/widgets/issues');
    expect(issueListings.map((request) => request.status)).toEqual([403, 200]);
    expect(github.requests.filter((request) => request.path === '/repos/acme/secret/git/trees/main').map((request) => request.status)).toEqual([429, 409]);
    expect(run.complete).toBe(true);
    expect(run.entities).toHaveLength(14);
  });

  test('a run failing half-way resumes from its last checkpoint: listings read before it are asked from their marks, and nothing read before comes again', async () => {
    github.maxPerPage = 1;
    github.interruptions.push({ status: 502, path: /^\/repos\/acme\/widgets\/pulls\/comments$/, times: 5 });
    const checkpoints: GitHubCursor[] = [];
    const failure = await rejection(sync({ checkpoints }));
    expect(failure).toBeInstanceOf(TemporarilyUnavailableError);
    const last = checkpoints.at(-1)!;
    expect(last.repositories['acme/widgets']).toMatchObject({ issues: { at: fix.updated_at, ids: [String(fix.id)] }, issue_comments: { ids: [String(widgets.comments[1]!.id)] }, review_comments: null });
    github.requests.length = 0;

    const resumed = await sync({ cursor: last, resuming: true });
    expect(resumed.complete).toBe(false);
    // Issues, pull requests and issue comments were read before the checkpoint.
    expect(resumed.ids).toEqual(
      [
        'acme/secret',
        'acme/widgets',
        `acme/widgets/pulls/comments/${widgets.reviewComments[0]!.id}`,
        `acme/widgets/discussions/${widgets.discussions[0]!.number}`,
        `acme/widgets/releases/${widgets.releases[0]!.id}`,
        'acme/widgets/files/README.md',
        'acme/widgets/files/docs/guide.md',
        'acme/widgets/files/src/app.ts',
      ].sort(),
    );
    const issueListings = github.requests.filter((request) => request.path === '/repos/acme/widgets/issues');
    expect(issueListings.map((request) => request.query.get('since'))).toEqual([fix.updated_at]);
    expect(github.requests.filter((request) => request.path === '/repos/acme/widgets/pulls/comments').map((request) => request.query.get('since'))).toEqual([null]);
  });

  test('discussions are read newest first down to the last mark; a run stopped between two pages continues after the page it read', async () => {
    for (let n = 0; n < 30; n++) github.addDiscussion(widgets, `Idea ${n}`, `Idea number ${n}.`);
    github.interruptions.push({ status: 502, path: /^\/api\/graphql$/, pass: 1, times: 5 });
    const checkpoints: GitHubCursor[] = [];
    expect(await rejection(sync({ config: { ...baseConfig(), repositories: ['acme/widgets'] }, checkpoints }))).toBeInstanceOf(TemporarilyUnavailableError);
    const newest = widgets.discussions.at(-1)!;
    const stopped = checkpoints.at(-1)!.repositories['acme/widgets']!;
    expect(stopped).toMatchObject({ discussions: null, discussions_pending: { after: expect.any(String), top: { at: newest.updated_at, ids: [newest.id] } } });
    github.requests.length = 0;

    const resumed = await sync({ config: { ...baseConfig(), repositories: ['acme/widgets'] }, cursor: checkpoints.at(-1)!, resuming: true });
    const graphql = github.requests.filter((request) => request.path === '/api/graphql');
    expect(graphql.map((request) => request.variables!.after)).toEqual([stopped.discussions_pending!.after]);
    // 31 discussions, 25 a page: the six oldest remain.
    expect(resumed.ids.filter((id) => id.includes('/discussions/'))).toHaveLength(6);
    expect(resumed.cursor!.repositories['acme/widgets']).toMatchObject({ discussions: { at: newest.updated_at, ids: [newest.id] }, discussions_pending: null });

    github.edit(widgets.discussions[3]!, { title: 'Idea 2, revised' });
    github.requests.length = 0;
    const again = await sync({ config: { ...baseConfig(), repositories: ['acme/widgets'] }, cursor: resumed.cursor });
    expect(again.ids.filter((id) => id.includes('/discussions/'))).toEqual([`acme/widgets/discussions/${widgets.discussions[3]!.number}`]);
    expect(github.requests.filter((request) => request.path === '/api/graphql')).toHaveLength(1);
  });

  test('an invalid token is CredentialsRejectedError, for a sync and a check, and the token is never in the error', async () => {
    const wrong = 'ghp_revokedTokenThatMustNotLeak';
    const error = await rejection(sync({ credentials: { personal_access_token: wrong } }));
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(github.requests[0]).toMatchObject({ status: 401, authorization: `Bearer ${wrong}` });
    const checked = await rejection(connector.validate(connectionContext(connector, { config: baseConfig(), credentials: { personal_access_token: wrong } }), connectorEnvironment()));
    expect(checked).toBeInstanceOf(CredentialsRejectedError);
    for (const caught of [error, checked]) expect(`${caught.message} ${caught.stack} ${JSON.stringify(caught)}`).not.toContain(wrong);
  });

  test('validation names an unknown repository and a URL without a GitHub API, without the token', async () => {
    const check = (config: Record<string, unknown>) => connector.validate(connectionContext(connector, { config, credentials: { personal_access_token: PAT } }), connectorEnvironment());
    await expect(check({ ...baseConfig(), repositories: ['acme/widgets'] })).resolves.toBeUndefined();
    const unknown = await rejection(check({ ...baseConfig(), repositories: ['acme/gone'] }));
    expect(unknown).toBeInstanceOf(SourceConfigError);
    expect(unknown).toMatchObject({ field: 'repositories', message: 'acme/gone: no such repository, or the token cannot see it' });
    const elsewhere = await rejection(check({ api_url: `${github.url}/not-github` }));
    expect(elsewhere).toMatchObject({ field: 'api_url' });
    expect(elsewhere.message).not.toContain(PAT);
  });

  test('an OAuth app\'s code, exchanged at the token endpoint with the client in the form and PKCE, gives a token the API takes as a Bearer token', async () => {
    github.oauth.apps.set('Iv1.client', 'client-secret');
    const verifier = randomBytes(32).toString('base64url');
    github.oauth.codes.set('code-123', { clientId: 'Iv1.client', redirectUri: 'https://catchment.example/callback', codeChallenge: createHash('sha256').update(verifier).digest('base64url') });
    const config = parsedConfig(connector, baseConfig());
    if (connector.auth.kind !== 'oauth2') throw new Error('github signs in with OAuth');
    expect(connector.auth.oauth.tokenUrl(config)).toBe(`${github.url}/login/oauth/access_token`);
    const tokens = await requestTokens({
      spec: connector.auth.oauth,
      config,
      client: { clientId: 'Iv1.client', clientSecret: 'client-secret' },
      grant: { type: 'authorization_code', code: 'code-123', redirectUri: 'https://catchment.example/callback', codeVerifier: verifier },
      allowPrivateNetworks: true,
    });
    expect(tokens).toMatchObject({ accessToken: expect.stringMatching(/^gho_/), refreshToken: null, expiresAt: null });
    // OAuth app tokens do not expire: the provider hands out the one token it has.
    const provider: TokenProvider = { accessToken: async () => tokens.accessToken, refreshAfterRejection: async () => Promise.reject(new CredentialsRejectedError('no refresh')) };
    const run = await sync({ config: { ...baseConfig(), repositories: ['acme/secret'] }, tokens: provider });
    expect(run.ids).toEqual(['acme/secret', 'acme/secret/issues/1']);
    expect(apiRequests().every((request) => request.authorization === `Bearer ${tokens.accessToken}`)).toBe(true);
  });
});

describe('github config', () => {
  test('defaults, the catalog fields, OAuth endpoints on github.com and Enterprise, and credential targets', () => {
    const config = parsedConfig(connector, {});
    expect(config).toMatchObject({ repositories: [], api_url: 'https://api.github.com', include_files: true, max_file_bytes: 1024 * 1024 });
    if (connector.auth.kind !== 'oauth2') throw new Error('github signs in with OAuth');
    expect(connector.auth.oauth.authorizeUrl(config)).toBe('https://github.com/login/oauth/authorize');
    const enterprise = parsedConfig(connector, { api_url: 'https://git.example.com/api/v3/' });
    expect(enterprise.api_url).toBe('https://git.example.com/api/v3');
    expect(connector.auth.oauth.authorizeUrl(enterprise)).toBe('https://git.example.com/login/oauth/authorize');
    expect(connector.credentialTargets(enterprise, null)).toEqual(['https://git.example.com']);
    expect(connector.credentialTargets(config, null)).toEqual(['https://api.github.com']);
    expect(describeSchema(connector.config).fields.map((field) => field.name)).toEqual([
      'repositories',
      'include_issues',
      'include_pull_requests',
      'include_comments',
      'include_reviews',
      'include_discussions',
      'include_releases',
      'include_files',
      'max_file_bytes',
      'api_url',
    ]);
  });

  test('a repository not named owner/name and an api_url that is not a URL are 422 items on their fields', () => {
    expect(parseConfig(connector, { repositories: ['widgets'], api_url: 'ftp://x' }).issues).toEqual([
      { loc: ['config', 'repositories', 0], msg: 'Must be "owner/name"', type: 'string_pattern_mismatch' },
      expect.objectContaining({ loc: ['config', 'api_url'], type: 'value_error' }),
    ]);
  });
});
