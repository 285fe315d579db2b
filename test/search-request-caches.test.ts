import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { chunkIdOf } from '../src/platform/vectors/vector-index.js';
import { http, startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/**
 * Searches reuse their scope (collection and connections) and API keys are trusted for a moment
 * without the database; searches leave out the sync_id filter when the index holds live chunks only.
 * None of it may let a change of this process go unseen: each case changes something, then looks at once.
 */
describe('request-path caches see this process\'s changes at once', () => {
  let server: TestServer;
  let call: Api;
  const search = (collection: string, body: Record<string, unknown> = {}) =>
    call('POST', `/collections/${collection}/search/instant`, { query: 'document', retrieval_strategy: 'keyword', limit: 100, ...body });
  const syncStub = async (collection: string, entityCount: number) => {
    const connection = (
      await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, authentication: { credentials: { token: 't' } }, config: { entity_count: entityCount, hierarchy_depth: 0 } })
    ).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    expect((await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'])).status).toBe('COMPLETED');
    return connection.id as string;
  };
  const syncIds = (results: { service_system_metadata: { sync_id: string } }[]) => [...new Set(results.map((r) => r.service_system_metadata.sync_id))].sort();

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded', env: FAST_WORKER });
    call = api(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('chunks of a deleted connection are never returned, lingering or not, while another connection stays', async () => {
    const collection = (await call('POST', '/collections', { name: 'Two sources', readable_id: 'two-sources' })).body;
    const first = await syncStub('two-sources', 4);
    const second = await syncStub('two-sources', 3);
    expect(syncIds((await search('two-sources')).body.results)).toEqual([first, second].sort());

    await call('DELETE', `/source-connections/${first}`);
    // Chunks the worker has not cleaned up yet: copies of the deleted connection's, which its
    // cleanup (by source_connection_id) will not reach, so they linger for the rest of the test.
    const index = await server.running.core.vectors();
    const remaining = await index.list(collection.id, [], 100);
    const template = remaining.find((chunk) => chunk.sourceConnectionId === second)!;
    const vector = new Float32Array((await server.running.core.embedder()).dimensions).fill(0.1);
    const ghost = '00000000-0000-7000-8000-00000000dead';
    await index.add(
      collection.id,
      [0, 1, 2].map((i) => ({ ...template, chunkId: chunkIdOf(ghost, `doc-${i}`, template.chunkIndex), entityId: `doc-${i}`, sourceConnectionId: ghost, syncId: first, text: 'document lingering', vector })),
    );
    expect(syncIds((await search('two-sources')).body.results)).toEqual([second]);
    expect(syncIds((await search('two-sources', { retrieval_strategy: 'hybrid' })).body.results)).toEqual([second]);
    expect(syncIds((await search('two-sources', { retrieval_strategy: 'semantic' })).body.results)).toEqual([second]);
  });

  test('a deleted collection is gone at once, and one re-created under its readable id is searchable at once', async () => {
    await call('POST', '/collections', { name: 'Short lived', readable_id: 'short-lived' });
    await syncStub('short-lived', 2);
    expect((await search('short-lived')).body.results.length).toBeGreaterThan(0);
    expect((await call('DELETE', '/collections/short-lived')).status).toBe(200);
    expect((await search('short-lived')).status).toBe(404);
    await call('POST', '/collections', { name: 'Short lived', readable_id: 'short-lived' });
    expect((await search('short-lived')).body.results).toEqual([]);
    const again = await syncStub('short-lived', 3);
    expect(syncIds((await search('short-lived')).body.results)).toEqual([again]);
  });

  test('an API key revoked by this process is refused at once, after it was just accepted', async () => {
    const organizations = server.running.core.services.organizations;
    const created = await organizations.createApiKey((await server.running.core.services.auth.authenticateApiKey(server.apiKey)).organizationId);
    expect((await http(server.url, 'GET', '/collections', { apiKey: created.api_key })).status).toBe(200);
    await organizations.revokeApiKey(created.id);
    expect((await http(server.url, 'GET', '/collections', { apiKey: created.api_key })).status).toBe(401);
  });
});
