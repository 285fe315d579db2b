import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LanceDbVectorIndex } from './lancedb-index.js';
import type { ChunkRecord, VectorIndex } from './vector-index.js';

const DIMENSIONS = 8;
const unit = (hot: number) => Float32Array.from({ length: DIMENSIONS }, (_, i) => (i === hot ? 1 : 0));

function chunk(entityId: string, overrides: Partial<ChunkRecord> = {}): ChunkRecord {
  return {
    chunkId: `conn-a:${entityId}:0`,
    sourceConnectionId: 'conn-a',
    entityId,
    chunkIndex: 0,
    name: `Entity ${entityId}`,
    text: `plain text of ${entityId}`,
    vector: unit(0),
    entityType: 'doc',
    sourceName: 'stub',
    breadcrumbs: [{ entity_id: 'folder-1', name: 'Folder one', entity_type: 'folder' }],
    createdAt: new Date('2024-01-01T00:00:00Z'),
    updatedAt: null,
    webUrl: `https://example.test/${entityId}`,
    url: null,
    syncId: 'conn-a',
    syncJobId: 'job-1',
    rawSourceFields: { n: 1, nested: { ok: true } },
    access: { viewers: null, isPublic: true },
    ...overrides,
  };
}

describe('LanceDB vector index (real files)', () => {
  let directory: string;
  let index: VectorIndex;

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'catchment-lance-'));
    index = await LanceDbVectorIndex.open(directory, DIMENSIONS);
    await index.add('col-1', [
      chunk('alpha', { vector: unit(1), text: 'the quick brown fox' }),
      chunk("o'brien", { vector: unit(2), text: 'an irish surname with a quote', chunkIndex: 3, createdAt: new Date('2025-06-01T00:00:00Z') }),
      chunk('gamma', { vector: unit(3), text: 'zebra crossing', sourceConnectionId: 'conn-b', chunkId: 'conn-b:gamma:0', syncId: 'conn-b', breadcrumbs: [] }),
    ]);
    await index.add('col-2', [chunk('other')]);
  });
  afterAll(async () => {
    await index.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('counts per collection and by filter; unknown collections are empty', async () => {
    expect(await index.count('col-1')).toBe(3);
    expect(await index.count('col-2')).toBe(1);
    expect(await index.count('nope')).toBe(0);
    expect(await index.search('nope', { strategy: 'semantic', vector: unit(0), limit: 5, offset: 0 })).toEqual([]);
    const bySync = (value: string) => [{ conditions: [{ field: 'service_system_metadata.sync_id' as const, operator: 'equals' as const, value }] }];
    expect(await index.count('col-1', bySync('conn-b'))).toBe(1);
    expect(await index.count('col-1', [{ conditions: [{ field: 'service_system_metadata.chunk_index', operator: 'greater_than_or_equal', value: 1 }] }])).toBe(1);
    expect(await index.count('col-1', [{ conditions: [{ field: 'created_at', operator: 'greater_than', value: '2025-01-01T00:00:00Z' }] }])).toBe(1);
    expect(await index.count('col-1', [{ conditions: [{ field: 'breadcrumbs.entity_id', operator: 'equals', value: 'folder-1' }] }])).toBe(2);
    expect(await index.count('col-1', [{ conditions: [{ field: 'entity_id', operator: 'in', value: ['alpha', "o'brien"] }] }])).toBe(2);
    // Groups are ORed.
    expect(await index.count('col-1', [...bySync('conn-b'), { conditions: [{ field: 'name', operator: 'contains', value: 'alpha' }] }])).toBe(2);
    await expect(index.count('col-1', [{ conditions: [{ field: 'entity_id', operator: 'in', value: 'alpha' }] }])).rejects.toThrow(/needs an array/);
  });

  test('semantic, keyword and hybrid search rank the matching chunk first and return every field', async () => {
    const semantic = await index.search('col-1', { strategy: 'semantic', vector: unit(2), limit: 2, offset: 0 });
    expect(semantic[0]!.chunk.entityId).toBe("o'brien");
    expect(semantic[0]!.chunk).toEqual({ ...chunk("o'brien", { text: 'an irish surname with a quote', chunkIndex: 3, createdAt: new Date('2025-06-01T00:00:00Z') }), vector: undefined, chunkId: "conn-a:o'brien:0" } as never);
    const keyword = await index.search('col-1', { strategy: 'keyword', text: 'zebra', limit: 5, offset: 0 });
    expect(keyword.map((r) => r.chunk.entityId)).toEqual(['gamma']);
    await index.add('col-1', [chunk('late', { chunkId: 'conn-a:late:0', text: 'a xylophone arrives later' })]);
    expect((await index.search('col-1', { strategy: 'keyword', text: 'xylophone', limit: 5, offset: 0 })).map((r) => r.chunk.entityId)).toEqual(['late']);
    const hybrid = await index.search('col-1', { strategy: 'hybrid', text: 'fox', vector: unit(1), limit: 3, offset: 0 });
    expect(hybrid[0]!.chunk.entityId).toBe('alpha');
    const page = await index.search('col-1', { strategy: 'semantic', vector: unit(0), limit: 2, offset: 1 });
    const all = await index.search('col-1', { strategy: 'semantic', vector: unit(0), limit: 3, offset: 0 });
    expect(page.map((r) => r.chunk.chunkId)).toEqual(all.slice(1, 3).map((r) => r.chunk.chunkId));
  });

  test('deletes by entity (ids with quotes), by connection and by collection; data survives reopening', async () => {
    await index.deleteEntities('col-1', 'conn-a', ["o'brien", 'late']);
    expect(await index.count('col-1')).toBe(2);
    await index.close();
    index = await LanceDbVectorIndex.open(directory, DIMENSIONS);
    expect(await index.count('col-1')).toBe(2);
    await index.deleteSourceConnection('col-1', 'conn-b');
    expect(await index.count('col-1')).toBe(1);
    await index.deleteCollection('col-2');
    expect(await index.count('col-2')).toBe(0);
    expect(await index.count('col-1')).toBe(1);
  });
});
