import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { stubEntity } from '../src/connectors/stub/index.js';
import { graphql, startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

const STUB = { entity_count: 120, seed: 5, size_mix: 'small', hierarchy_depth: 2, code_files: false, delay_ms: 0, revision: 0 };

describe('instant search (embedded deployment)', () => {
  let server: TestServer;
  let call: Api;
  let connectionId: string;
  const search = (body: unknown, collection = 'searchable') => call('POST', `/collections/${collection}/search/instant`, body);

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded', env: FAST_WORKER });
    call = api(server.url, server.apiKey);
    await call('POST', '/collections', { name: 'Searchable', readable_id: 'searchable' });
    const connection = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'searchable', authentication: { credentials: { token: 't' } }, config: STUB })).body;
    connectionId = connection.id;
    const [job] = (await call('GET', `/source-connections/${connectionId}/jobs`)).body;
    expect((await waitForJob(call, connectionId, job.id, ['COMPLETED', 'FAILED'])).status).toBe('COMPLETED');
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('keyword search finds the one entity holding a term, with every SearchResult field', async () => {
    const response = await search({ query: '42', retrieval_strategy: 'keyword', limit: 3 });
    expect(response.status).toBe(200);
    const [top] = response.body.results;
    expect(top).toEqual({
      entity_id: 'stub-42',
      name: 'Document 42',
      relevance_score: expect.any(Number),
      breadcrumbs: [
        { entity_id: 'folder-1-0', name: 'Folder 1.0', entity_type: 'stub_folder' },
        { entity_id: 'folder-2-4', name: 'Folder 2.4', entity_type: 'stub_folder' },
      ],
      created_at: stubEntity(42, STUB as never).createdAt!.toISOString(),
      updated_at: stubEntity(42, STUB as never).updatedAt!.toISOString(),
      textual_representation: expect.stringContaining('Document 42'),
      service_system_metadata: { source_name: 'stub', entity_type: 'stub_document', chunk_index: 0, original_entity_id: 'stub-42', sync_id: connectionId, sync_job_id: expect.any(String) },
      access: { viewers: null, is_public: true },
      web_url: 'https://stub.example/entities/42',
      url: null,
      raw_source_fields: { index: 42, size_class: 240, revision: 0 },
    });
  });

  test('semantic and hybrid search rank an entity first when queried with its own text; scores descend', async () => {
    const text = stubEntity(77, STUB as never).text.split('\n')[1]!;
    for (const retrieval_strategy of ['semantic', 'hybrid', undefined]) {
      const { body } = await search({ query: text, retrieval_strategy, limit: 5 });
      expect(body.results[0].entity_id).toBe('stub-77');
      const scores = body.results.map((r: { relevance_score: number }) => r.relevance_score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    }
  });

  test('filters: groups ORed, conditions ANDed, on every kind of field', async () => {
    const ids = async (filter: unknown, query = 'document folder data', limit = 200) =>
      (await search({ query, retrieval_strategy: 'keyword', filter, limit })).body.results.map((r: { entity_id: string }) => r.entity_id) as string[];
    const folders = await ids([{ conditions: [{ field: 'service_system_metadata.entity_type', operator: 'equals', value: 'stub_folder' }] }], 'folder');
    expect(folders.length).toBeGreaterThan(0);
    expect(folders.every((id) => id.startsWith('folder-'))).toBe(true);
    const inFolder = await ids([{ conditions: [{ field: 'breadcrumbs.entity_id', operator: 'equals', value: 'folder-2-3' }] }]);
    expect(new Set(inFolder)).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `stub-${30 + i}`)));
    const either = await ids([
      { conditions: [{ field: 'entity_id', operator: 'in', value: ['stub-1', 'stub-2'] }] },
      { conditions: [{ field: 'entity_id', operator: 'equals', value: 'stub-99' }] },
    ]);
    expect(either.sort()).toEqual(['stub-1', 'stub-2', 'stub-99']);
    const recent = await ids([{ conditions: [{ field: 'created_at', operator: 'greater_than_or_equal', value: stubEntity(110, STUB as never).createdAt!.toISOString() }, { field: 'service_system_metadata.entity_type', operator: 'not_equals', value: 'stub_folder' }] }]);
    expect(recent.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `stub-${110 + i}`).sort());
    const named = await ids([{ conditions: [{ field: 'name', operator: 'contains', value: 'ment 11' }] }]);
    expect(named.every((id) => /^stub-11\d?$/.test(id))).toBe(true);
  });

  test('offset and limit page through one ranking', async () => {
    const all = (await search({ query: 'data', retrieval_strategy: 'keyword', limit: 10 })).body.results.map((r: { entity_id: string }) => r.entity_id);
    const page = (await search({ query: 'data', retrieval_strategy: 'keyword', limit: 4, offset: 3 })).body.results.map((r: { entity_id: string }) => r.entity_id);
    expect(page).toEqual(all.slice(3, 7));
  });

  test.each([
    [{ query: 'x', filter: [{ conditions: [{ field: 'nope', operator: 'equals', value: 'a' }] }] }, ['body', 'filter', 0, 'conditions', 0, 'field']],
    [{ query: 'x', filter: [{ conditions: [{ field: 'name', operator: 'in', value: 'a' }] }] }, ['body', 'filter', 0, 'conditions', 0, 'value']],
    [{ query: 'x', limit: 0 }, ['body', 'limit']],
    [{ query: 'x', retrieval_strategy: 'neural' }, ['body', 'retrieval_strategy']],
    [{}, ['body', 'query']],
  ])('%j → 422 at %j', async (body, loc) => {
    const response = await search(body);
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc })]));
  });

  test('another organization and unknown collections get 404; GraphQL answers the same query', async () => {
    const other = await server.running.core.services.organizations.createOrganization('Outsiders');
    expect((await api(server.url, other.api_key)('POST', '/collections/searchable/search/instant', { query: '42' })).status).toBe(404);
    expect((await search({ query: '42' }, 'missing-collection')).status).toBe(404);
    const viaGraphql = await graphql(server.url, '{ searchInstant(readableId: "searchable", input: { query: "42", retrievalStrategy: keyword, limit: 1 }) { results { entityId serviceSystemMetadata { syncId } } } }', {}, { apiKey: server.apiKey });
    expect(viaGraphql.body.data!.searchInstant.results).toEqual([{ entityId: 'stub-42', serviceSystemMetadata: { syncId: connectionId } }]);
  });

  test('a collection embedded by another model than the active one is refused with a 409 naming both, in every tier', async () => {
    const made = (await call('POST', '/collections', { name: 'Embedded elsewhere', readable_id: 'embedded-elsewhere' })).body;
    expect(made).toMatchObject({ embedding_model_name: 'catchment-word-vectors-100d-sif2', vector_size: 100 });
    // As if it had been created while the service ran another embedder.
    await server.running.core.database.orm.em.getConnection().execute(`update collections set embedding_model_name = 'text-embedding-3-small', vector_size = 1536 where id = ?`, [made.id]);
    for (const tier of ['instant', 'classic', 'agentic']) {
      const refused = await call('POST', `/collections/embedded-elsewhere/search/${tier}`, { query: 'anything' });
      expect([tier, refused.status]).toEqual([tier, 409]);
      expect(refused.body.detail).toMatch(/embedded with text-embedding-3-small \(1536 dimensions\).*catchment-word-vectors-100d-sif2 \(100\)/);
    }
  });

  test('a sync into a collection embedded by another model of the same size fails naming both models, and writes no vectors', async () => {
    const made = (await call('POST', '/collections', { name: 'Older model', readable_id: 'older-model' })).body;
    // As if created before the built-in model changed (the previous version had the same 100 dimensions).
    await server.running.core.database.orm.em.getConnection().execute(`update collections set embedding_model_name = 'catchment-word-vectors-100d-sif' where id = ?`, [made.id]);
    const connection = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'older-model', authentication: { credentials: { token: 't' } }, config: { entity_count: 5, hierarchy_depth: 0 } })).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    const failed = await waitForJob(call, connection.id, job.id, ['FAILED', 'COMPLETED']);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatch(/embedded with catchment-word-vectors-100d-sif \(100 dimensions\).*catchment-word-vectors-100d-sif2 \(100\)/);
    expect(await (await server.running.core.vectors()).count(made.id)).toBe(0);
  });

  test('a deleted connection\'s data is unsearchable at once', async () => {
    await call('POST', '/collections', { name: 'Soon empty', readable_id: 'soon-empty' });
    const connection = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'soon-empty', authentication: { credentials: { token: 't' } }, config: { entity_count: 5, hierarchy_depth: 0 } })).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    await waitForJob(call, connection.id, job.id, ['COMPLETED']);
    expect((await search({ query: 'document', retrieval_strategy: 'keyword' }, 'soon-empty')).body.results.length).toBeGreaterThan(0);
    await call('DELETE', `/source-connections/${connection.id}`);
    expect((await search({ query: 'document', retrieval_strategy: 'keyword' }, 'soon-empty')).body.results).toEqual([]);
  });
});
