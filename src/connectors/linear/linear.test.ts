import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { requestTokens, TokenRequestRefusedError } from '../../modules/connections/oauth/token-endpoint.js';
import { CredentialsRejectedError, SourceRateLimitedError, SourceConfigError, SourceHttpError } from '../connector.js';
import { collectRun, connectionContext, connectorEnvironment, rejection } from '../connector-testing.js';
import type { OAuth2Spec } from '../contract/auth.js';
import { credentialsSchemaOf, describeSchema, parseConfig } from '../contract/schemas.js';
import type { TokenProvider } from '../contract/source-http.js';
import { rateLimitWaitMs } from './graphql.js';
import connector from './index.js';
import type { LinearCursor } from './sync.js';
import { type IssueRecord, TestLinearServer } from './test-linear-server.js';

const API_KEY = 'lin_api_catchment_test_0042';
const typeCounts = (entities: { entityType: string }[]) => {
  const counts: Record<string, number> = {};
  for (const { entityType } of entities) counts[entityType] = (counts[entityType] ?? 0) + 1;
  return counts;
};

/** A small workspace: two teams, a project each, three issues, three comments, two documents. */
function fill(linear: TestLinearServer) {
  const eng = linear.addTeam({ name: 'Engineering', key: 'ENG', description: 'Builds the telescope software.' });
  const design = linear.addTeam({ name: 'Design', key: 'DES' });
  const telescope = linear.addProject({ name: 'Telescope', teamIds: [eng.id], description: 'Mount control', content: '## Goals\n\nTrack stars all night.', status: 'In Progress', lead: 'Ada Lovelace' });
  const website = linear.addProject({ name: 'Website', teamIds: [design.id] });
  const calibrate = linear.addIssue({
    teamId: eng.id,
    projectId: telescope.id,
    title: 'Calibrate the mirror',
    description: '## Steps\n\n- Clean the mirror\n- Align it with **Polaris**',
    state: { name: 'In Progress', type: 'started' },
    priority: 2,
    assignee: 'Grace Hopper',
    creator: 'Ada Lovelace',
    labels: ['optics', 'hardware'],
  });
  const logs = linear.addIssue({ teamId: eng.id, title: 'Rotate the logs' });
  const logo = linear.addIssue({ teamId: design.id, projectId: website.id, title: 'Draw the logo' });
  const comments = {
    first: linear.addComment({ issueId: calibrate.id, body: 'Polaris drifts by a degree.', user: 'Grace Hopper' }),
    second: linear.addComment({ issueId: calibrate.id, body: 'Use the laser collimator.' }),
    logo: linear.addComment({ issueId: logo.id, body: 'Make it round.' }),
  };
  const spec = linear.addDocument({ title: 'Telescope spec', content: '# Spec\n\nAperture: 200 mm.', projectId: telescope.id, creator: 'Ada Lovelace' });
  const guide = linear.addDocument({ title: 'Style guide', content: 'Blue and gold.', projectId: website.id });
  return { eng, design, telescope, website, calibrate, logs, logo, comments, spec, guide };
}

/** OAuth 2 on the fake: the client registered, a user's approval, the code exchanged by the platform's token client. */
async function signIn(linear: TestLinearServer) {
  linear.clients.set('catchment-client', 'catchment-secret');
  const config = { api_url: linear.url };
  const spec = connector.auth.kind === 'oauth2' ? (connector.auth.oauth as OAuth2Spec<unknown>) : null;
  const verifier = 'v'.repeat(64);
  const code = linear.authorize('catchment-client', 'http://127.0.0.1/callback', createHash('sha256').update(verifier).digest('base64url'));
  const client = { clientId: 'catchment-client', clientSecret: 'catchment-secret' };
  const tokens = await requestTokens({ spec: spec!, config: { ...config, include_comments: true, include_documents: true, page_size: 50 }, client, grant: { type: 'authorization_code', code, redirectUri: 'http://127.0.0.1/callback', codeVerifier: verifier }, allowPrivateNetworks: true });
  let current = tokens;
  const refreshes: string[] = [];
  /** What the platform's token provider does, minus the database: refresh on demand, keep the rotated refresh token. */
  const provider: TokenProvider = {
    accessToken: async () => current.accessToken,
    refreshAfterRejection: async (rejected) => {
      if (rejected !== current.accessToken) return current.accessToken;
      refreshes.push(rejected);
      current = await requestTokens({ spec: spec!, config: { ...config, include_comments: true, include_documents: true, page_size: 50 }, client, grant: { type: 'refresh_token', refreshToken: current.refreshToken! }, allowPrivateNetworks: true });
      return current.accessToken;
    },
  };
  return { first: tokens, provider, refreshes, current: () => current, spec: spec!, client };
}

