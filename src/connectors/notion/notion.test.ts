import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { TokenRequestRefusedError, requestTokens } from '../../modules/connections/oauth/token-endpoint.js';
import { collectRun, connectionContext, connectorEnvironment, parsedConfig, rejection } from '../connector-testing.js';
import { CredentialsRejectedError, SourceConfigError, TemporarilyUnavailableError } from '../contract/errors.js';
import { parseCredentials } from '../contract/schemas.js';
import type { TokenProvider } from '../contract/source-http.js';
import notion from './index.js';
import type { NotionCursor } from './schemas.js';
import { blocks } from './test-notion-content.js';
import { TestNotionServer } from './test-notion-server.js';

const TOKEN = 'ntn_internal_integration_token_1';
const { paragraph, heading, bullet, numbered, todo, code, quote, callout, toggle, table, columns, divider } = blocks;

/** The workspace every test starts from: three pages (one inside a column), a database and two rows. */
function seed(fake: TestNotionServer) {
  const engineering = fake.addPage({
    title: 'Engineering',
    content: [
      heading(1, 'Handbook'),
      paragraph('How we work.'),
      bullet('Plan', [bullet('Write it down')]),
      bullet('Review'),
      numbered('First'),
      numbered('Second'),
      todo('Ship it', true),
      todo('Celebrate', false),
      code('npm test', 'shell'),
      quote('Less is more'),
      callout('Mind the gap', '💡'),
      toggle('Details', [paragraph('Hidden text')]),
      table(
        [
          ['Name', 'Role'],
          ['Ada', 'Lead'],
        ],
        true,
      ),
      columns([paragraph('Left column')], []),
      divider(),
    ],
  });
  const runbooks = fake.addPage({ title: 'Runbooks', parent: { type: 'page_id', page_id: engineering }, content: [paragraph('Restart the service.')] });
  const tasks = fake.addDatabase({
    title: 'Tasks',
    description: 'What the team works on',
    parent: { type: 'page_id', page_id: engineering },
    properties: {
      Name: { type: 'title', title: {} },
      Status: { type: 'select', select: { options: [{ id: 's1', name: 'Todo', color: 'red' }, { id: 's2', name: 'Done', color: 'green' }] } },
      Tags: { type: 'multi_select', multi_select: { options: [{ id: 't1', name: 'auth', color: 'blue' }, { id: 't2', name: 'web', color: 'gray' }] } },
      Due: { type: 'date', date: {} },
      Points: { type: 'number', number: { format: 'number' } },
      Done: { type: 'checkbox', checkbox: {} },
      Related: { type: 'relation', relation: { database_id: 'other', type: 'single_property', single_property: {} } },
    },
  });
  const row = { type: 'database_id', database_id: tasks } as const;
  const fixLogin = fake.addPage({
    title: 'Fix login',
    parent: row,
    properties: {
      Status: { id: 'stat', type: 'select', select: { id: 's2', name: 'Done', color: 'green' } },
      Tags: { id: 'tags', type: 'multi_select', multi_select: [{ id: 't1', name: 'auth', color: 'blue' }, { id: 't2', name: 'web', color: 'gray' }] },
      Due: { id: 'due', type: 'date', date: { start: '2025-02-01', end: null, time_zone: null } },
      Points: { id: 'pts', type: 'number', number: 3 },
      Done: { id: 'done', type: 'checkbox', checkbox: true },
      Related: { id: 'rel', type: 'relation', relation: [{ id: runbooks }], has_more: false },
    },
    content: [paragraph('Users cannot sign in with SSO.')],
  });
  const writeDocs = fake.addPage({ title: 'Write docs', parent: row, properties: { Status: { id: 'stat', type: 'select', select: { id: 's1', name: 'Todo', color: 'red' } } } });
  const [columnList] = fake.blockIdsOf(engineering, 'column_list');
  const secondColumn = fake.childBlockIds(columnList!)[1]!;
  const designNotes = fake.addPage({ title: 'Design notes', parent: { type: 'block_id', block_id: secondColumn }, content: [paragraph('Prefer boring technology.')] });
  return { engineering, runbooks, tasks, fixLogin, writeDocs, designNotes };
}

