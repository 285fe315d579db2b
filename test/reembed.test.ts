import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { graphql, startTestServer, type TestServer } from './support/harness.js';
import { api, eventually, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

const FINISHED = ['COMPLETED', 'FAILED', 'CANCELLED'];
const REEMBED = `mutation ($readableId: String!) {
  reembedCollection(readableId: $readableId) {
    collection { readableId embeddingModelName vectorSize }
    jobs { id sourceConnectionId trigger status }
    skipped { sourceConnectionId reason }
  }
}`;

/** A collection made by an earlier embedding model is re-embedded in place instead of re-created (embedded deployment). */
describe('re-embedding a collection with the active model', () => {
  let server: TestServer;
  let call: Api;

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded', env: FAST_WORKER });
    call = api(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const search = (query: string, strategy = 'hybrid') => call('POST', '/collections/upgraded/search/instant', { query, retrieval_strategy: strategy, limit: 100 });

  test('a collection of the previous built-in model: refused, re-embedded, then searchable with every entity, pulled and pushed', async () => {
    const collection = (await call('POST', '/collections', { name: 'Upgraded', readable_id: 'upgraded' })).body;
    const pulled = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'upgraded', authentication: { credentials: { token: 't' } }, config: { entity_count: 12, hierarchy_depth: 0 } })).body;
    const [first] = (await call('GET', `/source-connections/${pulled.id}/jobs`)).body;
    await waitForJob(call, pulled.id, first.id, ['COMPLETED']);
    const pushed = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'upgraded', name: 'Pushed notes' })).body;
    const batch = (await call('POST', `/source-connections/${pushed.id}/entities`, { entities: [1, 2, 3].map((i) => ({ id: `note-${i}`, text: `Pushed note ${i} about zeppelins` })) })).body;
    await waitForJob(call, pushed.id, batch.job.id, ['COMPLETED']);
    const before = (await search('document')).body.results.length;
    expect(before).toBeGreaterThan(0);

    // As after an upgrade that changed the built-in model (same size, other vectors).
    await server.running.core.database.orm.em.getConnection().execute(`update collections set embedding_model_name = 'catchment-word-vectors-100d-sif' where id = ?`, [collection.id]);
    // Search scopes are cached for 1 s, and this change bypassed the service.
    await eventually(() => search('document'), (response) => response.status === 409);

    const outcome = await graphql(server.url, REEMBED, { readableId: 'upgraded' }, { apiKey: server.apiKey });
    expect(outcome.body.errors).toBeUndefined();
    const { reembedCollection } = outcome.body.data!;
    expect(reembedCollection.collection).toEqual({ readableId: 'upgraded', embeddingModelName: 'catchment-word-vectors-100d-sif2', vectorSize: 100 });
    expect(reembedCollection.skipped).toEqual([]);
    // Searchable at once (answering from what is re-embedded so far), not refused by a cached scope.
    expect((await search('document')).status).toBe(200);
    expect(reembedCollection.jobs.map((job: { sourceConnectionId: string; trigger: string }) => [job.sourceConnectionId, job.trigger]).sort()).toEqual([[pulled.id, 'reembed'], [pushed.id, 'reembed']].sort());

    const jobOf = (id: string) => reembedCollection.jobs.find((job: { sourceConnectionId: string }) => job.sourceConnectionId === id).id;
    // Every entity is embedded again (its stored hash was cleared), none is lost.
    expect(await waitForJob(call, pulled.id, jobOf(pulled.id), FINISHED)).toMatchObject({ status: 'COMPLETED', entities_updated: 12, entities_deleted: 0 });
    expect(await waitForJob(call, pushed.id, jobOf(pushed.id), FINISHED)).toMatchObject({ status: 'COMPLETED', entities_updated: 3, entities_deleted: 0 });
    expect((await search('document')).body.results.length).toBe(before);
    expect((await search('zeppelins', 'keyword')).body.results.map((r: { entity_id: string }) => r.entity_id).sort()).toEqual(['note-1', 'note-2', 'note-3']);
    expect((await call('GET', `/source-connections/${pulled.id}`)).body.entity_count).toBe(12);
    expect((await call('GET', `/source-connections/${pushed.id}`)).body.entity_count).toBe(3);
    // The push connection still takes batches afterwards.
    const later = (await call('POST', `/source-connections/${pushed.id}/entities`, { entities: [{ id: 'note-4', text: 'Pushed note 4 about zeppelins' }] })).body;
    expect(await waitForJob(call, pushed.id, later.job.id, FINISHED)).toMatchObject({ status: 'COMPLETED', entities_inserted: 1 });
  });

  test('a push connection whose raw data is not kept is skipped, with why; the others still re-embed', async () => {
    await call('POST', '/collections', { name: 'Partly kept', readable_id: 'partly-kept' });
    const unkept = (
      await call('POST', '/source-connections', {
        short_name: 'push',
        readable_collection_id: 'partly-kept',
        name: 'Unkept notes',
        sync_config: { handlers: { enable_vector_handlers: true, enable_raw_data_handler: false, enable_entity_db_handler: true } },
      })
    ).body;
    expect(unkept.id).toBeDefined();
    const kept = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'partly-kept', name: 'Kept notes' })).body;
    const { reembedCollection } = (await graphql(server.url, REEMBED, { readableId: 'partly-kept' }, { apiKey: server.apiKey })).body.data!;
    expect(reembedCollection.skipped).toEqual([{ sourceConnectionId: unkept.id, reason: expect.stringMatching(/raw data is not kept.*push its entities again/) }]);
    expect(reembedCollection.jobs.map((job: { sourceConnectionId: string }) => job.sourceConnectionId)).toEqual([kept.id]);
    expect(await waitForJob(call, kept.id, reembedCollection.jobs[0].id, FINISHED)).toMatchObject({ status: 'COMPLETED' });
  });

  test('CONFLICT while a sync of the collection is in progress; NOT_FOUND for another organization', async () => {
    const busy = (await call('POST', '/collections', { name: 'Busy one', readable_id: 'busy-one' })).body;
    const connection = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'busy-one', authentication: { credentials: { token: 't' } }, config: { entity_count: 3, hierarchy_depth: 0 }, sync_immediately: false })).body;
    // A job waiting for a worker counts as in progress (inserted as the service would, without a queue entry).
    await server.running.core.database.orm.em.getConnection().execute(
      `insert into sync_jobs (id, source_connection_id, organization_id, status, trigger, force_full_sync, created_at)
       values (gen_random_uuid(), ?, ?, 'PENDING', 'manual', false, now())`,
      [connection.id, busy.organization_id],
    );
    const refused = await graphql(server.url, REEMBED, { readableId: 'busy-one' }, { apiKey: server.apiKey });
    expect(refused.body.errors![0]).toMatchObject({ message: expect.stringMatching(/in progress: wait for it or cancel it/), extensions: { code: 'CONFLICT' } });
    const other = await server.running.core.services.organizations.createOrganization('Elsewhere');
    const hidden = await graphql(server.url, REEMBED, { readableId: 'upgraded' }, { apiKey: other.api_key });
    expect(hidden.body.errors![0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
  });
});
