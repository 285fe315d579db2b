import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import weaviate, { ApiKey, type FilterValue } from 'weaviate-client';
import { silentLogger } from '../../connectors/connector-testing.js';
import { ValidationError } from '../../shared/errors.js';
import { loadConfig } from '../../config.js';
import { createVectorIndex, lanceDbOptions } from './create-vector-index.js';
import { LanceDbVectorIndex } from './lancedb/lancedb-index.js';
import { makeChunk, vectorIndexContract } from './vector-index.contract.js';
import type { FilterCondition, FilterGroup, FilterableField, FilterOperator, ScoredChunk } from './vector-index.js';
import { WeaviateVectorIndex, connectionOptions, insertSlices } from './weaviate-index.js';
import { likePattern, weaviateFilter, type WeaviateFilter } from './weaviate/filters.js';
import { toChunk, toObject } from './weaviate/objects.js';
import { documentPageOfHits, effectiveStrategy, resultScore } from './weaviate/ranking.js';
import { chunkClassSchema, tenantName } from './weaviate/schema.js';

const DIMENSIONS = 16;
const WEAVIATE_URL = process.env.WEAVIATE_URL;

/** Against a real Weaviate: a class of its own per run, deleted afterwards. */
const openWeaviate = async () => {
  const className = `CatchmentContract${randomUUID().replace(/-/g, '')}`;
  const settings = { url: WEAVIATE_URL!, apiKey: process.env.WEAVIATE_API_KEY, grpcPort: Number(process.env.WEAVIATE_GRPC_PORT ?? 50051) };
  return {
    index: await WeaviateVectorIndex.open({ ...settings, dimensions: DIMENSIONS, className }),
    dimensions: DIMENSIONS,
    cleanup: async () => {
      const client = await weaviate.connectToCustom(connectionOptions(settings));
      await client.collections.delete(className);
      await client.close();
    },
  };
};

if (WEAVIATE_URL) vectorIndexContract('Weaviate', openWeaviate);
else describe.skip('VectorIndex contract: Weaviate (requires WEAVIATE_URL)', () => vectorIndexContract('Weaviate', openWeaviate));

/** A translated filter in a compact, readable form: `property Operator value`, And(…), Or(…). */
function render(filter: WeaviateFilter): string {
  if (typeof filter === 'boolean') return String(filter);
  if (filter.operator === 'And' || filter.operator === 'Or') return `${filter.operator}(${filter.filters!.map(render).join(', ')})`;
  const value = filter.value instanceof Date ? filter.value.toISOString() : JSON.stringify(filter.value);
  return `${(filter.target as { property: string }).property} ${filter.operator} ${value}`;
}
const one = (condition: FilterCondition) => render(weaviateFilter([{ conditions: [condition] }]));