describe("notion source, against a local server speaking Notion's API", () => {
  let fake: TestNotionServer;
  let ids: ReturnType<typeof seed>;
  /** Waits the client asked for (pacing and retries), recorded instead of waited. */
  let sleeps: number[];

  beforeEach(async () => {
    fake = await new TestNotionServer().start();
    fake.tokens.add(TOKEN);
    ids = seed(fake);
    sleeps = [];
  });
  afterEach(() => fake.stop());

  const config = (extra: Record<string, unknown> = {}) => ({ api_url: fake.url, ...extra });

  const run = (options: { config?: Record<string, unknown>; cursor?: NotionCursor | null; resuming?: boolean; checkpoints?: NotionCursor[]; credentials?: { token: string } } = {}) => {
    const given = options.config ?? config();
    const credentials = options.credentials ?? { token: TOKEN };
    return collectRun(notion, { config: given, credentials, cursor: options.cursor ?? null, resuming: options.resuming, checkpoints: options.checkpoints, waits: sleeps });
  };

  const requestsSince = (index: number) => fake.requests.slice(index);
  /** The pages whose content was read since a request (among `pages`; nested blocks are read too). */
  const contentRead = (since: number, pages: string[]) =>
    requestsSince(since)
      .filter((request) => request.method === 'GET' && /^\/v1\/blocks\/[^/]+\/children$/.test(request.path) && request.status === 200)
      .map((request) => request.path.split('/')[3]!)
      .filter((id) => pages.includes(id))
      .sort();

  test('a first sync yields every page, database and row, with Markdown text, the page tree as breadcrumbs and Notion URLs', async () => {
    const result = await run();

    expect(result.complete).toBe(true);
    expect(result.ids).toEqual(Object.values(ids).sort());
    const byType = (type: string) => result.entities.filter((entity) => entity.entityType === type).length;
    expect([byType('notion_page'), byType('notion_database'), byType('notion_database_row')]).toEqual([3, 1, 2]);

    const engineering = result.byId.get(ids.engineering)!;
    expect(engineering.name).toBe('Engineering');
    expect(engineering.text).toBe(
      [
        '# Engineering',
        '# Handbook',
        'How we work.',
        '- Plan\n  - Write it down\n- Review\n1. First\n2. Second\n- [x] Ship it\n- [ ] Celebrate',
        '```shell\nnpm test\n```',
        '> Less is more',
        '> 💡 Mind the gap',
        '- Details\n  Hidden text',
        '| Name | Role |\n| --- | --- |\n| Ada | Lead |',
        'Left column',
      ].join('\n\n'),
    );
    expect(engineering.webUrl).toBe(fake.webUrlOf(ids.engineering));
    expect(engineering.updatedAt).toEqual(new Date(Date.UTC(2025, 0, 6, 10, 0)));
    expect(engineering.breadcrumbs).toEqual([{ entityId: 'workspace', name: 'Acme', entityType: 'notion_workspace' }]);

    const underEngineering = [
      { entityId: 'workspace', name: 'Acme', entityType: 'notion_workspace' },
      { entityId: ids.engineering, name: 'Engineering', entityType: 'notion_page' },
    ];
    // Child pages and databases are entities of their own, not inlined in their parent's text.
    expect(result.byId.get(ids.runbooks)!.text).toBe('# Runbooks\n\nRestart the service.');
    expect(result.byId.get(ids.runbooks)!.breadcrumbs).toEqual(underEngineering);
    // A page inside a column: its parent is a block, the page holding the columns is its breadcrumb.
    expect(result.byId.get(ids.designNotes)!.breadcrumbs).toEqual(underEngineering);

    const database = result.byId.get(ids.tasks)!;
    expect(database.entityType).toBe('notion_database');
    expect(database.text).toBe(
      '# Tasks\n\nWhat the team works on\n\nProperties:\n- Name (title)\n- Status (select): Todo, Done\n- Tags (multi_select): auth, web\n- Due (date)\n- Points (number)\n- Done (checkbox)\n- Related (relation)',
    );
    expect(database.breadcrumbs).toEqual(underEngineering);

    const row = result.byId.get(ids.fixLogin)!;
    expect(row.entityType).toBe('notion_database_row');
    expect(row.text).toBe('# Fix login\n\nName: Fix login\nStatus: Done\nTags: auth, web\nDue: 2025-02-01\nPoints: 3\nDone: Yes\nRelated: Runbooks\n\nUsers cannot sign in with SSO.');
    expect(row.breadcrumbs).toEqual([...underEngineering, { entityId: ids.tasks, name: 'Tasks', entityType: 'notion_database' }]);
    expect(row.webUrl).toBe(fake.webUrlOf(ids.fixLogin));
    expect(row.fields).toMatchObject({ database_id: ids.tasks, properties: { Status: 'Done', Points: '3' } });

    // Every request carried the pasted token and the API version.
    expect(new Set(fake.requests.map((request) => request.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
    expect(fake.requests.every((request) => request.status === 200)).toBe(true);
    expect(result.cursor!.objects[ids.fixLogin]).toEqual({ edited: '2025-01-06T13:00:00.000Z', type: 'notion_database_row', title: 'Fix login', parent: ids.tasks });
    expect(result.checkpoints).toHaveLength(6);
  });

  test('a re-sync reads only what was edited since, deletes what it finds trashed, and a complete listing removes what is gone', async () => {
    const first = await run();
    fake.editPage(ids.runbooks, { content: [paragraph('Restart the service, then check the logs.')] });
    const postmortems = fake.addPage({ title: 'Postmortems', parent: { type: 'page_id', page_id: ids.runbooks }, content: [paragraph('Blameless.')] });
    fake.editPage(ids.fixLogin, { properties: { Status: { id: 'stat', type: 'select', select: { id: 's1', name: 'Todo', color: 'red' } } } });
    fake.trash(ids.writeDocs);
    // Notion's search index still returns the page for a while, with `in_trash: true`.
    fake.searchIndexLag.add(ids.writeDocs);
    const before = fake.requests.length;

    const incremental = await run({ cursor: first.cursor });

    expect(incremental.complete).toBe(false);
    expect(incremental.ids).toEqual([ids.runbooks, postmortems, ids.fixLogin].sort());
    expect(incremental.deletes).toEqual([ids.writeDocs]);
    // The newest object of the previous run is listed again (search lags), and kept unread.
    expect(incremental.keeps).toEqual([ids.designNotes]);
    expect(contentRead(before, [...Object.values(ids), postmortems])).toEqual([ids.runbooks, postmortems, ids.fixLogin].sort());
    // The listing stopped at the previous run's newest edit: one search page, no database query.
    expect(requestsSince(before).filter((request) => request.path === '/v1/search')).toHaveLength(1);
    expect(requestsSince(before).some((request) => request.path.endsWith('/query'))).toBe(false);
    expect(incremental.byId.get(ids.fixLogin)!.text).toContain('Status: Todo');
    expect(incremental.byId.get(ids.runbooks)!.text).toBe('# Runbooks\n\nRestart the service, then check the logs.');
    expect(incremental.byId.get(postmortems)!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['Acme', 'Engineering', 'Runbooks']);
    expect(Object.keys(incremental.cursor!.objects).sort()).toEqual([ids.engineering, ids.runbooks, ids.tasks, ids.fixLogin, ids.designNotes, postmortems].sort());

    // The page in the column is no longer shared: only a complete listing can tell.
    fake.unshare(ids.designNotes);
    fake.searchIndexLag.clear();
    fake.editPage(ids.engineering, { title: 'Engineering team' });
    const beforeListing = fake.requests.length;
    const listing = await run({ config: config({ full_listing_every_hours: 0 }), cursor: incremental.cursor });

    expect(listing.complete).toBe(true);
    expect(listing.ids).toEqual([ids.engineering]);
    expect(listing.keeps).toEqual([ids.runbooks, postmortems, ids.tasks, ids.fixLogin].sort());
    expect(listing.deletes).toEqual([]);
    expect(contentRead(beforeListing, [...Object.values(ids), postmortems])).toEqual([ids.engineering]);
    expect(requestsSince(beforeListing).filter((request) => request.path === `/v1/databases/${ids.tasks}/query`)).toHaveLength(1);
    expect(Object.keys(listing.cursor!.objects).sort()).toEqual([ids.engineering, ids.runbooks, postmortems, ids.tasks, ids.fixLogin].sort());
  });

  test('pages through search and block children, and honours a 429 Retry-After before asking again', async () => {
    fake.pageSize = 2;
    fake.rateLimits.push({ path: '/v1/search', retryAfter: '2' });
    const result = await run();

    expect(result.ids).toEqual(Object.values(ids).sort());
    const searches = fake.requests.filter((request) => request.path === '/v1/search');
    expect(searches.map((request) => request.status)).toEqual([429, 200, 200, 200]);
    expect(searches[1]!.body).toEqual(searches[0]!.body);
    expect(searches.slice(1).map((request) => request.body!.start_cursor ?? null)).toEqual([null, expect.any(String), expect.any(String)]);
    expect(sleeps).toContain(2000);
    // Engineering's 17 blocks (15, and those of its sub-page and database) come in pages of 2.
    expect(fake.requests.filter((request) => request.path === `/v1/blocks/${ids.engineering}/children`)).toHaveLength(9);
    expect(result.byId.get(ids.engineering)!.text).toContain('| Ada | Lead |');
  });

  test('a run that fails half-way resumes after its last checkpoint', async () => {
    fake.unavailable.add(`/v1/blocks/${ids.writeDocs}/children`);
    const checkpoints: NotionCursor[] = [];
    const failure = await rejection(run({ checkpoints }));

    expect(failure).toBeInstanceOf(TemporarilyUnavailableError);
    expect(failure.message).not.toContain(TOKEN);
    // Read oldest edit first: Engineering, Runbooks, Tasks and Fix login were committed before the failure.
    expect(checkpoints).toHaveLength(4);
    const resumeFrom = checkpoints.at(-1)!;
    expect(Object.keys(resumeFrom.objects).sort()).toEqual([ids.engineering, ids.runbooks, ids.tasks, ids.fixLogin].sort());

    fake.unavailable.clear();
    const before = fake.requests.length;
    const resumed = await run({ cursor: resumeFrom, resuming: true });

    expect(resumed.complete).toBe(false);
    expect(resumed.ids).toEqual([ids.writeDocs, ids.designNotes].sort());
    expect(resumed.keeps).toEqual([ids.fixLogin]);
    expect(contentRead(before, Object.values(ids))).toEqual([ids.writeDocs, ids.designNotes].sort());
  });

  test('a refused token is CredentialsRejectedError, in validation and in a run, and never appears in the error', async () => {
    const wrong = 'ntn_revoked_token_42';
    const context = connectionContext(notion, { config: config(), credentials: { token: wrong }, waits: sleeps });
    const refused = await rejection(notion.validate(context, connectorEnvironment()));
    expect(refused).toBeInstanceOf(CredentialsRejectedError);
    expect(refused.message).not.toContain(wrong);

    const failed = await rejection(run({ credentials: { token: wrong } }));
    expect(failed).toBeInstanceOf(CredentialsRejectedError);
    expect(failed.message).not.toContain(wrong);
    expect(fake.requests.map((request) => request.status)).toEqual([401, 401]);

    await notion.validate(connectionContext(notion, { config: config(), credentials: { token: TOKEN }, waits: sleeps }), connectorEnvironment());
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/users/me', status: 200 });
  });

  test('an API URL that does not answer as Notion is a config error on api_url', async () => {
    const elsewhere = config({ api_url: `${fake.url}/elsewhere` });
    const error = await rejection(notion.validate(connectionContext(notion, { config: elsewhere, credentials: { token: TOKEN }, waits: sleeps }), connectorEnvironment()));

    expect(error).toBeInstanceOf(SourceConfigError);
    expect((error as SourceConfigError).field).toBe('api_url');
    expect(error.message).toContain('invalid_request_url');
    expect(error.message).not.toContain(TOKEN);
  });

  test('a pasted token must look like an internal integration token', () => {
    const parsed = parseCredentials(notion, { token: 'not-a-notion-token' });
    expect(parsed.issues).toEqual([expect.objectContaining({ loc: ['authentication', 'credentials', 'token'], msg: expect.stringContaining('secret_ or ntn_') })]);
    expect(JSON.stringify(parsed.issues)).not.toContain('not-a-notion-token');
    expect(parseCredentials(notion, { token: 'secret_abc' }).issues).toEqual([]);
  });

  test("OAuth: Notion's token endpoint (JSON body, HTTP Basic) grants a token the run sends as Bearer, and a 401 refreshes it once (rotating)", async () => {
    if (notion.auth.kind !== 'oauth2') throw new Error('notion signs in with OAuth');
    const spec = notion.auth.oauth;
    const parsed = parsedConfig(notion, config());
    expect(spec.authorizeUrl(parsedConfig(notion, {}))).toBe('https://api.notion.com/v1/oauth/authorize');
    const client = { clientId: 'public-integration', clientSecret: 'integration-secret' };
    const redirectUri = 'https://catchment.example/oauth/callback';
    const code = fake.oauth.authorize(client.clientId, client.clientSecret, redirectUri);

    const granted = await requestTokens({ spec, config: parsed, client, grant: { type: 'authorization_code', code, redirectUri }, allowPrivateNetworks: true });
    const exchange = fake.requests.at(-1)!;
    expect(exchange.path).toBe('/v1/oauth/token');
    expect(exchange.authorization).toBe(`Basic ${Buffer.from('public-integration:integration-secret').toString('base64')}`);
    expect(exchange.body).toEqual({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    expect(granted.refreshToken).toEqual(expect.stringMatching(/^ntn_refresh_/));

    // The access token is revoked meanwhile: the first request is refused, the provider refreshes, the run goes on.
    fake.tokens.delete(granted.accessToken);
    let current = granted;
    const refreshes: string[] = [];
    const tokens: TokenProvider = {
      accessToken: async () => current.accessToken,
      refreshAfterRejection: async (rejected) => {
        refreshes.push(rejected);
        current = await requestTokens({ spec, config: parsed, client, grant: { type: 'refresh_token', refreshToken: current.refreshToken! }, allowPrivateNetworks: true });
        return current.accessToken;
      },
    };
    const before = fake.requests.length;
    const result = await collectRun(notion, { config: config(), tokens, waits: sleeps });

    expect(result.ids).toEqual(Object.values(ids).sort());
    expect(refreshes).toEqual([granted.accessToken]);
    const refresh = fake.requests.find((request, index) => index >= before && request.path === '/v1/oauth/token')!;
    expect(refresh.body).toEqual({ grant_type: 'refresh_token', refresh_token: granted.refreshToken });
    const apiRequests = requestsSince(before).filter((request) => request.path !== '/v1/oauth/token');
    expect(apiRequests[0]).toMatchObject({ authorization: `Bearer ${granted.accessToken}`, status: 401 });
    expect(new Set(apiRequests.slice(1).map((request) => request.authorization))).toEqual(new Set([`Bearer ${current.accessToken}`]));
    // Each refresh returns a new refresh token; the spent one is refused.
    expect(current.refreshToken).not.toBe(granted.refreshToken);
    const reused = await rejection(requestTokens({ spec, config: parsed, client, grant: { type: 'refresh_token', refreshToken: granted.refreshToken! }, allowPrivateNetworks: true }));
    expect(reused).toBeInstanceOf(TokenRequestRefusedError);
  });
});
