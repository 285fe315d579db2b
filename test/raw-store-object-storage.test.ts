import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestServer, type TestServer } from './support/harness.js';
import { TestS3Server } from './support/s3-server.js';
import { api, eventually, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/**
 * The raw data store on S3-compatible object storage (CATCHMENT_RAW_STORE_URL), in the servers
 * deployment (PostgreSQL, Redis), against a local server speaking the S3 REST API with SigV4 checked
 * on every request: syncs write there, replay_from_arf and re-embedding read from there, and deletes
 * empty it — as they do with the files store (test/sync-config.test.ts, test/reembed.test.ts).
 */
describe('raw data store on S3-compatible object storage (against a local server speaking the S3 REST API)', () => {
  const s3 = new TestS3Server();
  let server: TestServer;
  let call: Api;
  const FINISHED = ['COMPLETED', 'FAILED', 'CANCELLED'];

  beforeAll(async () => {
    await s3.start();
    s3.keys.set('AKIDCATCHMENT', 'raw-store-secret-key');
    s3.buckets.set('catchment-raw', new Map());
    server = await startTestServer({
      deployment: 'servers',
      env: {
        ...FAST_WORKER,
        CATCHMENT_RAW_STORE_URL: 's3://catchment-raw/deployment-a',
        CATCHMENT_RAW_STORE_ENDPOINT: s3.url,
        CATCHMENT_RAW_STORE_ACCESS_KEY_ID: 'AKIDCATCHMENT',
        CATCHMENT_RAW_STORE_SECRET_ACCESS_KEY: 'raw-store-secret-key',
      },
    });
    call = api(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server?.stop();
    await s3.stop();
  });

  /** The bucket's keys of one connection's raw data, by kind (entities, files). */
  const stored = (collectionId: string, connectionId: string) => [...s3.buckets.get('catchment-raw')!.keys()].filter((key) => key.startsWith(`deployment-a/raw/${collectionId}/${connectionId}/`));

  const run = async (connectionId: string, query = '', body?: unknown) => {
    const job = (await call('POST', `/source-connections/${connectionId}/run${query}`, body)).body;
    return waitForJob(call, connectionId, job.id, FINISHED);
  };

  test('a sync writes its raw data to the bucket; replay reads it back without the source; deleting the connection empties it', async () => {
    const collection = (await call('POST', '/collections', { name: 'Raw on S3', readable_id: 'raw-on-s3' })).body;
    const connection = (
      await call('POST', '/source-connections', {
        short_name: 'stub',
        readable_collection_id: 'raw-on-s3',
        authentication: { credentials: { token: 't' } },
        config: { entity_count: 15, hierarchy_depth: 0 },
        sync_immediately: false,
      })
    ).body;
    expect(await run(connection.id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 15 });
    // One pack (a blob of JSON lines) per batch, not an object per entity.
    const packKeys = stored(collection.id, connection.id).filter((key) => key.includes('/packs/'));
    expect(packKeys).toHaveLength(1);
    const lines = s3.buckets.get('catchment-raw')!.get(packKeys[0]!)!.body.toString('utf8').split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.entityId).sort()).toEqual(Array.from({ length: 15 }, (_, i) => `stub-${i}`).sort());

    // The source now fails: a replay must read the bucket, not the source.
    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 15, fail_after: 0, hierarchy_depth: 0 } });
    const replayed = await run(connection.id, '?force_full_sync=true', { sync_config: { behavior: { replay_from_arf: true, skip_hash_comparison: true } } });
    expect(replayed).toMatchObject({ status: 'COMPLETED', entities_updated: 15, entities_deleted: 0 });
    const listings = s3.requests.filter((request) => request.method === 'GET' && request.query.get('list-type') === '2' && request.status === 200);
    expect(listings.length).toBeGreaterThan(0);

    expect((await call('DELETE', `/source-connections/${connection.id}`)).status).toBe(200);
    await eventually(async () => stored(collection.id, connection.id), (keys) => keys.length === 0);
  });

  test('re-embedding a collection replays every entity from the bucket', async () => {
    const collection = (await call('POST', '/collections', { name: 'Reembed on S3', readable_id: 'reembed-on-s3' })).body;
    const pushed = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'reembed-on-s3', name: 'Pushed notes' })).body;
    const batch = (await call('POST', `/source-connections/${pushed.id}/entities`, { entities: [1, 2, 3, 4].map((i) => ({ id: `note-${i}`, text: `Pushed note ${i} about zeppelins` })) })).body;
    expect(await waitForJob(call, pushed.id, batch.job.id, FINISHED)).toMatchObject({ status: 'COMPLETED', entities_inserted: 4 });
    expect(stored(collection.id, pushed.id).filter((key) => key.includes('/packs/'))).toHaveLength(1);

    const reembedded = (await call('POST', '/graphql', { query: 'mutation($id: String!) { reembedCollection(readableId: $id) { jobs { id sourceConnectionId } skipped { reason } } }', variables: { id: 'reembed-on-s3' } })).body;
    expect(reembedded.errors).toBeUndefined();
    const [job] = reembedded.data.reembedCollection.jobs;
    expect(await waitForJob(call, pushed.id, job.id, FINISHED)).toMatchObject({ status: 'COMPLETED', entities_updated: 4, entities_deleted: 0 });
    const found = (await call('POST', '/collections/reembed-on-s3/search/instant', { query: 'zeppelins', retrieval_strategy: 'keyword', limit: 10 })).body;
    expect(found.results.map((result: { entity_id: string }) => result.entity_id).sort()).toEqual(['note-1', 'note-2', 'note-3', 'note-4']);

    expect((await call('DELETE', '/collections/reembed-on-s3')).status).toBe(200);
    await eventually(async () => [...s3.buckets.get('catchment-raw')!.keys()].filter((key) => key.startsWith(`deployment-a/raw/${collection.id}/`)), (keys) => keys.length === 0);
  });
});
