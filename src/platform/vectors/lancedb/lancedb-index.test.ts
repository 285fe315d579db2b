import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { Precision } from 'apache-arrow';
import { type ChunkLayout, chunkSchema, chunksToArrow, DETAILS_COLUMN, ENTITY_KEY_COLUMN, fullTextColumns, KEYWORDS_COLUMN, LEGACY_LAYOUT } from './arrow.js';
import { entityKeyOf, isContainerKey } from './entity-key.js';
import { whereClause } from './filters.js';
import { DEFAULT_INDEX_CACHE_BYTES, DEFAULT_METADATA_CACHE_BYTES } from './connection.js';
import { LanceDbVectorIndex, type LanceDbVectorIndexOptions } from './lancedb-index.js';
import { ivfPartitionsFor, vectorIndexPartitions } from './maintenance.js';
import type { LanceDbTables } from './tables.js';
import { ivfProbesFor } from './rankings.js';
import { nativeExecutable } from './rows.js';
import { makeChunk, seededVector, vectorIndexContract } from '../vector-index.contract.js';
import type { ChunkRecord, FilterGroup, ScoredChunk } from '../vector-index.js';
import { markedWrite, unindexedFullTextRows, useLanceDbIndex } from '../../../../test/support/lancedb-fixture.js';

const DIMENSIONS = 16;
/** A cache cap far below what a 3,000-row table's indexes take. */
const CAP = 64 * 1024;

/** The contract once with a collection in one table, once spread over shards of a few rows each (every search merges them). */
for (const [name, options] of [
  ['LanceDB (real files)', {}],
  ['LanceDB (real files, shards of 4 rows)', { shardRows: 4 }],
] as const) {
  vectorIndexContract(name, async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'catchment-lance-contract-'));
    return {
      index: await LanceDbVectorIndex.open(directory, DIMENSIONS, options),
      dimensions: DIMENSIONS,
      cleanup: async () => rmSync(directory, { recursive: true, force: true }),
    };
  });
}

/**
 * A collection's table as an older version made it, in `layout` (two full-text columns, `text` and
 * `name`, as every layout before KEYWORDS_COLUMN had), written straight through LanceDB.
 */
async function makeOlderTable(directory: string, collectionId: string, layout: ChunkLayout, records: ChunkRecord[]): Promise<void> {
  const schema = chunkSchema(DIMENSIONS, layout);
  const db = await lancedb.connect(directory);
  const made = await db.createTable(LanceDbVectorIndex.tableName(collectionId), chunksToArrow(records, schema), { schema });
  for (const column of fullTextColumns(layout)) await made.createIndex(column, { config: lancedb.Index.fts() });
  made.close();
  db.close();
}

