import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** SyncConfig flags, layering, the guardrail and the janitor (embedded deployment). */
describe('sync configuration in effect', () => {
  let server: TestServer;
  let call: Api;

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_SYNC_MAX_ENTITIES: '50', CATCHMENT_SYNC_CANCEL_TIMEOUT_SECONDS: '2' } });
    call = api(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const chunksOf = async (collectionId: string, connectionId: string) =>
    (await server.running.core.vectors()).count(collectionId, [{ conditions: [{ field: 'service_system_metadata.sync_id', operator: 'equals', value: connectionId }] }]);

  async function connect(readableId: string, config: Record<string, unknown>, collectionSyncConfig?: unknown, connectionSyncConfig?: unknown) {
    const collection = (await call('POST', '/collections', { name: `Config ${readableId}`, readable_id: readableId, sync_config: collectionSyncConfig ?? null })).body;
    const connection = (
      await call('POST', '/source-connections', {
        short_name: 'stub',
        readable_collection_id: readableId,
        authentication: { credentials: { token: 't' } },
        config: { hierarchy_depth: 0, ...config },
        sync_immediately: false,
        sync_config: connectionSyncConfig ?? null,
      })
    ).body;
    return { collection, connection };
  }

  const run = async (connectionId: string, query = '', body?: unknown) => {
    const job = (await call('POST', `/source-connections/${connectionId}/run${query}`, body)).body;
    return waitForJob(call, connectionId, job.id, ['COMPLETED', 'FAILED', 'CANCELLED']);
  };

  test('skip_vector_db on the collection writes no chunks; the job layer turns vectors back on', async () => {
    const { collection, connection } = await connect('cfg-vectors', { entity_count: 10 }, { destinations: { skip_vector_db: true } });
    expect(await run(connection.id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 10, chunks_written: 0 });
    expect(await chunksOf(collection.id, connection.id)).toBe(0);
    const forced = await run(connection.id, '?force_full_sync=true', { sync_config: { destinations: { skip_vector_db: false }, behavior: { skip_hash_comparison: true } } });
    expect(forced).toMatchObject({ status: 'COMPLETED', entities_updated: 10 });
    expect(forced.chunks_written).toBeGreaterThanOrEqual(10);
    expect(await chunksOf(collection.id, connection.id)).toBe(forced.chunks_written);
  });

  test('target_destinations without the built-in index skip vectors; naming it writes them', async () => {
    const { collection, connection } = await connect('cfg-targets', { entity_count: 5 }, null, { destinations: { target_destinations: ['0190a0a0-0000-7000-8000-000000000009'] } });
    expect((await run(connection.id)).chunks_written).toBe(0);
    const included = await run(connection.id, '?force_full_sync=true', {
      sync_config: { destinations: { target_destinations: ['00000000-0000-4000-8000-000000000001'] }, behavior: { skip_hash_comparison: true } },
    });
    expect(included.chunks_written).toBeGreaterThanOrEqual(5);
    expect(await chunksOf(collection.id, connection.id)).toBe(included.chunks_written);
  });

  test('the guardrail fails a sync over the entity limit unless skip_guardrails is set', async () => {
    const { connection } = await connect('cfg-guardrail', { entity_count: 80 });
    const refused = await run(connection.id);
    expect(refused.status).toBe('FAILED');
    expect(refused.error).toMatch(/guardrail/);
    expect(await run(connection.id, '?force_full_sync=true', { sync_config: { behavior: { skip_guardrails: true } } })).toMatchObject({ status: 'COMPLETED' });
    expect((await call('GET', `/source-connections/${connection.id}`)).body.entity_count).toBe(80);
  });

  test('on a push connection the guardrail counts what the connection stores, across batches', async () => {
    await call('POST', '/collections', { name: 'Config push guardrail', readable_id: 'cfg-push-guardrail' });
    const connection = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'cfg-push-guardrail', name: 'Pushed notes' })).body;
    const notes = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ id: `n-${from + i}`, text: `Note ${from + i}` }));
    const ids = (from: number, to: number) => notes(from, to).map((note) => note.id);
    const pushed = async (body: unknown) => {
      const response = await call('POST', `/source-connections/${connection.id}/entities`, body);
      expect(response.status).toBe(200);
      return waitForJob(call, connection.id, response.body.job.id, ['COMPLETED', 'FAILED', 'CANCELLED']);
    };
    const stored = async () => (await call('GET', `/source-connections/${connection.id}`)).body.entity_count;
    expect(await pushed({ entities: notes(0, 30) })).toMatchObject({ status: 'COMPLETED' });
    // Each batch is under the limit of 50; together they would not be. The sync stops at the limit.
    const over = await pushed({ entities: notes(30, 60) });
    expect(over).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/would hold more than 50 entities \(the guardrail\)/) });
    const afterOver = await stored();
    expect(afterOver).toBeLessThanOrEqual(50);
    // Deleting ids that were never stored buys no room.
    expect(await pushed({ entities: notes(60, 85), deletions: ids(900, 925) })).toMatchObject({ status: 'FAILED' });
    expect(await stored()).toBeLessThanOrEqual(50);
    // Replacing stored entities stays within it.
    expect(await pushed({ entities: notes(100, 140), deletions: ids(0, 85) })).toMatchObject({ status: 'COMPLETED', entities_inserted: 40 });
    expect(await stored()).toBe(40);
  });

  test('replay_from_arf rebuilds from the raw data store without calling the source', async () => {
    const { collection, connection } = await connect('cfg-replay', { entity_count: 12 });
    expect((await run(connection.id)).status).toBe('COMPLETED');
    // A source that now fails: replay must not call it.
    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 12, fail_after: 0, hierarchy_depth: 0 } });
    const replayed = await run(connection.id, '?force_full_sync=true', { sync_config: { behavior: { replay_from_arf: true, skip_hash_comparison: true } } });
    expect(replayed).toMatchObject({ status: 'COMPLETED', entities_updated: 12, entities_deleted: 0 });
    expect(await chunksOf(collection.id, connection.id)).toBe(replayed.chunks_written);
    // Without the raw data handler nothing is kept to replay from.
    const { connection: bare } = await connect('cfg-replay-bare', { entity_count: 4 }, { handlers: { enable_raw_data_handler: false } });
    expect((await run(bare.id)).status).toBe('COMPLETED');
    const empty = await run(bare.id, '?force_full_sync=true', { sync_config: { behavior: { replay_from_arf: true } } });
    expect(empty).toMatchObject({ status: 'COMPLETED', entities_deleted: 4 });
  });

  test('replay_from_arf after updates and deletions replays the newest version of each entity and none of the deleted', async () => {
    const { collection, connection } = await connect('cfg-replay-changed', { entity_count: 12 });
    expect((await run(connection.id)).entities_inserted).toBe(12);
    // An incremental run: stub-8..11 are deleted, stub-0 gets a new revision.
    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 8, revision: 1, hierarchy_depth: 0 } });
    expect(await run(connection.id)).toMatchObject({ status: 'COMPLETED', entities_deleted: 4, entities_updated: 1 });
    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 8, revision: 1, fail_after: 0, hierarchy_depth: 0 } });
    const replayed = await run(connection.id, '?force_full_sync=true', { sync_config: { behavior: { replay_from_arf: true, skip_hash_comparison: true } } });
    // A deleted entity coming back would be inserted again.
    expect(replayed).toMatchObject({ status: 'COMPLETED', entities_updated: 8, entities_inserted: 0, entities_deleted: 0 });
    expect((await call('GET', `/source-connections/${connection.id}`)).body.entity_count).toBe(8);
    const found = (await call('POST', `/collections/${collection.readable_id}/search/instant`, { query: 'revision 1', retrieval_strategy: 'keyword', limit: 20 })).body;
    // Only the new revision's text holds the word.
    expect(found.results.map((result: { entity_id: string }) => result.entity_id)).toContain('stub-0');
  });

  test('cursor.skip_updates stores no cursor, so the next run reads everything again', async () => {
    const { connection } = await connect('cfg-cursor', { entity_count: 20 }, null, { cursor: { skip_updates: true } });
    expect((await run(connection.id)).entities_inserted).toBe(20);
    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 20, revision: 1, hierarchy_depth: 0 } });
    expect(await run(connection.id)).toMatchObject({ entities_updated: 2, entities_skipped: 18 });
    expect((await call('GET', `/source-connections/${connection.id}`)).body.schedule.cursor_value).toBeNull();
  });

  test('the janitor forces CANCELLED when no worker answers a cancellation', async () => {
    const { connection } = await connect('cfg-janitor', { entity_count: 5 });
    // A job whose worker vanished: RUNNING in the database, run by nobody.
    const started = new Date(Date.now() - 60_000);
    await server.running.core.database.orm.em.getConnection().execute(
      `insert into sync_jobs (id, source_connection_id, organization_id, status, trigger, force_full_sync, created_at, started_at, heartbeat_at)
       values ('01a00000-0000-7000-8000-00000000abcd', ?, ?, 'RUNNING', 'manual', false, ?, ?, ?)`,
      [connection.id, connection.organization_id, started, started, new Date()],
    );
    const cancelling = await call('POST', `/source-connections/${connection.id}/jobs/01a00000-0000-7000-8000-00000000abcd/cancel`);
    expect(cancelling.body.status).toBe('CANCELLING');
    const cancelled = await waitForJob(call, connection.id, '01a00000-0000-7000-8000-00000000abcd', ['CANCELLED'], 15_000);
    expect(Date.parse(cancelled.completed_at)).toBeGreaterThan(Date.now() - 15_000);
  });

  test('lifecycle events carry the spec payloads; credentials are stored encrypted', async () => {
    const organizationId = (await call('GET', '/collections?limit=1')).body[0]?.organization_id ?? (await call('POST', '/collections', { name: 'Events seed' })).body.organization_id;
    const events = server.running.core.services.events.subscribe(organizationId, null);
    const { collection, connection } = await connect('cfg-events', { entity_count: 3 });
    const job = await run(connection.id);
    const seen: Record<string, any> = {};
    while (!seen['sync.completed']) {
      const { value } = await events.next();
      seen[value.type] = value.payload;
    }
    await events.return!();
    expect(Object.keys(seen)).toEqual(expect.arrayContaining(['collection.created', 'source_connection.created', 'source_connection.auth_completed', 'sync.pending', 'sync.running', 'sync.completed']));
    expect(seen['sync.completed']).toEqual({
      event_type: 'sync.completed',
      organization_id: organizationId,
      timestamp: expect.any(String),
      sync_id: connection.id,
      sync_job_id: job.id,
      collection_id: collection.id,
      collection_readable_id: 'cfg-events',
      collection_name: 'Config cfg-events',
      source_connection_id: connection.id,
      source_type: 'stub',
      entities_inserted: 3,
      entities_updated: 0,
      entities_deleted: 0,
      entities_skipped: 0,
      chunks_written: job.chunks_written,
    });
    expect(seen['source_connection.created']).toMatchObject({ source_connection_id: connection.id, collection_readable_id: 'cfg-events', source_type: 'stub', is_authenticated: true });
    expect(seen['collection.created']).toMatchObject({ collection_id: collection.id, collection_name: 'Config cfg-events', collection_readable_id: 'cfg-events' });
    const [row] = await server.running.core.database.orm.em.getConnection().execute('select sealed_credentials from source_connections where id = ?', [connection.id]);
    expect(row.sealed_credentials).toMatch(/^v1\./);
    expect(row.sealed_credentials).not.toContain('"token"');
  });
});
