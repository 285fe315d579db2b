import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import net from 'node:net';
import pg from 'pg';
import { createMysqlTestDatabase, type MysqlTestDatabase } from '../src/connectors/mysql/test-database.js';
import { createTestDatabase, startTestServer, type TestDatabase, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** A TCP relay on loopback to a real server, which the test can shut to make that server unreachable. */
async function relayTo(port: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((incoming) => {
    const outgoing = net.connect(port, '127.0.0.1');
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        relay.close(() => resolve());
      }),
  };
}

const TICKETS = [
  ['Printer on fire', 'The office printer emits smoke when printing duplex.'],
  ['Quokka mascot', 'Marketing wants a quokka on the landing page.'],
  ['Slow builds', 'CI builds take forty minutes since the cache broke.'],
  ['Password reset', 'Users cannot reset passwords from the mobile app.'],
  ['Dark mode', 'Add a dark theme to the dashboard.'],
];

describe('PostgreSQL and MySQL sources through the REST API (servers deployment)', () => {
  let server: TestServer;
  let call: Api;
  let postgres: TestDatabase;
  let source: pg.Client;
  let mysql: MysqlTestDatabase;

  const search = async (query: string, collection = 'sql-target') => {
    const response = await call('POST', `/collections/${collection}/search/instant`, { query, retrieval_strategy: 'keyword', limit: 10 });
    expect(response.status).toBe(200);
    return response.body.results as { entity_id: string; name: string; raw_source_fields: Record<string, unknown>; breadcrumbs: { name: string }[] }[];
  };
  const run = async (connectionId: string) => {
    const job = (await call('POST', `/source-connections/${connectionId}/run`)).body;
    return waitForJob(call, connectionId, job.id, ['COMPLETED', 'FAILED']);
  };
  const firstJob = async (connectionId: string) => {
    const [job] = (await call('GET', `/source-connections/${connectionId}/jobs`)).body;
    return waitForJob(call, connectionId, job.id, ['COMPLETED', 'FAILED']);
  };

  beforeAll(async () => {
    postgres = await createTestDatabase();
    mysql = await createMysqlTestDatabase();
    server = await startTestServer({ deployment: 'servers', env: FAST_WORKER });
    call = api(server.url, server.apiKey);
    for (const readableId of ['sql-target', 'sql-cursor', 'sql-mysql', 'sql-federated']) await call('POST', '/collections', { name: readableId, readable_id: readableId });
    source = new pg.Client({ connectionString: postgres.url });
    await source.connect();
    await source.query(`CREATE TABLE tickets (id int PRIMARY KEY, title text NOT NULL, body text, priority int, updated_at timestamptz NOT NULL DEFAULT '2024-01-01 00:00:00+00')`);
    for (const [index, [title, body]] of TICKETS.entries()) await source.query('INSERT INTO tickets (id, title, body, priority) VALUES ($1, $2, $3, $4)', [index + 1, title, body, index]);
    await mysql.admin.query(`CREATE TABLE articles (slug VARCHAR(64) PRIMARY KEY, headline VARCHAR(200), content TEXT, revision BIGINT NOT NULL DEFAULT 1)`);
    await mysql.admin.query(`INSERT INTO articles (slug, headline, content) VALUES ('tides', 'Tide tables', 'Spring tides follow the full moon.'), ('lichens', 'Lichens', 'Lichens grow on bare granite.'), ('owls', 'Owls', 'Barn owls hunt at dusk.')`);
  });

  afterAll(async () => {
    await server?.stop();
    await source?.end();
    await postgres?.drop();
    await mysql?.drop();
  });

  test('the catalog lists both sources with their credential and config fields', async () => {
    const sources = (await call('GET', '/sources')).body as { short_name: string; auth_fields: { fields: { name: string; is_secret: boolean }[] }; config_fields: { fields: { name: string }[] }; supports_continuous: boolean }[];
    for (const shortName of ['postgresql', 'mysql']) {
      const entry = sources.find((candidate) => candidate.short_name === shortName)!;
      expect(entry.supports_continuous).toBe(true);
      expect(entry.auth_fields.fields.filter((field) => field.is_secret).map((field) => field.name)).toEqual(['url', 'password']);
      expect(entry.config_fields.fields.map((field) => field.name)).toEqual(expect.arrayContaining(['schemas', 'tables', 'text_columns', 'cursor_column', 'query_timeout_seconds']));
    }
    const postgresql = sources.find((candidate) => candidate.short_name === 'postgresql')!;
    expect(postgresql.config_fields.fields.map((field) => field.name)).toEqual(expect.arrayContaining(['federated_search', 'text_search_config']));
  });

  test('postgresql: first sync, then inserted, updated and deleted rows re-sync with exact counts and are found by search', async () => {
    const created = await call('POST', '/source-connections', {
      short_name: 'postgresql',
      readable_collection_id: 'sql-target',
      name: 'Tickets',
      authentication: { credentials: { url: postgres.url } },
      config: { tables: ['tickets'] },
    });
    expect(created.status).toBe(200);
    const id = created.body.id;
    expect(await firstJob(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 5, entities_updated: 0, entities_deleted: 0 });

    const [quokka] = await search('quokka mascot');
    expect(quokka).toMatchObject({ entity_id: 'public/tickets/2', name: 'Quokka mascot', raw_source_fields: { id: 2, priority: 1, updated_at: '2024-01-01T00:00:00Z' } });
    expect(quokka!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['public', 'tickets']);

    await source.query(`UPDATE tickets SET body = 'The printer now jams with origami cranes.' WHERE id = 1`);
    await source.query(`INSERT INTO tickets (id, title, body) VALUES (6, 'Pangolin support', 'Add pangolin stickers to the swag store.'), (7, 'Timezone bug', 'Reports show yesterday in Auckland.')`);
    await source.query('DELETE FROM tickets WHERE id = 2');
    expect(await run(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 2, entities_updated: 1, entities_deleted: 1, entities_skipped: 3 });

    expect((await search('pangolin stickers')).map((hit) => hit.entity_id)).toContain('public/tickets/6');
    expect((await search('origami cranes'))[0]?.entity_id).toBe('public/tickets/1');
    expect((await search('quokka')).map((hit) => hit.entity_id)).not.toContain('public/tickets/2');
    expect((await run(id))).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 0, entities_deleted: 0, entities_skipped: 6 });
  });

  test('postgresql with a cursor column: re-syncs read what changed and still remove deleted rows', async () => {
    const id = (await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-cursor', authentication: { credentials: { url: postgres.url } }, config: { tables: ['tickets'], cursor_column: 'updated_at' } })).body.id;
    expect(await firstJob(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 6 });
    await source.query(`UPDATE tickets SET title = 'Dark mode and high contrast', updated_at = '2024-02-01 00:00:00+00' WHERE id = 5`);
    await source.query('DELETE FROM tickets WHERE id = 7');
    // Row 5 is read as changed; the others are listed by key only (kept), so no content is read again.
    expect(await run(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 1, entities_deleted: 1, entities_skipped: 4 });
    expect((await search('contrast', 'sql-cursor')).map((hit) => hit.entity_id)).toEqual(['public/tickets/5']);
    // Nothing changed: only the boundary row (the previous maximum) is read again, and skipped by its hash.
    expect(await run(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 0, entities_deleted: 0, entities_skipped: 5 });
  });

  test('mysql (MariaDB): sync, change, re-sync with exact counts, search finds the new content', async () => {
    const credentials = { host: '127.0.0.1', port: 3306, database: mysql.name, user: mysql.user.name, password: mysql.user.password };
    const created = await call('POST', '/source-connections', { short_name: 'mysql', readable_collection_id: 'sql-mysql', authentication: { credentials }, config: { cursor_column: 'revision' } });
    expect(created.status).toBe(200);
    expect(JSON.stringify(created.body)).not.toContain(mysql.user.password);
    const id = created.body.id;
    expect(await firstJob(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 3 });
    const prefix = encodeURIComponent(mysql.name);
    expect((await search('granite', 'sql-mysql'))[0]).toMatchObject({ entity_id: `${prefix}/articles/lichens`, name: 'Lichens', raw_source_fields: { slug: 'lichens', revision: '1' } });

    await mysql.admin.query(`UPDATE articles SET content = 'Barn owls nest in church towers.', revision = 2 WHERE slug = 'owls'`);
    await mysql.admin.query(`INSERT INTO articles (slug, headline, content, revision) VALUES ('eels', 'Eels', 'European eels spawn in the Sargasso Sea.', 2)`);
    await mysql.admin.query(`DELETE FROM articles WHERE slug = 'tides'`);
    expect(await run(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 1, entities_updated: 1, entities_deleted: 1 });
    expect((await search('sargasso', 'sql-mysql'))[0]?.entity_id).toBe(`${prefix}/articles/eels`);
    expect((await search('church towers', 'sql-mysql'))[0]?.entity_id).toBe(`${prefix}/articles/owls`);
    expect(await search('tides', 'sql-mysql')).toEqual([]);
  });

  test('federated postgresql: nothing is synced, its rows are found at query time and merged with synced results', async () => {
    await source.query(`CREATE TABLE notes (id int PRIMARY KEY, title text NOT NULL, body text)`);
    await source.query(`INSERT INTO notes VALUES (1, 'Kayak rental', 'Kayaks are rented by the hour at the north jetty.'), (2, 'Canteen menu', 'Soup on Mondays.')`);
    // A synced table in the same collection, mentioning kayaks too.
    await source.query(`CREATE TABLE trips (id int PRIMARY KEY, title text NOT NULL, body text)`);
    await source.query(`INSERT INTO trips VALUES (1, 'Kayak trip', 'The kayak trip leaves at dawn from the south beach.')`);
    const synced = (await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-federated', authentication: { credentials: { url: postgres.url } }, config: { tables: ['trips'] } })).body;
    expect(await firstJob(synced.id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 1 });

    const created = await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-federated', name: 'Notes (live)', authentication: { credentials: { url: postgres.url } }, config: { tables: ['notes'], federated_search: true } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ federated_search: true });
    const federatedId = created.body.id;
    // Nothing is synced for it, and a run is refused.
    expect((await call('GET', `/source-connections/${federatedId}/jobs`)).body).toEqual([]);
    expect((await call('POST', `/source-connections/${federatedId}/run`)).status).toBe(409);

    for (const strategy of ['keyword', 'hybrid', 'semantic']) {
      const response = await call('POST', '/collections/sql-federated/search/instant', { query: 'kayak', retrieval_strategy: strategy, limit: 10 });
      expect(response.status).toBe(200);
      const hits = response.body.results as { entity_id: string; score: number; service_system_metadata: { sync_id: string | null; sync_job_id: string | null; source_name: string } }[];
      const byId = new Map(hits.map((hit) => [hit.entity_id, hit]));
      expect(byId.get('public/notes/1')).toMatchObject({ service_system_metadata: { sync_id: null, sync_job_id: null, source_name: 'postgresql' } });
      expect(byId.get('public/trips/1')?.service_system_metadata.sync_job_id).toEqual(expect.any(String));
      expect(byId.has('public/notes/2')).toBe(false);
      // One ranking: scores descend across both origins.
      expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
    }
    // A row added to the source is searchable at once, without any sync.
    await source.query(`INSERT INTO notes VALUES (3, 'Paddle storage', 'Paddles for the kayaks hang in shed three.')`);
    const fresh = await call('POST', '/collections/sql-federated/search/instant', { query: 'paddles shed', retrieval_strategy: 'keyword', limit: 5 });
    expect(fresh.body.results[0]).toMatchObject({ entity_id: 'public/notes/3', name: 'Paddle storage' });
    // The caller filter applies to federated results too.
    const filtered = await call('POST', '/collections/sql-federated/search/instant', { query: 'kayak', limit: 10, filter: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'trips' }] }] });
    expect(filtered.body.results.map((hit: { entity_id: string }) => hit.entity_id)).toEqual(['public/trips/1']);
  });

  test('wrong credentials are a 422 at create with the server\'s message and never the password', async () => {
    const wrong = await call('POST', '/source-connections', {
      short_name: 'mysql',
      readable_collection_id: 'sql-mysql',
      authentication: { credentials: { host: '127.0.0.1', database: mysql.name, user: mysql.user.name, password: 'definitely-wrong-pw' } },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail).toEqual([{ loc: ['body', 'authentication', 'credentials'], msg: expect.stringMatching(/^MySQL refused the connection: Access denied for user/), type: 'credentials_rejected' }]);
    expect(JSON.stringify(wrong.body)).not.toContain('definitely-wrong-pw');

    // This PostgreSQL trusts every local login, so its refusal here is of an unknown role.
    const url = new URL(postgres.url);
    url.username = 'no_such_role';
    url.password = 'another-secret-pw';
    const refused = await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-target', authentication: { credentials: { url: url.toString() } } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].msg).toMatch(/role "no_such_role" does not exist/);
    expect(JSON.stringify(refused.body)).not.toContain('another-secret-pw');

    const incomplete = await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-target', authentication: { credentials: { host: '127.0.0.1' } } });
    expect(incomplete.status).toBe(422);
    expect(incomplete.body.detail.map((issue: { loc: string[] }) => issue.loc.at(-1))).toEqual(['database', 'user']);
    const badTable = await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-target', authentication: { credentials: { url: postgres.url } }, config: { tables: ['nope'] } });
    expect(badTable.body.detail).toEqual([{ loc: ['body', 'config', 'tables'], msg: 'Table "nope" not found (or not readable by this user)', type: 'value_error' }]);
  });

  test('a server that became unreachable fails the job with the reason', async () => {
    const relay = await relayTo(5432);
    const url = new URL(postgres.url);
    url.port = String(relay.port);
    url.password = 'relay-secret-pw';
    const id = (await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'sql-target', authentication: { credentials: { url: url.toString() } }, config: { tables: ['tickets'], connect_timeout_seconds: 2 } })).body.id;
    expect(await firstJob(id)).toMatchObject({ status: 'COMPLETED' });
    await relay.close();
    const failed = await run(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatch(new RegExp(`^Cannot reach the PostgreSQL server at 127\\.0\\.0\\.1:${relay.port}: .*ECONNREFUSED`));
    expect(failed.error).not.toContain('relay-secret-pw');
  });
});