describe("linear connector against a local server speaking Linear's GraphQL API", () => {
  let linear: TestLinearServer;
  let workspace: ReturnType<typeof fill>;
  const sync = (options: { cursor?: LinearCursor | null; resuming?: boolean; config?: Record<string, unknown>; key?: string; checkpoints?: LinearCursor[]; waits?: number[] } = {}) =>
    collectRun(connector, {
      waits: options.waits,
      config: { api_url: linear.url, ...options.config },
      credentials: { api_key: options.key ?? API_KEY },
      cursor: options.cursor ?? null,
      resuming: options.resuming ?? false,
      ...(options.checkpoints ? { checkpoints: options.checkpoints } : {}),
    });

  beforeEach(async () => {
    linear = await new TestLinearServer().start();
    linear.apiKeys.add(API_KEY);
    workspace = fill(linear);
  });
  afterEach(() => linear.stop());

  test('first sync with an API key: every team, project, issue, comment and document, the key sent without Bearer', async () => {
    const run = await sync();
    expect(run.complete).toBe(true);
    expect(typeCounts(run.entities)).toEqual({ team: 2, project: 2, document: 2, issue: 3, comment: 3 });
    expect(linear.graphqlRequests().map((request) => request.operation)).toEqual([
      'Catchment_organization',
      'Catchment_teams',
      'Catchment_projects',
      'Catchment_documents',
      'Catchment_issues',
      'Catchment_comments',
    ]);
    expect(linear.graphqlRequests().every((request) => request.authorization === API_KEY && request.status === 200)).toBe(true);
    // A full listing leaves archived nodes out (their absence deletes them).
    expect(linear.graphqlRequests('Catchment_issues')[0]!.variables).toMatchObject({ first: 50, after: null, includeArchived: false, filter: {} });
    expect(run.cursor).toMatchObject({ version: 1, api_url: linear.url, workspace: linear.organization.id, resume: null, since: { issues: workspace.logo.updatedAt, comments: workspace.comments.logo.updatedAt } });
  });

  test('entities: team → project → issue breadcrumbs, web URLs from Linear, Markdown text with state, priority, assignee and labels', async () => {
    const run = await sync();
    const { eng, telescope, calibrate, comments, spec } = workspace;
    const issue = run.byId.get(`issue:${calibrate.id}`)!;
    expect(issue).toMatchObject({
      entityType: 'issue',
      name: 'ENG-1 Calibrate the mirror',
      webUrl: 'https://linear.app/observatory/issue/ENG-1/calibrate-the-mirror',
      breadcrumbs: [
        { entityId: `team:${eng.id}`, name: 'Engineering', entityType: 'team' },
        { entityId: `project:${telescope.id}`, name: 'Telescope', entityType: 'project' },
      ],
      fields: expect.objectContaining({ identifier: 'ENG-1', state: 'In Progress', priority: 2, priority_label: 'High', assignee: 'Grace Hopper', labels: ['optics', 'hardware'], team_key: 'ENG' }),
    });
    expect(issue.text).toContain('# ENG-1: Calibrate the mirror');
    expect(issue.text).toContain('Align it with **Polaris**');
    expect(issue.text).toContain('Labels: optics, hardware');
    expect(issue.updatedAt!.toISOString()).toBe(calibrate.updatedAt);

    expect(run.byId.get(`comment:${comments.first.id}`)).toMatchObject({
      name: 'Comment on ENG-1 by Grace Hopper',
      webUrl: `https://linear.app/observatory/issue/ENG-1/calibrate-the-mirror#comment-${comments.first.id.slice(0, 8)}`,
      breadcrumbs: [
        { entityId: `team:${eng.id}`, entityType: 'team' },
        { entityId: `project:${telescope.id}`, entityType: 'project' },
        { entityId: `issue:${calibrate.id}`, name: 'ENG-1 Calibrate the mirror', entityType: 'issue' },
      ],
    });
    expect(run.byId.get(`issue:${workspace.logs.id}`)!.breadcrumbs).toEqual([{ entityId: `team:${eng.id}`, name: 'Engineering', entityType: 'team' }]);
    expect(run.byId.get(`team:${eng.id}`)).toMatchObject({ webUrl: 'https://linear.app/observatory/team/ENG', text: '# Engineering (ENG)\n\nBuilds the telescope software.' });
    const project = run.byId.get(`project:${telescope.id}`)!;
    expect(project.text).toContain('Track stars all night.');
    expect(project.fields).toMatchObject({ status: 'In Progress', lead: 'Ada Lovelace' });
    expect(project.webUrl).toMatch(/^https:\/\/linear\.app\/observatory\/project\/telescope-/);
    expect(run.byId.get(`document:${spec.id}`)).toMatchObject({ text: '# Telescope spec\n\n# Spec\n\nAperture: 200 mm.', breadcrumbs: [{ entityId: `team:${eng.id}` }, { entityId: `project:${telescope.id}` }] });
  });

  test('incremental re-sync: only what changed since the last updatedAt per stream, archived and trashed nodes deleted with their comments', async () => {
    const first = await sync();
    const { logs, logo, comments, guide, eng } = workspace;
    linear.update(logs, { title: 'Rotate and compress the logs' });
    const added = linear.addIssue({ teamId: eng.id, title: 'Order a new eyepiece' });
    const addedComment = linear.addComment({ issueId: added.id, body: 'The 25 mm one.' });
    linear.update(comments.second, { body: 'Use the laser collimator, carefully.' });
    linear.archive(logo);
    linear.trash(guide);
    const requestsBefore = linear.requests.length;

    const second = await sync({ cursor: first.cursor });
    expect(second.complete).toBe(false);
    const previous = new Set(first.ids);
    const inserted = second.ids.filter((id) => !previous.has(id));
    const updated = second.ids.filter((id) => previous.has(id));
    expect(inserted.sort()).toEqual([`comment:${addedComment.id}`, `issue:${added.id}`].sort());
    expect(updated.sort()).toEqual([`comment:${comments.second.id}`, `issue:${logs.id}`].sort());
    expect(second.deletes).toEqual([`comment:${comments.logo.id}`, `document:${guide.id}`, `issue:${logo.id}`].sort());
    const kept = first.ids.filter((id) => !second.ids.includes(id) && !second.deletes.includes(id));
    expect(kept).toHaveLength(12 - 2 - 3);
    expect(second.byId.get(`issue:${logs.id}`)!.name).toBe('ENG-2 Rotate and compress the logs');

    const issuesQuery = linear.requests.slice(requestsBefore).find((request) => request.operation === 'Catchment_issues')!;
    expect(issuesQuery.variables).toMatchObject({ includeArchived: true, filter: { updatedAt: { gt: first.cursor!.since.issues } } });

    // Nothing changed since: nothing yielded, one request per stream.
    const marker = linear.requests.length;
    const third = await sync({ cursor: second.cursor });
    expect([third.ids, third.deletes]).toEqual([[], []]);
    expect(linear.requests.slice(marker)).toHaveLength(6);
  });

  test('a cursor of another API URL, workspace or choice of lists says nothing here: everything is read again', async () => {
    const first = await sync();
    const otherApi = await sync({ cursor: { ...first.cursor!, api_url: 'https://api.linear.example' } });
    expect([otherApi.complete, otherApi.entities.length]).toEqual([true, 12]);
    // Comments newly left out: a complete listing, so the indexed ones go.
    const withoutComments = await sync({ cursor: first.cursor, config: { include_comments: false } });
    expect([withoutComments.complete, typeCounts(withoutComments.entities)]).toEqual([true, { team: 2, project: 2, document: 2, issue: 3 }]);
    const otherWorkspace = await sync({ cursor: { ...first.cursor!, workspace: 'another-workspace' } });
    expect([otherWorkspace.complete, otherWorkspace.entities.length]).toEqual([false, 12]);
    expect(otherWorkspace.cursor).toMatchObject({ workspace: linear.organization.id });
  });

  test("Linear's RATELIMITED answer (HTTP 400) is waited out until X-RateLimit-Requests-Reset, then the query is sent again", async () => {
    linear.interruptions.push({ code: 'RATELIMITED', type: 'ratelimited', message: 'Rate limit exceeded', resetInMs: 30_000, when: ({ operation }) => operation === 'Catchment_issues' });
    const waits: number[] = [];
    const run = await sync({ waits });
    // Until the announced reset (half a minute after the answer), not a backoff's second.
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(25_000);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
    const issues = linear.graphqlRequests('Catchment_issues');
    expect(issues.map((request) => [request.status, request.errorCode])).toEqual([
      [400, 'RATELIMITED'],
      [200, null],
    ]);
    expect(issues[1]!.variables).toEqual(issues[0]!.variables);
    expect(typeCounts(run.entities)).toEqual({ team: 2, project: 2, document: 2, issue: 3, comment: 3 });
  });

  test('a rate limit that resets later than a run should wait fails the run with SourceRateLimitedError carrying the wait', async () => {
    linear.rateLimitNext(15 * 60_000);
    const error = await rejection(sync());
    expect(error).toBeInstanceOf(SourceRateLimitedError);
    expect((error as SourceRateLimitedError).retryAfterSeconds).toBeGreaterThan(14 * 60);
    expect((error as SourceRateLimitedError).retryAfterSeconds).toBeLessThanOrEqual(15 * 60);
  });

  test('rateLimitWaitMs reads the reset headers as epoch milliseconds and Retry-After as seconds', () => {
    const now = Date.parse('2025-03-01T00:00:00Z');
    expect(rateLimitWaitMs(new Headers({ 'x-ratelimit-requests-reset': String(now + 1500) }), now)).toBe(1500);
    expect(rateLimitWaitMs(new Headers({ 'x-ratelimit-requests-reset': String(now + 1500), 'x-ratelimit-complexity-reset': String(now + 4000) }), now)).toBe(4000);
    expect(rateLimitWaitMs(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(rateLimitWaitMs(new Headers({ 'x-ratelimit-requests-reset': String(now - 10) }), now)).toBe(0);
    expect(rateLimitWaitMs(new Headers(), now)).toBeNull();
  });

  test('a failure half-way resumes from the last checkpoint: the second run continues after the last page read', async () => {
    const extra: IssueRecord[] = [];
    for (let n = 0; n < 25; n += 1) extra.push(linear.addIssue({ teamId: workspace.eng.id, title: `Star ${n}` }));
    // The third page of issues fails with an error nobody retries.
    let issuePages = 0;
    linear.interruptions.push({ code: 'INTERNAL_SERVER_ERROR', type: 'internal error', message: 'Internal error', when: ({ operation }) => operation === 'Catchment_issues' && ++issuePages === 3 });
    const checkpoints: LinearCursor[] = [];
    const error = await rejection(sync({ config: { page_size: 10 }, checkpoints }));
    expect(error).toBeInstanceOf(SourceHttpError);
    const last = checkpoints.at(-1)!;
    expect(last.resume).toMatchObject({ stream: 'issues' });
    const pagesRead = linear.graphqlRequests('Catchment_issues').filter((request) => request.status === 200);
    expect(pagesRead).toHaveLength(2);

    const marker = linear.requests.length;
    const resumed = await sync({ config: { page_size: 10 }, cursor: last, resuming: true });
    const operations = linear.requests.slice(marker).map((request) => request.operation);
    expect(operations).toEqual(['Catchment_organization', 'Catchment_issues', 'Catchment_comments']);
    expect(linear.requests[marker + 1]!.variables).toMatchObject({ after: last.resume!.after });
    expect(resumed.complete).toBe(false);
    // 28 issues, 20 of them read before the failure.
    expect(typeCounts(resumed.entities)).toEqual({ issue: 8, comment: 3 });
    expect(resumed.cursor).toMatchObject({ resume: null, since: { issues: extra.at(-1)!.updatedAt, teams: workspace.design.updatedAt } });
  });

  test('an unknown API key: AUTHENTICATION_ERROR becomes CredentialsRejectedError, the key in no message', async () => {
    const error = await rejection(sync({ key: 'lin_api_wrong_key_77' }));
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(error.message).not.toContain('lin_api_wrong_key_77');
    expect(linear.graphqlRequests()[0]).toMatchObject({ status: 400, errorCode: 'AUTHENTICATION_ERROR', authorization: 'lin_api_wrong_key_77' });
    // validate says the same before a connection is saved.
    const validation = await rejection(connector.validate(connectionContext(connector, { config: { api_url: linear.url }, credentials: { api_key: 'lin_api_wrong_key_77' } }), connectorEnvironment()));
    expect(validation).toBeInstanceOf(CredentialsRejectedError);
    expect(JSON.stringify({ ...validation, message: validation.message })).not.toContain('lin_api_wrong_key_77');
  });

  test('validate: an API URL that does not answer as Linear is a config error on api_url', async () => {
    const error = await rejection(connector.validate(connectionContext(connector, { config: { api_url: `${linear.url}/elsewhere` }, credentials: { api_key: API_KEY } }), connectorEnvironment()));
    expect(error).toBeInstanceOf(SourceConfigError);
    expect((error as SourceConfigError).field).toBe('api_url');
    await expect(connector.validate(connectionContext(connector, { config: { api_url: linear.url }, credentials: { api_key: API_KEY } }), connectorEnvironment())).resolves.toBeUndefined();
  });

  test('OAuth: the code exchanged at /oauth/token (PKCE, client in the body), the access token sent as Bearer', async () => {
    const { first, provider } = await signIn(linear);
    expect(first).toMatchObject({ refreshToken: expect.stringMatching(/^lin_refresh_/), scope: 'read' });
    expect(first.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 86_000_000);
    const run = await collectRun(connector, { config: { api_url: linear.url }, credentials: null, tokens: provider });
    expect(run.entities).toHaveLength(12);
    expect(linear.graphqlRequests().every((request) => request.authorization === `Bearer ${first.accessToken}`)).toBe(true);
  });

  test('OAuth: an expired access token is refreshed once (the refresh token rotates, the old one is refused) and the run completes', async () => {
    const session = await signIn(linear);
    linear.expireAccessTokens();
    const run = await collectRun(connector, { config: { api_url: linear.url }, credentials: null, tokens: session.provider });
    expect(run.entities).toHaveLength(12);
    expect(session.refreshes).toEqual([session.first.accessToken]);
    const renewed = session.current();
    expect(renewed.refreshToken).not.toBe(session.first.refreshToken);
    expect(linear.graphqlRequests().at(-1)!.authorization).toBe(`Bearer ${renewed.accessToken}`);
    const reused = await rejection(
      requestTokens({ spec: session.spec, config: { api_url: linear.url }, client: session.client, grant: { type: 'refresh_token', refreshToken: session.first.refreshToken! }, allowPrivateNetworks: true }),
    );
    expect(reused).toBeInstanceOf(TokenRequestRefusedError);
    expect((reused as TokenRequestRefusedError).error).toBe('invalid_grant');
  });

  test('OAuth: a token refused again after its refresh fails the run with CredentialsRejectedError, no token in the message', async () => {
    // A provider whose refresh gives a token Linear refuses too (the user revoked the app meanwhile).
    let token = 'lin_oauth_revoked';
    const refusing: TokenProvider = {
      accessToken: async () => token,
      refreshAfterRejection: async () => {
        token = 'lin_oauth_revoked_again';
        return token;
      },
    };
    const error = await rejection(collectRun(connector, { config: { api_url: linear.url }, credentials: null, tokens: refusing }));
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(error.message).not.toMatch(/lin_oauth|lin_refresh/);
    expect(linear.graphqlRequests().map((request) => request.authorization)).toEqual(['Bearer lin_oauth_revoked', 'Bearer lin_oauth_revoked_again']);
  });

  test('catalog: OAuth 2 with rotating refresh and comma-separated scopes, a pasted API key, the key only sent to the API origin', () => {
    expect(connector.auth).toMatchObject({ kind: 'oauth2', oauth: { scopes: ['read'], scopeSeparator: ',', pkce: true, refresh: 'rotating', clientAuthentication: 'body' } });
    const config = { api_url: 'https://api.linear.app', include_comments: true, include_documents: true, page_size: 50 };
    if (connector.auth.kind !== 'oauth2') throw new Error('oauth2 expected');
    expect([connector.auth.oauth.authorizeUrl(config), connector.auth.oauth.tokenUrl(config)]).toEqual(['https://linear.app/oauth/authorize', 'https://api.linear.app/oauth/token']);
    expect(connector.authHeaders!('tok', 'oauth')).toEqual({ Authorization: 'Bearer tok' });
    expect(connector.authHeaders!('lin_api_x', 'pasted')).toEqual({ Authorization: 'lin_api_x' });
    expect(connector.credentialTargets(config, null)).toEqual(['https://api.linear.app']);
    expect(describeSchema(connector.config).fields.map((field) => [field.name, field.type, field.default])).toEqual([
      ['api_url', 'string', '"https://api.linear.app"'],
      ['include_comments', 'boolean', 'true'],
      ['include_documents', 'boolean', 'true'],
      ['page_size', 'integer', '50'],
    ]);
    expect(describeSchema(credentialsSchemaOf(connector)!).fields).toMatchObject([{ name: 'api_key', type: 'string', required: true, isSecret: true }]);
  });

  test('config: a URL that is not http(s), a page size beyond 100 and unknown fields are 422 items on config.*', () => {
    expect(parseConfig(connector, { api_url: 'ftp://api.linear.app', page_size: 500, team: 'ENG' }).issues).toEqual([
      expect.objectContaining({ loc: ['config', 'api_url'], type: 'value_error' }),
      expect.objectContaining({ loc: ['config', 'page_size'], type: 'less_than_equal' }),
      expect.objectContaining({ loc: ['config', 'team'], type: 'extra_forbidden' }),
    ]);
    expect(parseConfig(connector, { api_url: 'https://linear.example.com/api/' }).value).toMatchObject({ api_url: 'https://linear.example.com/api', page_size: 50 });
  });
});