describe('LanceDbVectorIndex', () => {
  const lance = useLanceDbIndex(DIMENSIONS, {}, 'all');
  const chunk = (seed: number, overrides: Partial<ChunkRecord> = {}) => makeChunk(DIMENSIONS, seed, overrides);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  /** A query between two chunks (nearer the first), so that its nearest lie in several IVF partitions. */
  const between = (seed: number, other: number) => seededVector(DIMENSIONS, seed).map((value, i) => value + 0.6 * seededVector(DIMENSIONS, other)[i]!);
  /** The chunk ids of the `n` chunks (of `chunk(seed)` for these seeds) nearest to `vector` by cosine, nearest first: the exact scan, in JS. */
  const exactNearest = (vector: Float32Array, seeds: number[], n: number) => {
    const cosine = (other: Float32Array) => {
      let dot = 0;
      let a = 0;
      let b = 0;
      for (let i = 0; i < vector.length; i++) {
        dot += vector[i]! * other[i]!;
        a += vector[i]! ** 2;
        b += other[i]! ** 2;
      }
      return dot / Math.sqrt(a * b);
    };
    return seeds
      .map((seed) => ({ seed, similarity: cosine(seededVector(DIMENSIONS, seed)) }))
      .sort((x, y) => y.similarity - x.similarity)
      .slice(0, n)
      .map(({ seed }) => chunk(seed).chunkId);
  };

  test('table names: UUIDs without dashes, other ids hex-encoded so distinct ids never share a table', () => {
    expect(LanceDbVectorIndex.tableName('0b7e1c2a-1111-4222-8333-944445555666')).toBe('chunks_0b7e1c2a111142228333944445555666');
    expect(LanceDbVectorIndex.tableName('a-b')).not.toBe(LanceDbVectorIndex.tableName('ab'));
    expect(LanceDbVectorIndex.tableName("x'; drop")).toMatch(/^chunks_h_[0-9a-f]+$/);
  });

  test('filters translate to LanceDB SQL with quotes doubled', () => {
    expect(whereClause(undefined)).toBeNull();
    expect(whereClause([])).toBeNull();
    expect(
      whereClause([
        { conditions: [{ field: 'service_system_metadata.original_entity_id', operator: 'equals', value: "o'k" }] },
        { conditions: [{ field: 'breadcrumbs.name', operator: 'in', value: ['a', "b'"] }, { field: 'updated_at', operator: 'not_equals', value: '2024-01-01T00:00:00Z' }] },
      ]),
    ).toBe(
      `((entity_id = 'o''k')) OR ((array_has(breadcrumb_names, 'a') OR array_has(breadcrumb_names, 'b''')) AND ` +
        `(updated_at IS NULL OR updated_at <> arrow_cast(1704067200000, 'Timestamp(Millisecond, Some("UTC"))')))`,
    );
  });

  test('settled() resolves once the writes and the optimize asked before it have ended (a sync leaves its optimize running)', async () => {
    const id = randomUUID();
    for (let write = 0; write < 3; write++) await lance.index.add(id, markedWrite(DIMENSIONS, write, 50));
    expect(await unindexedFullTextRows(lance.directory, id)).toBe(150);
    const writing = lance.index.add(id, markedWrite(DIMENSIONS, 3, 50));
    const optimizing = lance.index.optimize(id);
    await lance.index.settled(id);
    expect(await unindexedFullTextRows(lance.directory, id)).toBe(0);
    expect(await lance.index.count(id)).toBe(200);
    await Promise.all([writing, optimizing]);
  });

  test('an optimize asked before close() began but not started by then is left undone (rejected), and close() does not wait for it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-closing-'));
    try {
      const id = randomUUID();
      const index = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      for (let write = 0; write < 3; write++) await index.add(id, markedWrite(DIMENSIONS, write, 50));
      const writing = index.add(id, markedWrite(DIMENSIONS, 3, 50));
      const optimizing = index.optimize(id).then(
        () => 'optimized',
        (error: Error) => error.message,
      );
      await index.close();
      await writing;
      expect(await optimizing).toBe('LanceDbVectorIndex is closing: the optimize is left undone');
      expect(await unindexedFullTextRows(dir, id)).toBe(200);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('keyword search matches the name as well as the text', async () => {
    const id = randomUUID();
    await lance.index.add(id, [chunk(1, { name: 'Capybara handbook', text: 'nothing special' }), chunk(2, { text: 'capybara sighting' }), chunk(3)]);
    const results = await lance.index.search(id, { strategy: 'keyword', text: 'capybara', limit: 10, offset: 0 });
    expect(results.map((r) => r.chunk.entityId).sort()).toEqual(['entity-1', 'entity-2']);
  });

  test('data survives close and reopen from disk, keyword index included', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-reopen-'));
    try {
      const id = randomUUID();
      let first = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      await first.add(id, [chunk(1, { text: 'persistent wombat' }), chunk(2)]);
      await first.close();
      await expect(first.count(id)).rejects.toThrow(/closed/);
      // A read whose handle close() closes under it fails as the index does, not as LanceDB's "Table … is closed".
      const reader = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      const tables = (reader as unknown as { tables: LanceDbTables }).tables;
      await expect(
        tables.read(id, 0, async ([table]) => {
          await reader.close();
          return table!.countRows();
        }),
      ).rejects.toThrow(/^LanceDbVectorIndex is closed$/);
      const second = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      expect(await second.count(id)).toBe(2);
      expect((await second.search(id, { strategy: 'keyword', text: 'wombat', limit: 5, offset: 0 })).map((r) => r.chunk.entityId)).toEqual(['entity-1']);
      expect((await second.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 2), limit: 1, offset: 0 }))[0]!.chunk).toEqual(
        (({ vector: _v, ...rest }) => rest)(chunk(2)),
      );
      await second.add(id, [chunk(3)]);
      expect(await second.count(id)).toBe(3);
      await second.close();
      // A handle on other dimensions refuses the table instead of failing obscurely later.
      first = await LanceDbVectorIndex.open(dir, DIMENSIONS + 1);
      await expect(first.count(id)).rejects.toThrow(/dimensional/);
      await first.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('entity keys: one per connection and entity, whatever the chunk, its lowest bit telling containers; pairs that concatenate alike differ', () => {
    expect(entityKeyOf('conn-1', 'entity-1', false)).toBe(entityKeyOf('conn-1', 'entity-1', false));
    expect(entityKeyOf('a', 'bc', false)).not.toBe(entityKeyOf('ab', 'c', false));
    const keys = new Set(Array.from({ length: 20_000 }, (_, i) => entityKeyOf(`conn-${i % 7}`, `entity-${i}`, i % 3 === 0)));
    expect(keys.size).toBe(20_000);
    // The lowest bit tells containers, the rest is the entity's; the flag holds at either sign.
    for (const [connection, entity] of [['conn-1', 'entity-1'], ['conn-2', 'entity-9'], ['c', 'x:y']] as const) {
      const [plain, container] = [entityKeyOf(connection, entity, false), entityKeyOf(connection, entity, true)];
      expect([isContainerKey(plain), isContainerKey(container)]).toEqual([false, true]);
      expect(container - plain).toBe(1n);
    }
    expect(new Set([...keys].map((key) => key < 0n))).toEqual(new Set([true, false]));
  });

  test('a table of the layout before the entity key and details columns opens, ranks and reads back as a new table does, and takes writes in its own columns', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-legacy-'));
    const [legacyId, currentId] = [randomUUID(), randomUUID()];
    // Several chunks per entity, containers, one entity id in two connections: what rankings group.
    const records = Array.from({ length: 60 }, (_, i) =>
      chunk(i, {
        entityId: `entity-${i % 20}`,
        chunkIndex: Math.floor(i / 20),
        sourceConnectionId: i % 20 === 3 && i >= 40 ? 'conn-2' : 'conn-1',
        entityType: (i % 20) % 9 === 0 ? 'folder' : 'Page', // an entity's chunks share its type
        text: `${['aardvark', 'badger', 'capybara'][i % 3]} notes ${['river', 'forest'][i % 2]} ${i}`,
        // Display fields of every shape, which the two layouts store differently.
        breadcrumbs: i % 4 === 1 ? [{ entity_id: 'folder-1', name: 'Folder "one"', entity_type: 'folder' }] : [],
        updatedAt: i % 2 === 0 ? new Date(Date.UTC(2024, 5, 1, 12, 0, i)) : null,
        url: i % 5 === 2 ? `https://files.test/${i}?a=1&b=é` : null,
        rawSourceFields: i % 3 === 0 ? { nested: { list: [1, 'two', null] }, quote: 'it\'s "x"' } : {},
        access: i % 6 === 0 ? { viewers: ['user-1', 'group:2'], isPublic: false } : { viewers: null, isPublic: i % 2 === 1 ? true : null },
      }),
    );
    try {
      await makeOlderTable(dir, legacyId, LEGACY_LAYOUT, records);
      const opened = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      try {
        await opened.add(currentId, records);
        const queries = [
          { strategy: 'hybrid' as const, text: 'capybara river', vector: seededVector(DIMENSIONS, 7) },
          { strategy: 'keyword' as const, text: 'badger forest' },
          { strategy: 'semantic' as const, vector: seededVector(DIMENSIONS, 33) },
        ];
        // Every document (21: entity-3 is in two connections), as scores in order and the documents of
        // each score: equal scores break on each table's own chunk keys, so their order may differ.
        const documentsByScore = (results: ScoredChunk[]) => {
          const groups = new Map<number, string[]>();
          for (const { chunk: found, score } of results) groups.set(score, [...(groups.get(score) ?? []), `${found.sourceConnectionId}/${found.entityId}`].sort());
          return [...groups];
        };
        for (const query of queries) {
          const [legacy, current] = await Promise.all([legacyId, currentId].map((id) => opened.search(id, { ...query, limit: 30, offset: 0 })));
          expect(legacy.length).toBeGreaterThan(query.strategy === 'keyword' ? 10 : 20);
          // The same documents in the same groups; cosine similarities within half precision's rounding (the new table's vectors).
          const [legacyGroups, currentGroups] = [legacy, current].map(documentsByScore);
          expect(currentGroups.map(([, documents]) => documents)).toEqual(legacyGroups!.map(([, documents]) => documents));
          currentGroups!.forEach(([score], i) => expect(score).toBeCloseTo(legacyGroups![i]![0], 3));
        }
        // Every field reads back the same from either layout (the current one's details column, the old one's columns).
        const listed = await opened.list(currentId, [], 100);
        expect(listed).toHaveLength(60);
        expect(await opened.list(legacyId, [], 100)).toEqual(listed);
        // Writes to the old table carry its own columns; it still lacks the new one, and the new one has it.
        await opened.add(legacyId, [chunk(100, { text: 'late okapi' })]);
        expect((await opened.search(legacyId, { strategy: 'keyword', text: 'okapi', limit: 5, offset: 0 })).map((r) => r.chunk.entityId)).toEqual(['entity-100']);
        expect((await opened.stats(legacyId))!.layout.keyed).toBe(false);
        expect((await opened.stats(currentId))!.layout.keyed).toBe(true);
        const reopened = await lancedb.connect(dir);
        const columns = async (id: string) => (await (await reopened.openTable(LanceDbVectorIndex.tableName(id))).schema()).fields.map((field) => field.name);
        expect(await columns(legacyId)).toEqual(expect.arrayContaining(['breadcrumbs', 'web_url', 'url', 'raw_source_fields', 'access']));
        expect(await columns(legacyId)).not.toEqual(expect.arrayContaining([ENTITY_KEY_COLUMN]));
        expect(await columns(legacyId)).not.toEqual(expect.arrayContaining([DETAILS_COLUMN]));
        expect(await columns(currentId)).toEqual(expect.arrayContaining([ENTITY_KEY_COLUMN, DETAILS_COLUMN]));
        expect(await columns(currentId)).not.toEqual(expect.arrayContaining(['access']));
        reopened.close();
      } finally {
        await opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a table with two full-text columns (an older layout) counts the rows waiting for its index once, not once a column, when a keyword search decides to read the index alone', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-legacy-reach-'));
    const id = randomUUID();
    try {
      // 400 rows in both full-text indexes, then 300 written that neither holds: 300 wait, not 600.
      await makeOlderTable(dir, id, LEGACY_LAYOUT, Array.from({ length: 400 }, (_, i) => chunk(i, { text: `older row ${i}` })));
      const opened = await LanceDbVectorIndex.open(dir, DIMENSIONS, { keywordScanMaxUnindexedRows: 150 });
      try {
        await opened.add(id, Array.from({ length: 300 }, (_, i) => chunk(400 + i, { text: `newer zebra ${i}` })));
        expect(await unindexedFullTextRows(dir, id)).toBe(300);
        // More than 150 wait and no more than the 400 indexed: the index alone, so the newer rows are not found yet.
        expect(await opened.search(id, { strategy: 'keyword', text: 'zebra', limit: 5, offset: 0 })).toEqual([]);
        expect(await opened.search(id, { strategy: 'keyword', text: 'older', limit: 5, offset: 0 })).toHaveLength(5);
        await opened.optimize(id);
        expect(await opened.search(id, { strategy: 'keyword', text: 'zebra', limit: 5, offset: 0 })).toHaveLength(5);
      } finally {
        await opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('new tables store half-precision vectors and one full-text column; a table made with single-precision ones and two keeps them, ranks alike and takes writes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-precision-'));
    const [singleId, halfId] = [randomUUID(), randomUUID()];
    const records = Array.from({ length: 40 }, (_, i) => chunk(i, { text: `${['heron', 'otter'][i % 2]} note ${i}` }));
    try {
      await makeOlderTable(dir, singleId, { keyed: true, keywords: false, textInKeywords: false, precision: 'single' }, records);
      const opened = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      try {
        await opened.add(halfId, records);
        await opened.add(singleId, [chunk(100, { text: 'late heron' })]);
        await opened.add(halfId, [chunk(100, { text: 'late heron' })]);
        for (const id of [singleId, halfId]) await opened.optimize(id); // every row in the full-text index: the same BM25 statistics
        const reopened = await lancedb.connect(dir);
        const vectorItem = async (id: string) => {
          const vector = (await (await reopened.openTable(LanceDbVectorIndex.tableName(id))).schema()).fields.find((field) => field.name === 'vector')!;
          return (vector.type as { children: { type: { precision: number } }[] }).children[0]!.type.precision;
        };
        expect([await vectorItem(singleId), await vectorItem(halfId)]).toEqual([Precision.SINGLE, Precision.HALF]);
        const fullText = async (id: string) => (await (await reopened.openTable(LanceDbVectorIndex.tableName(id))).listIndices()).filter((index) => index.indexType === 'FTS').flatMap((index) => index.columns).sort();
        expect([await fullText(singleId), await fullText(halfId)]).toEqual([['name', 'text'], [KEYWORDS_COLUMN]]);
        reopened.close();
        for (const vector of [seededVector(DIMENSIONS, 100), seededVector(DIMENSIONS, 17)]) {
          const [single, half] = await Promise.all([singleId, halfId].map((id) => opened.search(id, { strategy: 'semantic', vector, limit: 10, offset: 0 })));
          expect(half.map((hit) => hit.chunk.entityId)).toEqual(single.map((hit) => hit.chunk.entityId));
          half.forEach((hit, i) => expect(hit.score).toBeCloseTo(single[i]!.score, 3));
        }
        // Keyword search matches `text` and `name` in the older table, KEYWORDS_COLUMN in the new one.
        for (const id of [singleId, halfId]) {
          expect((await opened.search(id, { strategy: 'keyword', text: 'late heron', limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-100');
        }
        expect((await opened.search(halfId, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 100), limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-100');
        expect((await opened.stats(singleId))!.layout.keyed).toBe(true);
      } finally {
        await opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('new tables keep a chunk’s text once, in the keywords column; a table made with a text column too reads back alike and takes writes in it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-text-'));
    const [twiceId, onceId] = [randomUUID(), randomUUID()];
    // Names and texts with line breaks, non-ASCII and an empty text: the text is what follows the name's line break.
    const records = Array.from({ length: 30 }, (_, i) =>
      chunk(i, { name: i % 3 === 0 ? `Überblick\n${i}` : `Doc ${i}`, text: i === 4 ? '' : `${['heron', 'otter'][i % 2]} ✓ note\nline two ${i}` }),
    );
    try {
      await makeOlderTable(dir, twiceId, { keyed: true, keywords: true, textInKeywords: false, precision: 'half' }, records);
      const opened = await LanceDbVectorIndex.open(dir, DIMENSIONS);
      try {
        await opened.add(onceId, records);
        const listed = await opened.list(onceId, [], 100);
        expect(listed.map(({ name, text }) => ({ name, text }))).toEqual(
          [...records].sort((a, b) => a.entityId.localeCompare(b.entityId)).map(({ name, text }) => ({ name, text })),
        );
        expect(await opened.list(twiceId, [], 100)).toEqual(listed);
        for (const id of [twiceId, onceId]) await opened.add(id, [chunk(100, { name: 'Late', text: 'late heron\nwith a second line' })]);
        for (const id of [twiceId, onceId]) {
          const [top] = await opened.search(id, { strategy: 'hybrid', text: 'late heron', vector: seededVector(DIMENSIONS, 100), limit: 1, offset: 0 });
          expect(top!.chunk).toMatchObject({ entityId: 'entity-100', name: 'Late', text: 'late heron\nwith a second line' });
        }
        expect((await opened.stats(twiceId))!.layout.textInKeywords).toBe(false);
        expect((await opened.stats(onceId))!.layout.textInKeywords).toBe(true);
        const reopened = await lancedb.connect(dir);
        const columns = async (id: string) => (await (await reopened.openTable(LanceDbVectorIndex.tableName(id))).schema()).fields.map((field) => field.name);
        expect(await columns(twiceId)).toEqual(expect.arrayContaining(['text', KEYWORDS_COLUMN]));
        expect(await columns(onceId)).toEqual(expect.arrayContaining([KEYWORDS_COLUMN]));
        expect(await columns(onceId)).not.toContain('text');
        reopened.close();
      } finally {
        await opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a second handle on the same directory (another process) sees writes and drops', async () => {
    const id = randomUUID();
    const other = await LanceDbVectorIndex.open(lance.directory, DIMENSIONS);
    try {
      await lance.index.add(id, [chunk(1)]);
      expect(await other.count(id)).toBe(1);
      await lance.index.add(id, [chunk(2, { text: 'okapi' })]);
      expect(await other.count(id)).toBe(2);
      expect((await other.search(id, { strategy: 'keyword', text: 'okapi', limit: 5, offset: 0 })).map((r) => r.chunk.entityId)).toEqual(['entity-2']);
      await lance.index.deleteCollection(id);
      expect(await other.count(id)).toBe(0);
      expect(await other.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1), limit: 5, offset: 0 })).toEqual([]);
    } finally {
      await other.close();
    }
  });

  test('a table nobody searches is compacted at its 64th write once it has doubled since its last compaction', async () => {
    const id = randomUUID();
    for (let i = 1; i <= 63; i++) await lance.index.add(id, [chunk(i)]);
    expect((await lance.index.stats(id))!.fragmentStats.numFragments).toBe(63);
    await lance.index.add(id, [chunk(64)]);
    const after = (await lance.index.stats(id))!;
    expect(after.fragmentStats.numFragments).toBe(1);
    expect(after.numRows).toBe(64);
    // 64 more rows double the table: the next 64th write compacts again. LanceDB never merges indexed
    // with not-yet-indexed fragments in one pass, so a compacted table holds at most two fragments.
    for (let i = 65; i <= 127; i++) await lance.index.add(id, [chunk(i)]);
    expect((await lance.index.stats(id))!.fragmentStats.numFragments).toBe(64);
    await lance.index.add(id, [chunk(128)]);
    expect((await lance.index.stats(id))!.fragmentStats.numFragments).toBeLessThanOrEqual(2);
    await lance.index.add(id, [chunk(129)]);
    await lance.index.optimize(id);
    expect((await lance.index.stats(id))!.fragmentStats.numFragments).toBeLessThanOrEqual(2);
    expect(await lance.index.count(id)).toBe(129);
    // Rows written before compactions are in the keyword index and still searchable.
    expect((await lance.index.search(id, { strategy: 'keyword', text: 'number 7', limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-7');
  });

  test('writes that have not doubled the table wait for their compaction until the 256th', async () => {
    const id = randomUUID();
    await lance.index.add(id, Array.from({ length: 1000 }, (_, i) => chunk(i)));
    // 254 one-row writes after a 1,000-row one: past 64 writes, but the table has not doubled.
    for (let i = 1000; i < 1254; i++) await lance.index.add(id, [chunk(i)]);
    expect((await lance.index.stats(id))!.fragmentStats.numFragments).toBe(255);
    await lance.index.add(id, [chunk(1254)]);
    expect((await lance.index.stats(id))!.fragmentStats.numFragments).toBeLessThanOrEqual(2);
    expect(await lance.index.count(id)).toBe(1255);
    expect((await lance.index.search(id, { strategy: 'keyword', text: 'number 1253', limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-1253');
  });

  test('a compaction by another process between a search’s ranking and its page read: the search ranks again on the new version and answers in full', async () => {
    const id = randomUUID();
    const writer = await LanceDbVectorIndex.open(lance.directory, DIMENSIONS);
    const searcher = await LanceDbVectorIndex.open(lance.directory, DIMENSIONS);
    try {
      // Five adds, five fragments (no compaction yet): a compaction rewrites them all under new row ids.
      for (let n = 0; n < 5; n++) await writer.add(id, Array.from({ length: 20 }, (_, i) => chunk(n * 20 + i)));
      const query = { strategy: 'hybrid' as const, text: 'ordinary filler number 42', vector: seededVector(DIMENSIONS, 42), limit: 10, offset: 0 };
      const [table] = await (searcher as unknown as { tables: LanceDbTables }).tables.shards(id);
      // The searcher's first page read waits for the writer's compaction: its row ids are then retired.
      const take = table.takeRowIds.bind(table);
      let takes = 0;
      table.takeRowIds = (rowIds) => {
        const taking = take(rowIds);
        if (++takes === 1) {
          // A page read goes through the query's native stream (queryRows), not through toArrow().
          const native = nativeExecutable(taking);
          const execute = native.nativeExecute.bind(taking);
          native.nativeExecute = async () => {
            await writer.optimize(id);
            return execute();
          };
        }
        return taking;
      };
      const hits = await searcher.search(id, query);
      expect(takes).toBe(2);
      expect((await writer.stats(id))!.fragmentStats.numFragments).toBe(1);
      expect(hits).toHaveLength(10);
      expect(hits[0]!.chunk.entityId).toBe('entity-42');
      expect(hits.map((hit) => hit.chunk.chunkId)).toEqual((await searcher.search(id, query)).map((hit) => hit.chunk.chunkId));
    } finally {
      await writer.close();
      await searcher.close();
    }
  });

  test('a long run of writes gets its IVF vector index at a compaction, before any optimize() call', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-ivf-writes-'));
    const writer = await LanceDbVectorIndex.open(dir, DIMENSIONS, { vectorIndexMinRows: 2000 });
    try {
      const id = randomUUID();
      const vectorIndexes = async () => (await writer.stats(id))!.indices.filter((index) => index.columns.includes('vector'));
      const write = (n: number) => writer.add(id, Array.from({ length: 100 }, (_, i) => chunk(n * 100 + i)));
      for (let n = 0; n < 63; n++) await write(n);
      expect(await vectorIndexes()).toEqual([]); // 6,300 rows, no compaction yet
      await write(63); // the 64th write compacts 6,400 rows: large enough
      expect(await vectorIndexes()).toHaveLength(1);
      expect((await writer.stats(id))!.fragmentStats.numFragments).toBe(1);
      const [top] = await writer.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1234), limit: 1, offset: 0 });
      expect(top!.chunk.entityId).toBe('entity-1234');
    } finally {
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a 12,000-row add is written in slices of at least 5,000 rows', async () => {
    const id = randomUUID();
    const rows = Array.from({ length: 12_000 }, (_, i) =>
      chunk(i, { text: i === 11_999 ? 'the very last aardvark' : `bulk row ${i}`, breadcrumbs: [{ entity_id: `folder-${i % 7}`, name: 'Bulk', entity_type: 'folder' }] }),
    );
    const started = (await lance.index.stats(id))?.versions ?? 0;
    await lance.index.add(id, rows);
    const stats = (await lance.index.stats(id))!;
    expect(stats.numRows).toBe(12_000);
    expect(stats.fragmentStats.numFragments).toBe(2);
    expect(stats.fragmentStats.lengths.min).toBeGreaterThanOrEqual(5000);
    expect(stats.versions - started).toBeGreaterThanOrEqual(2);
    expect(await lance.index.count(id, [{ conditions: [{ field: 'breadcrumbs.entity_id', operator: 'equals', value: 'folder-3' }] }])).toBe(1714);
    expect((await lance.index.search(id, { strategy: 'keyword', text: 'aardvark', limit: 3, offset: 0 })).map((r) => r.chunk.entityId)).toEqual(['entity-11999']);
    expect((await lance.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 4321), limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-4321');
    await lance.index.deleteEntities(
      id,
      'conn-1',
      rows.slice(0, 6000).map((row) => row.entityId),
    );
    expect(await lance.index.count(id)).toBe(6000);
  });

  test('optimize() gives a large table an IVF vector index; searches still find exact matches, filtered too, and rows added after it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-ivf-'));
    const small = await LanceDbVectorIndex.open(dir, DIMENSIONS, { vectorIndexMinRows: 2000 });
    try {
      const id = randomUUID();
      await small.add(id, Array.from({ length: 1999 }, (_, i) => chunk(i)));
      await small.optimize(id);
      const vectorIndexes = async () => (await small.stats(id))!.indices.filter((index) => index.columns.includes('vector'));
      expect(await vectorIndexes()).toEqual([]); // below the threshold: exact scans
      await small.add(id, Array.from({ length: 1001 }, (_, i) => chunk(1999 + i)));
      await small.optimize(id);
      expect(await vectorIndexes()).toHaveLength(1);
      for (const seed of [7, 1234, 2999]) {
        const [top] = await small.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, seed), limit: 5, offset: 0 });
        expect(top!.chunk.entityId).toBe(`entity-${seed}`);
      }
      const filtered = await small.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1500), limit: 3, offset: 0, filter: [{ conditions: [{ field: 'entity_id', operator: 'in', value: ['entity-1500', 'entity-9'] }] }] });
      expect(filtered.map((r) => r.chunk.entityId)).toEqual(['entity-1500', 'entity-9']);
      // Rows written after the index are searched too (exactly, until the next optimize).
      await small.add(id, [chunk(5000)]);
      expect((await small.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 5000), limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-5000');
      await small.optimize(id);
      expect((await small.search(id, { strategy: 'hybrid', text: 'number 5000', vector: seededVector(DIMENSIONS, 5000), limit: 1, offset: 0 }))[0]!.chunk.entityId).toBe('entity-5000');
    } finally {
      await small.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('probing every IVF partition reads every partition: the same nearest chunks as an exact scan', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-probes-'));
    const writer = await LanceDbVectorIndex.open(dir, DIMENSIONS, { vectorIndexMinRows: 2000 });
    const everyPartition = await LanceDbVectorIndex.open(dir, DIMENSIONS, { ivfProbes: (partitions) => partitions });
    try {
      const id = randomUUID();
      await writer.add(id, Array.from({ length: 3000 }, (_, i) => chunk(i)));
      await writer.optimize(id);
      expect((await writer.stats(id))!.indices.some((index) => index.columns.includes('vector'))).toBe(true);
      for (const seed of [5, 777, 2048]) {
        const vector = between(seed, seed + 1);
        const ids = (await everyPartition.search(id, { strategy: 'semantic', vector, limit: 50, offset: 0 })).map((hit) => hit.chunk.chunkId);
        // The same chunks (their order may differ where distances tie to rounding).
        expect(ids.sort()).toEqual(exactNearest(vector, range(3000), 50).sort());
      }
    } finally {
      await writer.close();
      await everyPartition.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a filtered semantic search keeps the IVF index when its filter keeps at least half the rows, and is exact under a selective filter', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-filter-share-'));
    const writer = await LanceDbVectorIndex.open(dir, DIMENSIONS, { vectorIndexMinRows: 2000 });
    // One partition probed: an IVF search then visibly misses most of the exact nearest.
    const onePartition = await LanceDbVectorIndex.open(dir, DIMENSIONS, { ivfProbes: () => 1 });
    try {
      const id = randomUUID();
      await writer.add(id, Array.from({ length: 3000 }, (_, i) => chunk(i)));
      await writer.optimize(id);
      const vector = between(1234, 1235);
      const ids = async (filter?: FilterGroup[]) => (await onePartition.search(id, { strategy: 'semantic', vector, limit: 50, offset: 0, filter })).map((hit) => hit.chunk.chunkId);
      const unfiltered = await ids();
      expect(unfiltered.sort()).not.toEqual(exactNearest(vector, range(3000), 50).sort());
      // Every row kept (and 2,000 of 3,000): the index as without a filter.
      expect((await ids([{ conditions: [{ field: 'service_system_metadata.chunk_index', operator: 'greater_than_or_equal', value: 0 }] }])).sort()).toEqual(unfiltered.sort());
      const twoThirds = range(3000).filter((seed) => seed % 3 !== 0);
      const kept = new Set(twoThirds.map((seed) => chunk(seed).chunkId));
      const filteredIds = await ids([{ conditions: [{ field: 'service_system_metadata.chunk_index', operator: 'equals', value: 0 }, { field: 'entity_id', operator: 'not_in', value: range(3000).filter((seed) => seed % 3 === 0).map((seed) => `entity-${seed}`) }] }]);
      expect(filteredIds.every((chunkId) => kept.has(chunkId))).toBe(true);
      expect(filteredIds.sort()).not.toEqual(exactNearest(vector, twoThirds, 50).sort());
      // 30 rows kept: exact, every one of them found, nearest first.
      const few = range(30).map((k) => k * 100 + 7);
      const selective = await onePartition.search(id, { strategy: 'semantic', vector, limit: 50, offset: 0, filter: [{ conditions: [{ field: 'entity_id', operator: 'in', value: few.map((seed) => `entity-${seed}`) }] }] });
      expect(selective.map((hit) => hit.chunk.chunkId)).toEqual(exactNearest(vector, few, 50));
    } finally {
      await writer.close();
      await onePartition.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('IVF partitions grow with the table (about √rows / 5 as a power of two, never under 64), probes 48 × (partitions / 64)^0.875', () => {
    expect([0, 50_000, 100_000, 200_000].map(ivfPartitionsFor)).toEqual([64, 64, 64, 64]);
    expect([210_000, 500_000, 800_000].map(ivfPartitionsFor)).toEqual([128, 128, 128]);
    expect([1_000_000, 3_000_000, 4_000_000].map(ivfPartitionsFor)).toEqual([256, 256, 512]);
    // The index's name records its partitions; an index made before names did has LanceDB's default name and 64.
    const listed = (name: string) => [{ name, columns: ['vector'] }, { name: 'text_idx', columns: ['text'] }] as lancedb.IndexConfig[];
    expect(vectorIndexPartitions(listed('vector_ivf256'))).toBe(256);
    expect(vectorIndexPartitions(listed('vector_idx'))).toBe(64);
    expect(vectorIndexPartitions([{ name: 'text_idx', columns: ['text'] }] as lancedb.IndexConfig[])).toBeNull();
    // Probes: 48 × (partitions / 64)^0.875, never more than there are.
    expect([1, 4, 16, 64, 128, 256, 1024].map(ivfProbesFor)).toEqual([1, 4, 14, 48, 88, 161, 543]);
  });

  test('a table grown several-fold since its IVF index was trained gets one with more partitions at a compaction, and other handles search it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-ivf-retrain-'));
    const partitionsFor = (rows: number) => (rows < 3000 ? 4 : 8);
    const writer = await LanceDbVectorIndex.open(dir, DIMENSIONS, { vectorIndexMinRows: 1000, ivfPartitionsFor: partitionsFor });
    // Another process's handle, which reads every partition: it must learn of the retrained index.
    const everyPartition = await LanceDbVectorIndex.open(dir, DIMENSIONS, { ivfProbes: (partitions) => partitions });
    try {
      const id = randomUUID();
      const vectorIndexes = async () => (await writer.stats(id))!.indices.filter((index) => index.columns.includes('vector')).map((index) => index.name);
      const nearest = async (from: LanceDbVectorIndex, seed: number) => (await from.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, seed), limit: 1, offset: 0 }))[0]!.chunk.entityId;
      await writer.add(id, Array.from({ length: 1500 }, (_, i) => chunk(i)));
      await writer.optimize(id);
      expect(await vectorIndexes()).toEqual(['vector_ivf4']);
      expect(await nearest(everyPartition, 700)).toBe('entity-700');
      await writer.add(id, Array.from({ length: 1000 }, (_, i) => chunk(1500 + i)));
      await writer.optimize(id); // 2,500 rows: still 4 asked, the new rows are folded in
      expect(await vectorIndexes()).toEqual(['vector_ivf4']);
      await writer.add(id, Array.from({ length: 1000 }, (_, i) => chunk(2500 + i)));
      await writer.optimize(id); // 3,500 rows: 8 asked, trained again; the old index is gone
      expect(await vectorIndexes()).toEqual(['vector_ivf8']);
      const stats = (await writer.stats(id))!.indices.find((index) => index.name === 'vector_ivf8')!;
      expect(stats.numIndexedRows).toBe(3500);
      for (const seed of [3, 1499, 3499]) {
        expect(await nearest(writer, seed)).toBe(`entity-${seed}`);
        expect(await nearest(everyPartition, seed)).toBe(`entity-${seed}`);
      }
      // Reading every partition of the new index is the exact scan.
      const vector = between(11, 12);
      const ids = (await everyPartition.search(id, { strategy: 'semantic', vector, limit: 50, offset: 0 })).map((hit) => hit.chunk.chunkId).sort();
      expect(ids).toEqual(exactNearest(vector, range(3500), 50).sort());
    } finally {
      await writer.close();
      await everyPartition.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('LanceDB caches hold at most what the cache options allow; the defaults let them hold more', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-lance-caches-'));
    const id = randomUUID();
    const opened: LanceDbVectorIndex[] = [];
    try {
      const writer = await LanceDbVectorIndex.open(dir, DIMENSIONS, { vectorIndexMinRows: 2000 });
      opened.push(writer);
      await writer.add(id, Array.from({ length: 3000 }, (_, i) => chunk(i)));
      await writer.optimize(id); // full-text and IVF indexes: what the index cache holds
      const cachedAfterSearches = async (options: LanceDbVectorIndexOptions) => {
        const reader = await LanceDbVectorIndex.open(dir, DIMENSIONS, options);
        opened.push(reader);
        for (let i = 0; i < 30; i++) {
          const seed = i * 97;
          const [top] = await reader.search(id, { strategy: 'hybrid', text: `number ${seed}`, vector: seededVector(DIMENSIONS, seed), limit: 5, offset: 0 });
          expect(top!.chunk.entityId).toBe(`entity-${seed}`); // a cache too small to hold anything still answers
        }
        return reader.cacheBytes();
      };
      const capped = await cachedAfterSearches({ indexCacheBytes: CAP, metadataCacheBytes: CAP });
      const defaults = await cachedAfterSearches({});
      expect(capped).toBeLessThanOrEqual(2 * CAP);
      expect(defaults).toBeGreaterThan(2 * CAP);
      expect(defaults).toBeLessThanOrEqual(DEFAULT_INDEX_CACHE_BYTES + DEFAULT_METADATA_CACHE_BYTES);
    } finally {
      for (const index of opened) await index.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('rejects vectors of the wrong width', async () => {
    const id = randomUUID();
    await expect(lance.index.add(id, [chunk(1, { vector: new Float32Array(3) })])).rejects.toThrow(/dimensional/);
    await lance.index.add(id, [chunk(1)]);
    await expect(lance.index.search(id, { strategy: 'semantic', vector: new Float32Array(3), limit: 1, offset: 0 })).rejects.toThrow(/dimensions/);
  });

  test('deleteCollection removes the table directory', async () => {
    const id = randomUUID();
    await lance.index.add(id, [chunk(1)]);
    const table = `${LanceDbVectorIndex.tableName(id)}.lance`;
    expect(readdirSync(lance.directory)).toContain(table);
    await lance.index.deleteCollection(id);
    expect(readdirSync(lance.directory)).not.toContain(table);
  });
});