describe('Weaviate adapter: filter translation', () => {
  test('no filter, no groups and empty groups match everything (nothing is sent)', () => {
    expect(weaviateFilter(undefined)).toBe(true);
    expect(weaviateFilter([])).toBe(true);
    expect(weaviateFilter([{ conditions: [] }])).toBe(true);
    expect(weaviateFilter([{ conditions: [] }, { conditions: [{ field: 'entity_id', operator: 'equals', value: 'x' }] }])).toBe(true);
  });

  const cases: [FilterCondition, string][] = [
    [{ field: 'entity_id', operator: 'equals', value: "it's" }, `entity_id Equal "it's"`],
    [{ field: 'service_system_metadata.original_entity_id', operator: 'not_equals', value: 'e-1' }, 'entity_id NotEqual "e-1"'],
    [{ field: 'name', operator: 'contains', value: 'Q3 *draft?' }, 'name Like "*Q3 ?draft?*"'],
    [{ field: 'name', operator: 'in', value: ['Roadmap', 'Plan'] }, 'name ContainsAny ["Roadmap","Plan"]'],
    [{ field: 'service_system_metadata.source_name', operator: 'not_in', value: ['slack', 'notion'] }, 'And(source_name NotEqual "slack", source_name NotEqual "notion")'],
    [{ field: 'service_system_metadata.sync_job_id', operator: 'not_in', value: ['j-1'] }, 'sync_job_id NotEqual "j-1"'],
    [{ field: 'service_system_metadata.entity_type', operator: 'equals', value: 42 }, 'entity_type Equal "42"'],
    [{ field: 'service_system_metadata.sync_id', operator: 'contains', value: 's-' }, 'sync_id Like "*s-*"'],
    [{ field: 'service_system_metadata.chunk_index', operator: 'equals', value: 0 }, 'chunk_index Equal 0'],
    [{ field: 'service_system_metadata.chunk_index', operator: 'greater_than', value: 1 }, 'chunk_index GreaterThan 1'],
    [{ field: 'service_system_metadata.chunk_index', operator: 'less_than_or_equal', value: 2 }, 'chunk_index LessThanEqual 2'],
    [{ field: 'service_system_metadata.chunk_index', operator: 'in', value: [1, 2] }, 'Or(chunk_index Equal 1, chunk_index Equal 2)'],
    [{ field: 'service_system_metadata.chunk_index', operator: 'not_in', value: [0] }, 'chunk_index NotEqual 0'],
    [{ field: 'created_at', operator: 'greater_than', value: '2025-03-15T13:00:00+02:00' }, 'created_at GreaterThan 2025-03-15T11:00:00.000Z'],
    [{ field: 'created_at', operator: 'greater_than_or_equal', value: 1704067200000 }, 'created_at GreaterThanEqual 2024-01-01T00:00:00.000Z'],
    [{ field: 'updated_at', operator: 'less_than', value: '2020-01-01' }, 'updated_at LessThan 2020-01-01T00:00:00.000Z'],
    [{ field: 'updated_at', operator: 'not_equals', value: '2025-01-01T00:00:00Z' }, 'updated_at NotEqual 2025-01-01T00:00:00.000Z'],
    [{ field: 'created_at', operator: 'in', value: ['2023-05-05T00:00:00Z', '2025-03-15T12:00:00.000Z'] }, 'Or(created_at Equal 2023-05-05T00:00:00.000Z, created_at Equal 2025-03-15T12:00:00.000Z)'],
    [{ field: 'breadcrumbs.entity_id', operator: 'equals', value: 'ws-1' }, 'breadcrumb_entity_ids ContainsAny ["ws-1"]'],
    [{ field: 'breadcrumbs.name', operator: 'contains', value: 'Finance' }, 'breadcrumb_names ContainsAny ["Finance"]'],
    [{ field: 'breadcrumbs.entity_type', operator: 'not_equals', value: 'folder' }, 'breadcrumb_entity_types NotEqual "folder"'],
    [{ field: 'breadcrumbs.entity_id', operator: 'in', value: ['f-2', 'p-1'] }, 'breadcrumb_entity_ids ContainsAny ["f-2","p-1"]'],
    [{ field: 'breadcrumbs.entity_id', operator: 'not_in', value: ['ws-1', 'p-1'] }, 'And(breadcrumb_entity_ids NotEqual "ws-1", breadcrumb_entity_ids NotEqual "p-1")'],
    [{ field: 'entity_id', operator: 'in', value: [] }, 'false'],
    [{ field: 'entity_id', operator: 'not_in', value: [] }, 'true'],
  ];
  test.each(cases)('%j → %s', (condition, expected) => {
    expect(one(condition)).toBe(expected);
  });

  test('dates are Date values (sent as RFC 3339 text), chunk indexes integers', () => {
    const date = weaviateFilter([{ conditions: [{ field: 'created_at', operator: 'equals', value: '2024-01-01T00:00:00.001Z' }] }]) as FilterValue;
    expect(date.value).toBeInstanceOf(Date);
    expect((date.value as Date).getTime()).toBe(Date.UTC(2024, 0, 1, 0, 0, 0, 1));
    const index = weaviateFilter([{ conditions: [{ field: 'service_system_metadata.chunk_index', operator: 'equals', value: 3 }] }]) as FilterValue;
    expect(index.value).toBe(3);
  });

  test('conditions of a group are ANDed, groups ORed; empty lists fold away', () => {
    const filter: FilterGroup[] = [
      {
        conditions: [
          { field: 'service_system_metadata.source_name', operator: 'equals', value: 'notion' },
          { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 0 },
        ],
      },
      { conditions: [{ field: 'name', operator: 'equals', value: 'Roadmap' }] },
      { conditions: [{ field: 'entity_id', operator: 'in', value: [] }] },
      { conditions: [{ field: 'entity_id', operator: 'equals', value: 'e-9' }, { field: 'entity_id', operator: 'not_in', value: [] }] },
    ];
    expect(render(weaviateFilter(filter))).toBe('Or(And(source_name Equal "notion", chunk_index Equal 0), name Equal "Roadmap", entity_id Equal "e-9")');
    expect(weaviateFilter([{ conditions: [{ field: 'entity_id', operator: 'in', value: [] }, { field: 'name', operator: 'equals', value: 'x' }] }])).toBe(false);
  });

  test('every filterable field with every operator it allows becomes a filter on its own property', () => {
    const properties: Record<FilterableField, string> = {
      entity_id: 'entity_id',
      name: 'name',
      created_at: 'created_at',
      updated_at: 'updated_at',
      'breadcrumbs.entity_id': 'breadcrumb_entity_ids',
      'breadcrumbs.name': 'breadcrumb_names',
      'breadcrumbs.entity_type': 'breadcrumb_entity_types',
      'service_system_metadata.entity_type': 'entity_type',
      'service_system_metadata.source_name': 'source_name',
      'service_system_metadata.original_entity_id': 'entity_id',
      'service_system_metadata.chunk_index': 'chunk_index',
      'service_system_metadata.sync_id': 'sync_id',
      'service_system_metadata.sync_job_id': 'sync_job_id',
    };
    const leaves = (filter: WeaviateFilter): FilterValue[] =>
      typeof filter === 'boolean' ? [] : filter.filters ? filter.filters.flatMap(leaves) : [filter];
    let translated = 0;
    for (const [field, propertyName] of Object.entries(properties) as [FilterableField, string][]) {
      const sample = field.endsWith('_at') ? '2024-01-01T00:00:00Z' : field.endsWith('chunk_index') ? 1 : 'v';
      const operators: FilterOperator[] = ['equals', 'not_equals', 'in', 'not_in'];
      if (field.endsWith('_at') || field.endsWith('chunk_index')) operators.push('greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal');
      else operators.push('contains');
      for (const operator of operators) {
        const value = operator === 'in' || operator === 'not_in' ? ([sample, sample] as string[] | number[]) : sample;
        const found = leaves(weaviateFilter([{ conditions: [{ field, operator, value }] }]));
        expect(found.length).toBeGreaterThan(0);
        for (const leaf of found) expect((leaf.target as { property: string }).property).toBe(propertyName);
        translated++;
      }
    }
    expect(translated).toBe(13 * 5 + 3 * 3);
  });

  const invalid: [string, FilterCondition, string, string][] = [
    ['a range operator on breadcrumbs', { field: 'breadcrumbs.name', operator: 'greater_than', value: 'a' }, 'operator', 'value_error'],
    ['a range operator on a string field', { field: 'name', operator: 'less_than', value: 'm' }, 'operator', 'value_error'],
    ['contains on a date', { field: 'created_at', operator: 'contains', value: '2024' }, 'operator', 'value_error'],
    ['an array with equals', { field: 'entity_id', operator: 'equals', value: ['e-1'] }, 'value', 'value_error'],
    ['a scalar with in', { field: 'entity_id', operator: 'in', value: 'e-1' }, 'value', 'list_type'],
    ['a non-date for a date field', { field: 'created_at', operator: 'greater_than', value: 'yesterday-ish' }, 'value', 'datetime_parsing'],
    ['a fraction for chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 1.5 }, 'value', 'int_type'],
    ['a boolean for a string field', { field: 'name', operator: 'equals', value: true }, 'value', 'string_type'],
    ['an unknown field', { field: 'payload.secret' as FilterableField, operator: 'equals', value: 'x' }, 'field', 'enum'],
    ['an unknown operator', { field: 'name', operator: 'like' as FilterOperator, value: 'x' }, 'operator', 'enum'],
  ];
  test.each(invalid)('rejects %s with a ValidationError at its location', (_label, condition, key, type) => {
    const attempt = () => weaviateFilter([{ conditions: [{ field: 'name', operator: 'equals', value: 'ok' }] }, { conditions: [{ field: 'name', operator: 'equals', value: 'ok' }, condition] }]);
    expect(attempt).toThrow(ValidationError);
    try {
      attempt();
    } catch (error) {
      expect((error as ValidationError).issues).toEqual([expect.objectContaining({ loc: ['filter', 1, 'conditions', 1, key], type })]);
    }
  });

  test('every bad condition of a filter is reported at once', () => {
    const attempt = () =>
      weaviateFilter([
        { conditions: [{ field: 'nope' as FilterableField, operator: 'equals', value: 'x' }] },
        { conditions: [{ field: 'created_at', operator: 'equals', value: 'soon' }] },
      ]);
    expect(attempt).toThrow(ValidationError);
    try {
      attempt();
    } catch (error) {
      expect((error as ValidationError).issues.map((issue) => issue.loc)).toEqual([
        ['filter', 0, 'conditions', 0, 'field'],
        ['filter', 1, 'conditions', 0, 'value'],
      ]);
    }
  });

  test('on the wire (the installed client serializes filters for gRPC): typed values per property kind', async () => {
    // Pins the client's own serializer, so a client upgrade that changes value typing fails here.
    const serializer = pathToFileURL(path.resolve('node_modules/weaviate-client/dist/node/esm/collections/serialize/index.js')).href;
    const { Serialize } = (await import(serializer)) as { Serialize: { filtersGRPC(filter: FilterValue): Record<string, unknown> } };
    const grpc = Serialize.filtersGRPC(
      weaviateFilter([
        {
          conditions: [
            { field: 'service_system_metadata.chunk_index', operator: 'greater_than', value: 2 },
            { field: 'created_at', operator: 'less_than', value: '2024-06-01T00:00:00Z' },
            { field: 'breadcrumbs.name', operator: 'in', value: ['Finance', 'Events'] },
          ],
        },
      ]) as FilterValue,
    ) as { filters: Record<string, unknown>[] };
    expect(grpc.filters).toHaveLength(3);
    expect(grpc.filters[0]).toMatchObject({ target: { property: 'chunk_index' }, valueInt: 2 });
    expect(grpc.filters[0]!.valueText).toBeUndefined();
    expect(grpc.filters[1]).toMatchObject({ target: { property: 'created_at' }, valueText: '2024-06-01T00:00:00.000Z' });
    expect(grpc.filters[2]).toMatchObject({ target: { property: 'breadcrumb_names' }, valueTextArray: { values: ['Finance', 'Events'] } });
  });

  test('like patterns: the text between wildcards, its own wildcards reduced to one-character ones', () => {
    expect(likePattern('50%_off')).toBe('*50%_off*');
    expect(likePattern('a*b?c')).toBe('*a?b?c*');
  });
});

describe('Weaviate adapter: class, tenants, objects', () => {
  test('the class: multi-tenant with tenants made on write, a self-provided cosine vector, every property indexed for its use', () => {
    const schema = chunkClassSchema('Chunks');
    expect(schema.class).toBe('Chunks');
    expect(schema.multiTenancyConfig).toEqual({ enabled: true, autoTenantCreation: true, autoTenantActivation: true });
    expect(schema.vectorConfig).toEqual({ chunk: { vectorizer: { none: {} }, vectorIndexType: 'hnsw', vectorIndexConfig: { distance: 'cosine' } } });
    const byName = new Map(schema.properties!.map((p) => [p.name, p]));
    const exact = { tokenization: 'field', indexFilterable: true, indexSearchable: false };
    for (const name of ['chunk_id', 'source_connection_id', 'entity_id', 'name', 'entity_type', 'source_name', 'sync_id', 'sync_job_id']) {
      expect(byName.get(name)).toEqual({ name, dataType: ['text'], ...exact });
    }
    for (const name of ['breadcrumb_entity_ids', 'breadcrumb_names', 'breadcrumb_entity_types']) {
      expect(byName.get(name)).toEqual({ name, dataType: ['text[]'], ...exact });
    }
    for (const name of ['text', 'name_words']) {
      expect(byName.get(name)).toEqual({ name, dataType: ['text'], tokenization: 'word', indexFilterable: false, indexSearchable: true });
    }
    for (const name of ['breadcrumbs', 'web_url', 'url', 'raw_source_fields', 'access']) {
      expect(byName.get(name)).toMatchObject({ dataType: ['text'], indexFilterable: false, indexSearchable: false });
    }
    expect(byName.get('chunk_index')).toEqual({ name: 'chunk_index', dataType: ['int'], indexFilterable: true, indexSearchable: false });
    expect(byName.get('created_at')).toEqual({ name: 'created_at', dataType: ['date'], indexFilterable: true, indexSearchable: false });
    expect(byName.get('updated_at')?.dataType).toEqual(['date']);
    expect(byName.size).toBe(21);
  });

  test('tenant names: collection UUIDs as they are; other ids hashed into a valid, distinct name', () => {
    expect(tenantName('0b7e1c2a-1111-4222-8333-944445555666')).toBe('0b7e1c2a-1111-4222-8333-944445555666');
    for (const id of ['a-b', 'ab', "x'; drop", 'x'.repeat(500)]) expect(tenantName(id)).toMatch(/^h_[0-9a-f]{62}$/);
    expect(tenantName('a-b')).not.toBe(tenantName('ab'));
  });

  test('connection options: REST at the URL, gRPC on the same host at its own port, TLS for https, the key as credentials', () => {
    expect(connectionOptions({ url: 'http://weaviate:8080', grpcPort: 50051 })).toEqual({
      httpHost: 'weaviate',
      httpPort: 8080,
      httpSecure: false,
      grpcHost: 'weaviate',
      grpcPort: 50051,
      grpcSecure: false,
    });
    const secure = connectionOptions({ url: 'https://vectors.example.test/weaviate/', grpcPort: 443, apiKey: 'k-1' });
    expect(secure).toMatchObject({ httpHost: 'vectors.example.test', httpPort: 443, httpSecure: true, httpPath: '/weaviate', grpcPort: 443, grpcSecure: true });
    expect(secure.authCredentials).toBeInstanceOf(ApiKey);
    expect((secure.authCredentials as ApiKey).apiKey).toBe('k-1');
    expect(connectionOptions({ url: 'http://10.0.0.5', grpcPort: 50052 })).toMatchObject({ httpPort: 80, grpcPort: 50052 });
  });

  test('a chunk becomes properties, a named vector and a UUIDv5 of its chunk id, and comes back whole', () => {
    const full = makeChunk(4, 1, {
      name: 'Ünïcödé — 日本語',
      breadcrumbs: [
        { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
        { entity_id: 'db-9', name: 'Roadmap DB', entity_type: 'database' },
      ],
      createdAt: new Date('2023-04-05T06:07:08.912Z'),
      updatedAt: new Date('2025-12-31T23:59:59.999Z'),
      url: 'https://files.example.test/1',
      rawSourceFields: { nested: { list: [1, 'two', null] } },
      access: { viewers: ['user:1'], isPublic: false },
    });
    const object = toObject(full);
    expect(object.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(toObject({ ...full, text: 'other' }).id).toBe(object.id);
    expect(toObject(makeChunk(4, 2)).id).not.toBe(object.id);
    expect(object.vectors.chunk).toHaveLength(4);
    expect(object.vectors.chunk![0]).toBeCloseTo(full.vector[0]!, 6);
    expect(object.properties).toMatchObject({
      chunk_id: 'conn-1:entity-1:0',
      name: full.name,
      name_words: full.name,
      breadcrumb_entity_ids: ['ws-1', 'db-9'],
      breadcrumb_names: ['Workspace', 'Roadmap DB'],
      breadcrumb_entity_types: ['workspace', 'database'],
      created_at: full.createdAt,
      url: 'https://files.example.test/1',
    });
    const { vector: _vector, ...expected } = full;
    expect(toChunk(object.properties)).toEqual(expected);

    // Null dates and url are absent (Weaviate has no nulls) and read back as null.
    const sparse = makeChunk(4, 3, { createdAt: null, updatedAt: null, url: null, text: '' });
    const stored = toObject(sparse).properties;
    expect(Object.keys(stored)).not.toEqual(expect.arrayContaining(['created_at']));
    expect('updated_at' in stored || 'url' in stored).toBe(false);
    // gRPC leaves empty text out of the reply: it still reads as ''.
    const { text: _text, ...reply } = stored;
    const { vector: _v, ...sparseExpected } = sparse;
    expect(toChunk(reply)).toEqual(sparseExpected);
  });

  test('adds are cut into slices bounded in count and size', () => {
    const small = Array.from({ length: 600 }, (_, i) => toObject(makeChunk(4, i)));
    expect(insertSlices(small).map((slice) => slice.length)).toEqual([250, 250, 100]);
    const big = Array.from({ length: 5 }, (_, i) => toObject(makeChunk(4, i, { text: 'x'.repeat(1024 * 1024) })));
    expect(insertSlices(big).map((slice) => slice.length)).toEqual([1, 1, 1, 1, 1]);
    expect(insertSlices([])).toEqual([]);
  });
});

describe('Weaviate adapter: scores and strategies', () => {
  test('semantic scores are 1 − cosine distance; keyword and hybrid keep Weaviate scores; missing values rank last', () => {
    expect(resultScore('semantic', { distance: 0.25 })).toBeCloseTo(0.75);
    expect(resultScore('semantic', { distance: 2 })).toBe(-1);
    expect(resultScore('semantic', undefined)).toBe(-1);
    expect(resultScore('keyword', { score: 3.5 })).toBe(3.5);
    expect(resultScore('hybrid', { score: 0.9, distance: 0.1 })).toBe(0.9);
    expect(resultScore('keyword', {})).toBe(0);
  });

  test('ranking: one hit per document (its best chunk), best first, ties by chunk id, pages cut from the same order', async () => {
    const hit = (entity: string, score: number, chunkIndex = 0): ScoredChunk => ({ chunk: { ...toChunk({ chunk_id: `conn:${entity}:${chunkIndex}` }) }, score });
    const hits = [hit('c', 0.5), hit('a', 0.5), hit('d', 0.9), hit('b', 0.5), hit('e', 0.1), hit('d', 0.2, 1)];
    const page = (offset: number, limit: number) => documentPageOfHits(async () => hits, offset, limit);
    const order = (await page(0, 10)).map((h) => h.chunk.chunkId);
    expect(order).toEqual(['conn:d:0', 'conn:a:0', 'conn:b:0', 'conn:c:0', 'conn:e:0']);
    // d: its best chunk's score.
    expect((await page(0, 1))[0]!.score).toBeCloseTo(0.9, 10);
    expect([...(await page(0, 2)), ...(await page(2, 2)), ...(await page(4, 2))].map((h) => h.chunk.chunkId)).toEqual(order);
    expect(await page(5, 3)).toEqual([]);
  });

  test('hybrid at the extremes of keywordWeight is the pure ranking; text-less queries need no BM25', () => {
    expect(effectiveStrategy('hybrid', 0.3, 'words')).toBe('hybrid');
    expect(effectiveStrategy('hybrid', undefined, 'words')).toBe('hybrid');
    expect(effectiveStrategy('hybrid', 0, 'words')).toBe('semantic');
    expect(effectiveStrategy('hybrid', 1, 'words')).toBe('keyword');
    expect(effectiveStrategy('hybrid', 7, 'words')).toBe('keyword');
    expect(effectiveStrategy('hybrid', 0.5, '')).toBe('semantic');
    expect(effectiveStrategy('keyword', undefined, '')).toBe('none');
    expect(effectiveStrategy('semantic', 1, '')).toBe('semantic');
    expect(() => effectiveStrategy('fuzzy' as 'hybrid', undefined, 'x')).toThrow(ValidationError);
  });
});

describe('createVectorIndex', () => {
  test('without WEAVIATE_URL: LanceDB under <data dir>/lancedb', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'catchment-factory-'));
    try {
      const index = await createVectorIndex({ dataDir, weaviateUrl: undefined, weaviateApiKey: undefined, weaviateGrpcPort: 50051, lanceDbIndexCacheMb: 128, lanceDbShardRows: 250_000 }, 4, silentLogger);
      expect(index).toBeInstanceOf(LanceDbVectorIndex);
      const id = randomUUID();
      await index.add(id, [makeChunk(4, 1)]);
      expect(await index.count(id)).toBe(1);
      await index.close();
      const reopened = await LanceDbVectorIndex.open(path.join(dataDir, 'lancedb'), 4);
      expect(await reopened.count(id)).toBe(1);
      await reopened.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('CATCHMENT_LANCEDB_INDEX_CACHE_MB becomes the LanceDB index cache in bytes, and an upkeep failure is a warning naming its collection', () => {
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as never;
    const options = lanceDbOptions(loadConfig({ CATCHMENT_LANCEDB_INDEX_CACHE_MB: '48' }, '/nonexistent/.env'), logger);
    expect(options.indexCacheBytes).toBe(48 * 1024 * 1024);
    expect(lanceDbOptions(loadConfig({}, '/nonexistent/.env'), logger).indexCacheBytes).toBe(128 * 1024 * 1024);
    expect(lanceDbOptions(loadConfig({}, '/nonexistent/.env'), logger).shardRows).toBe(250_000);
    expect(lanceDbOptions(loadConfig({ CATCHMENT_LANCEDB_SHARD_ROWS: '50000' }, '/nonexistent/.env'), logger).shardRows).toBe(50_000);
    options.onUpkeepError!('collection-1', new Error('commit conflict'));
    expect(warnings).toEqual([[{ collectionId: 'collection-1', err: 'commit conflict' }, expect.stringContaining('compaction')]]);
  });

  test('with WEAVIATE_URL: connects to Weaviate (a port with nothing listening fails at once, without the key in the error)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const started = Date.now();
    const error = await createVectorIndex({ dataDir: tmpdir(), weaviateUrl: `http://127.0.0.1:${port}`, weaviateApiKey: 'wv-secret-key', weaviateGrpcPort: port, lanceDbIndexCacheMb: 128, lanceDbShardRows: 250_000 }, 4, silentLogger).then(
      () => null,
      (caught: unknown) => caught as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.constructor.name).toBe('WeaviateStartUpError');
    expect(`${error!.message} ${error!.stack}`).not.toContain('wv-secret-key');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

/**
 * A recording stand-in for Weaviate: its REST schema and tenant endpoints over HTTP, and its gRPC
 * service (the client's own definitions, served by nice-grpc as the client uses it). It checks what
 * the adapter sends through the real client and how it reads real replies; Weaviate's query semantics
 * are the contract suite's business (run with WEAVIATE_URL).
 */
async function startFakeWeaviate() {
  const esm = (file: string) => pathToFileURL(path.resolve('node_modules/weaviate-client/dist/node/esm', file)).href;
  const { WeaviateDefinition } = (await import(esm('proto/v1/weaviate.js'))) as { WeaviateDefinition: object };
  const { HealthDefinition } = (await import(esm('proto/google/health/v1/health.js'))) as { HealthDefinition: object };
  const niceGrpc = (await import('nice-grpc')) as unknown as {
    createServer(): { add(definition: object, implementation: object): void; listen(address: string): Promise<number>; shutdown(): Promise<void> };
    ServerError: new (code: number, details: string) => Error;
  };
  const classes = new Map<string, Record<string, unknown>>();
  const tenants = new Set<string>();
  const requests: { method: string; request: Record<string, unknown> }[] = [];
  const replies = {
    /** The reply to every search, or a function of the search request (its `limit`, say). */
    search: { took: 0, results: [] as unknown[], groupByResults: [] } as Record<string, unknown> | ((request: Record<string, unknown>) => Record<string, unknown>),
    deletes: [] as { matches: number; successful: number; failed: number }[],
    count: 0,
    /** An error message the next searches fail with (as Weaviate answers for a missing tenant). */
    searchError: null as string | null,
    /**
     * When set, each batch waits (up to 5 s) until this many batches are in flight together, and
     * `batchesInFlight` records the most seen: slices sent one after another never reach it.
     */
    batchGate: 0,
    batchesInFlight: 0,
  };
  let inFlight = 0;
  const record = (method: string, request: Record<string, unknown>) => requests.push({ method, request });
  const grpc = niceGrpc.createServer();
  grpc.add(HealthDefinition, { check: async () => ({ status: 1 }), watch: async function* () {} });
  grpc.add(WeaviateDefinition, {
    search: async (request: Record<string, unknown>) => {
      record('Search', request);
      if (replies.searchError) throw new niceGrpc.ServerError(2, replies.searchError);
      return typeof replies.search === 'function' ? replies.search(request) : replies.search;
    },
    batchObjects: async (request: { objects: { tenant: string }[] }) => {
      record('BatchObjects', request as unknown as Record<string, unknown>);
      for (const object of request.objects) tenants.add(object.tenant);
      inFlight++;
      replies.batchesInFlight = Math.max(replies.batchesInFlight, inFlight);
      for (const deadline = Date.now() + 5000; replies.batchGate > 0 && inFlight < replies.batchGate && replies.batchesInFlight < replies.batchGate && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      inFlight--;
      return { took: 0, errors: [] };
    },
    batchDelete: async (request: Record<string, unknown>) => {
      record('BatchDelete', request);
      return { took: 0, objects: [], ...(replies.deletes.shift() ?? { matches: 0, successful: 0, failed: 0 }) };
    },
    aggregate: async (request: Record<string, unknown>) => {
      record('Aggregate', request);
      return { took: 0, singleResult: { objectsCount: replies.count } };
    },
    batchReferences: async () => ({ took: 0, errors: [] }),
    tenantsGet: async () => ({ took: 0, tenants: [] }),
    batchStream: async function* () {},
  });
  const grpcPort = await grpc.listen('127.0.0.1:0');
  const http = await import('node:http');
  const rest = http.createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString('utf8')));
    req.on('end', () => {
      const send = (status: number, value?: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(value === undefined ? '' : JSON.stringify(value));
      };
      const url = new URL(req.url!, 'http://fake');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      requests.push({ method: `${req.method} ${url.pathname}`, request: body ? (JSON.parse(body) as Record<string, unknown>) : {} });
      if (parts[1] === 'meta') return send(200, { version: '1.30.0', hostname: 'fake', modules: {}, grpcMaxMessageSize: 10_485_760 });
      if (parts[1] === '.well-known') return send(200);
      if (parts[1] === 'schema' && parts.length === 2 && req.method === 'GET') return send(200, { classes: [...classes.values()] });
      if (parts[1] === 'schema' && parts.length === 2 && req.method === 'POST') {
        const created = JSON.parse(body) as Record<string, unknown>;
        classes.set(String(created.class), created);
        return send(200, created);
      }
      if (parts[1] === 'schema' && parts.length === 3) return classes.has(parts[2]!) ? send(200, classes.get(parts[2]!)) : send(404, { error: [{ message: 'not found' }] });
      if (parts[3] === 'tenants' && req.method === 'GET') return tenants.has(parts[4]!) ? send(200, { name: parts[4], activityStatus: 'HOT' }) : send(404);
      if (parts[3] === 'tenants' && req.method === 'DELETE') {
        for (const name of JSON.parse(body) as string[]) tenants.delete(name);
        return send(200);
      }
      return send(404, { error: [{ message: `no route ${req.method} ${url.pathname}` }] });
    });
  });
  await new Promise<void>((resolve) => rest.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(rest.address() as { port: number }).port}`;
  return {
    url,
    grpcPort,
    classes,
    tenants,
    requests,
    replies,
    calls: (method: string) => requests.filter((r) => r.method === method).map((r) => r.request),
    stop: async () => {
      await grpc.shutdown();
      await new Promise<void>((resolve) => rest.close(() => resolve()));
    },
  };
}

describe('WeaviateVectorIndex through the real client, against a recording fake Weaviate', () => {
  let fake: Awaited<ReturnType<typeof startFakeWeaviate>>;
  let index: WeaviateVectorIndex;
  const collection = '0b7e1c2a-1111-4222-8333-944445555666';

  beforeAll(async () => {
    fake = await startFakeWeaviate();
    index = await WeaviateVectorIndex.open({ url: fake.url, grpcPort: fake.grpcPort, dimensions: 4, className: 'Chunks' });
  });
  afterAll(async () => {
    await index?.close();
    await fake?.stop();
  });

  test('open creates the class from its schema once; a class made otherwise is refused', async () => {
    expect(fake.calls('POST /v1/schema')).toEqual([chunkClassSchema('Chunks')]);
    const again = await WeaviateVectorIndex.open({ url: fake.url, grpcPort: fake.grpcPort, dimensions: 4, className: 'Chunks' });
    await again.close();
    expect(fake.calls('POST /v1/schema')).toHaveLength(1);
    const schema = chunkClassSchema('Foreign');
    fake.classes.set('Foreign', { ...schema, multiTenancyConfig: { enabled: false }, properties: schema.properties!.filter((p) => p.name !== 'sync_id') });
    await expect(WeaviateVectorIndex.open({ url: fake.url, grpcPort: fake.grpcPort, dimensions: 4, className: 'Foreign' })).rejects.toThrow(
      /Foreign was not made by this version of Catchment \(multi-tenancy is off; property sync_id is missing\)/,
    );
  });

  test('add: objects in concurrent slices, to the collection tenant, with typed properties and the named vector', async () => {
    const chunks = Array.from({ length: 600 }, (_, i) =>
      makeChunk(4, i, { breadcrumbs: i === 0 ? [{ entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' }] : [], updatedAt: i === 0 ? new Date('2025-01-02T03:04:05.678Z') : null }),
    );
    fake.replies.batchGate = 3;
    fake.replies.batchesInFlight = 0;
    try {
      await index.add(collection, chunks);
    } finally {
      fake.replies.batchGate = 0;
    }
    const batches = fake.calls('BatchObjects') as { objects: Record<string, unknown>[] }[];
    expect(batches.map((b) => b.objects.length).sort()).toEqual([100, 250, 250]);
    // All three slices in flight together (one after another, the first would wait alone).
    expect(fake.replies.batchesInFlight).toBe(3);
    const first = batches.flatMap((b) => b.objects).find((o) => o.uuid === toObject(chunks[0]!).id) as {
      collection: string;
      tenant: string;
      vectors: { name: string; vectorBytes: Uint8Array }[];
      properties: { nonRefProperties: Record<string, unknown>; textArrayProperties: { propName: string; values: string[] }[]; emptyListProps: string[] };
    };
    expect(first.collection).toBe('Chunks');
    expect(first.tenant).toBe(collection);
    expect(first.vectors.map((v) => v.name)).toEqual(['chunk']);
    expect(Array.from(new Float32Array(Uint8Array.from(first.vectors[0]!.vectorBytes).buffer))).toEqual(Array.from(chunks[0]!.vector));
    expect(first.properties.nonRefProperties).toMatchObject({
      chunk_id: 'conn-1:entity-0:0',
      chunk_index: 0,
      created_at: '2024-01-01T00:00:00.000Z',
      updated_at: '2025-01-02T03:04:05.678Z',
    });
    expect(first.properties.nonRefProperties).not.toHaveProperty('url');
    expect(first.properties.textArrayProperties).toEqual(expect.arrayContaining([{ propName: 'breadcrumb_names', values: ['Workspace'] }]));
    await expect(index.add(collection, [makeChunk(3, 1)])).rejects.toThrow(/3-dimensional/);
  });

  test('search: semantic by nearVector on the named vector, filtered in Weaviate, scored 1 − distance and ranked here', async () => {
    const result = (chunkId: string, distance: number) => ({
      metadata: { id: randomUUID(), distance, distancePresent: true },
      properties: {
        nonRefProps: {
          fields: {
            chunk_id: { textValue: chunkId },
            entity_id: { textValue: chunkId.split(':')[1] },
            chunk_index: { intValue: 2 },
            created_at: { dateValue: '2023-04-05T06:07:08.912Z' },
            breadcrumbs: { textValue: '[{"entity_id":"ws-1","name":"Workspace","entity_type":"workspace"}]' },
            access: { textValue: '{"viewers":["u:1"],"isPublic":false}' },
          },
        },
      },
    });
    fake.replies.search = { took: 0, groupByResults: [], results: [result('c:b:0', 0.3), result('c:a:0', 0.1), result('c:c:0', 0.3)] };
    const filter: FilterGroup[] = [{ conditions: [{ field: 'service_system_metadata.chunk_index', operator: 'greater_than', value: 1 }] }];
    const hits = await index.search(collection, { strategy: 'semantic', vector: new Float32Array([1, 0, 0, 0]), filter, limit: 2, offset: 1 });
    expect(hits.map((h) => [h.chunk.chunkId, Number(h.score.toFixed(3))])).toEqual([
      ['c:b:0', 0.7],
      ['c:c:0', 0.7],
    ]);
    expect(hits[0]!.chunk).toMatchObject({ chunkIndex: 2, createdAt: new Date('2023-04-05T06:07:08.912Z'), updatedAt: null, url: null, access: { viewers: ['u:1'], isPublic: false } });
    const request = fake.calls('Search').at(-1) as Record<string, any>;
    expect(request).toMatchObject({ collection: 'Chunks', tenant: collection, limit: 200, filters: { valueInt: 1, target: { property: 'chunk_index' } } });
    expect(request.offset ?? 0).toBe(0);
    expect(request.nearVector.targets.targetVectors).toEqual(['chunk']);
    expect(request.properties.nonRefProperties).toEqual(expect.arrayContaining(['chunk_id', 'text', 'breadcrumbs', 'created_at']));
    expect(request.properties.nonRefProperties).not.toContain('name_words');
    expect(request.metadata).toMatchObject({ distance: true, uuid: true });
  });

  test('search: while a few documents fill the hits, it asks again twice as deep, and the page holds other documents', async () => {
    const hit = (chunkId: string, distance: number) => ({
      metadata: { id: randomUUID(), distance, distancePresent: true },
      properties: { nonRefProps: { fields: { chunk_id: { textValue: chunkId }, entity_id: { textValue: chunkId.split(':')[1] }, chunk_index: { intValue: Number(chunkId.split(':')[2]) } } } },
    });
    // Three documents of 100 chunks each nearest, then twenty of one chunk: Weaviate answers the first `limit`.
    const ordered = [...Array.from({ length: 300 }, (_, i) => hit(`c:long-${i % 3}:${Math.floor(i / 3)}`, 0.1)), ...Array.from({ length: 20 }, (_, i) => hit(`c:short-${i}:0`, 0.5))];
    fake.replies.search = (request) => ({ took: 0, groupByResults: [], results: ordered.slice(0, Number(request.limit)) });
    const before = fake.calls('Search').length;
    try {
      const hits = await index.search(collection, { strategy: 'semantic', vector: new Float32Array([1, 0, 0, 0]), limit: 10, offset: 0 });
      const entities = hits.map((h) => h.chunk.entityId);
      expect(entities.slice(0, 3)).toEqual(['long-0', 'long-1', 'long-2']);
      expect(new Set(entities.slice(3)).size).toBe(7);
      expect(entities.slice(3).every((entity) => entity.startsWith('short-'))).toBe(true);
      expect(fake.calls('Search').slice(before).map((request) => request.limit)).toEqual([200, 400]);
    } finally {
      fake.replies.search = { took: 0, groupByResults: [], results: [] };
    }
  });

  test('search: hybrid is Weaviate relative-score fusion with alpha = 1 − keywordWeight over text and name; keyword is BM25', async () => {
    fake.replies.search = { took: 0, groupByResults: [], results: [] };
    await index.search(collection, { strategy: 'hybrid', vector: new Float32Array([0, 1, 0, 0]), text: 'rotate keys', keywordWeight: 0.3, limit: 10, offset: 0 });
    const hybrid = fake.calls('Search').at(-1) as Record<string, any>;
    expect(hybrid.hybridSearch).toMatchObject({ query: 'rotate keys', properties: ['text', 'name_words'], fusionType: 2 });
    expect(hybrid.hybridSearch.alpha).toBeCloseTo(0.7);
    expect(hybrid.hybridSearch.targets.targetVectors).toEqual(['chunk']);
    expect(hybrid.limit).toBe(200);
    expect(hybrid.filters).toBeUndefined();
    await index.search(collection, { strategy: 'keyword', text: 'rotate', limit: 5, offset: 0 });
    expect((fake.calls('Search').at(-1) as Record<string, any>).bm25Search).toMatchObject({ query: 'rotate', properties: ['text', 'name_words'] });
    const before = fake.calls('Search').length;
    expect(await index.search(collection, { strategy: 'keyword', text: '  ', limit: 5, offset: 0 })).toEqual([]);
    expect(await index.search(collection, { strategy: 'semantic', vector: new Float32Array(4), filter: [{ conditions: [{ field: 'entity_id', operator: 'in', value: [] }] }], limit: 5, offset: 0 })).toEqual([]);
    expect(fake.calls('Search')).toHaveLength(before);
  });

  test('count aggregates in the tenant with the filter; list sorts by entity then chunk index', async () => {
    fake.replies.count = 42;
    expect(await index.count(collection, [{ conditions: [{ field: 'name', operator: 'contains', value: 'Road' }] }])).toBe(42);
    expect(fake.calls('Aggregate').at(-1)).toMatchObject({ collection: 'Chunks', tenant: collection, objectsCount: true, filters: { valueText: '*Road*', target: { property: 'name' } } });
    fake.replies.search = { took: 0, groupByResults: [], results: [] };
    await index.list(collection, [], 20);
    expect(fake.calls('Search').at(-1)).toMatchObject({
      limit: 20,
      sortBy: [
        { ascending: true, path: ['entity_id'] },
        { ascending: true, path: ['chunk_index'] },
      ],
    });
  });

  test('deletes: by connection and entities, repeated until nothing matches; a collection drops its tenant', async () => {
    fake.replies.deletes = [{ matches: 3, successful: 3, failed: 0 }];
    const before = fake.calls('BatchDelete').length;
    await index.deleteEntities(collection, 'conn-1', ['a', 'b', 'a']);
    const deletes = fake.calls('BatchDelete').slice(before) as Record<string, any>[];
    expect(deletes).toHaveLength(2);
    expect(deletes[0]).toMatchObject({ collection: 'Chunks', tenant: collection });
    expect(deletes[0]!.filters.filters).toEqual([
      expect.objectContaining({ target: expect.objectContaining({ property: 'source_connection_id' }), valueText: 'conn-1' }),
      expect.objectContaining({ target: expect.objectContaining({ property: 'entity_id' }), valueTextArray: { values: ['a', 'b'] } }),
    ]);
    fake.replies.deletes = [{ matches: 2, successful: 1, failed: 1 }];
    await expect(index.deleteSourceConnection(collection, 'conn-1')).rejects.toThrow(/failed to delete 1 of 2/);
    expect(fake.tenants.has(collection)).toBe(true);
    await index.deleteCollection(collection);
    expect(fake.tenants.has(collection)).toBe(false);
    expect(fake.calls('DELETE /v1/schema/Chunks/tenants')).toEqual([[collection]]);
  });

  test('a collection without a tenant reads as empty; other errors surface', async () => {
    fake.replies.searchError = 'tenant not found';
    try {
      expect(await index.search(randomUUID(), { strategy: 'keyword', text: 'x', limit: 5, offset: 0 })).toEqual([]);
      fake.tenants.add('0b7e1c2a-1111-4222-8333-000000000001');
      await expect(index.search('0b7e1c2a-1111-4222-8333-000000000001', { strategy: 'keyword', text: 'x', limit: 5, offset: 0 })).rejects.toThrow();
    } finally {
      fake.replies.searchError = null;
    }
  });
});
