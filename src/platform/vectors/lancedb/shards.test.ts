import { describe, expect, jest, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { unindexedFullTextRows, useLanceDbIndex } from '../../../../test/support/lancedb-fixture.js';
import { makeChunk, seededVector } from '../vector-index.contract.js';
import type { ChunkRecord, ScoredChunk, VectorQuery } from '../vector-index.js';
import * as lancedb from '@lancedb/lancedb';
import { chunkSchema } from './arrow.js';
import { LanceDbVectorIndex } from './lancedb-index.js';
import type { TableMaintenance } from './maintenance.js';
import { LanceDbTables, SHARD_LISTING_MS } from './tables.js';

const DIMENSIONS = 16;
const SHARD_ROWS = 10;

/** Writes of 6 chunks: the first two fill shard 0 past SHARD_ROWS, each later pair fills the next. */
const batch = (first: number, overrides: (seed: number) => Partial<ChunkRecord> = () => ({})) =>
  Array.from({ length: 6 }, (_, i) => makeChunk(DIMENSIONS, first + i, overrides(first + i)));

describe('LanceDbVectorIndex in shards', () => {
  const sharded = useLanceDbIndex(DIMENSIONS, { shardRows: SHARD_ROWS });
  const whole = useLanceDbIndex(DIMENSIONS);

  /** The same 30 chunks written in 5 writes of 6 to both indexes: 3 shards against one table. */
  async function writeBoth(id: string, overrides?: (seed: number) => Partial<ChunkRecord>): Promise<void> {
    for (let first = 1; first <= 25; first += 6) {
      await sharded.index.add(id, batch(first, overrides));
      await whole.index.add(id, batch(first, overrides));
    }
  }

  const tablesOf = (directory: string) => readdirSync(directory).filter((name) => name.endsWith('.lance')).sort();

  test('writes go to the last shard until it holds shardRows, then to a new table; the first keeps the collection’s table name', async () => {
    const id = randomUUID();
    await writeBoth(id);
    const first = LanceDbVectorIndex.tableName(id);
    expect(tablesOf(sharded.directory)).toEqual([`${first}.lance`, `${first}_s1.lance`, `${first}_s2.lance`]);
    expect((await sharded.index.stats(id))!.shards).toBe(3);
    expect((await sharded.index.stats(id, 0))!.numRows).toBe(12);
    expect((await sharded.index.stats(id, 2))!.numRows).toBe(6);
    expect(await sharded.index.count(id)).toBe(30);
    expect(await sharded.index.count(id, [{ conditions: [{ field: 'entity_id', operator: 'in', value: ['entity-2', 'entity-15', 'entity-29'] }] }])).toBe(3);
    expect(tablesOf(whole.directory)).toEqual([`${first}.lance`]);
  });

  test('a semantic search merges the shards into the ranking one table gives (exact scans, same scores)', async () => {
    const id = randomUUID();
    await writeBoth(id);
    for (const seed of [3, 14, 27]) {
      const query: VectorQuery = { strategy: 'semantic', vector: seededVector(DIMENSIONS, seed), limit: 8, offset: 0 };
      const [fromShards, fromOne] = [await sharded.index.search(id, query), await whole.index.search(id, query)];
      expect(fromShards.map((result) => result.chunk.chunkId)).toEqual(fromOne.map((result) => result.chunk.chunkId));
      expect(fromShards.map((result) => result.score)).toEqual(fromOne.map((result) => expect.closeTo(result.score, 5)));
      expect(fromShards[0]!.chunk.entityId).toBe(`entity-${seed}`);
      // Pages over the merged ranking: the second page continues the first.
      const second = await sharded.index.search(id, { ...query, offset: 4, limit: 4 });
      expect(second.map((result) => result.chunk.chunkId)).toEqual(fromOne.slice(4, 8).map((result) => result.chunk.chunkId));
    }
  });

  test('keyword and hybrid searches find matches in every shard and rank one document once across them', async () => {
    const id = randomUUID();
    const rare = new Map([
      [2, 'narwhal'],
      [13, 'narwhal'],
      [26, 'narwhal narwhal'],
    ]);
    await writeBoth(id, (seed) => (rare.has(seed) ? { text: `a ${rare.get(seed)} here` } : {}));
    // A document whose chunks lie in two shards (its entity written again later) is one result.
    const split = { entityId: 'entity-split', text: 'narwhal split' };
    await sharded.index.add(id, [makeChunk(DIMENSIONS, 100, { ...split, chunkIndex: 0 })]);
    for (let i = 0; i < 4; i++) await sharded.index.add(id, batch(200 + i * 6));
    await sharded.index.add(id, [makeChunk(DIMENSIONS, 101, { ...split, chunkIndex: 1 })]);
    expect((await sharded.index.stats(id))!.shards).toBeGreaterThan(4);

    const keyword = await sharded.index.search(id, { strategy: 'keyword', text: 'narwhal', limit: 10, offset: 0 });
    expect(keyword.map((result) => result.chunk.entityId).sort()).toEqual(['entity-13', 'entity-2', 'entity-26', 'entity-split']);
    const hybrid = await sharded.index.search(id, { strategy: 'hybrid', text: 'narwhal', vector: seededVector(DIMENSIONS, 13), limit: 3, offset: 0 });
    expect(hybrid[0]!.chunk.entityId).toBe('entity-13');
    expect(new Set(hybrid.map((result) => result.chunk.entityId)).size).toBe(3);
  });

  test('deletes reach every shard; list reads them all, ordered, at most its limit', async () => {
    const id = randomUUID();
    await writeBoth(id);
    await sharded.index.deleteEntities(id, 'conn-1', ['entity-1', 'entity-12', 'entity-30']);
    expect(await sharded.index.count(id)).toBe(27);
    const listed = await sharded.index.list(id, [], 100);
    expect(listed).toHaveLength(27);
    expect(listed.map((chunk) => chunk.entityId)).toEqual([...listed.map((chunk) => chunk.entityId)].sort());
    expect(listed.map((chunk) => chunk.entityId)).not.toContain('entity-12');
    const five = await sharded.index.list(id, [], 5);
    expect(five).toHaveLength(5);
    expect(five.map((chunk) => chunk.entityId)).toEqual([...five.map((chunk) => chunk.entityId)].sort());
    await sharded.index.deleteSourceConnection(id, 'conn-1');
    expect(await sharded.index.count(id)).toBe(0);
    await sharded.index.deleteCollection(id);
    expect(tablesOf(sharded.directory).filter((name) => name.startsWith(LanceDbVectorIndex.tableName(id)))).toEqual([]);
    expect(await sharded.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1), limit: 5, offset: 0 })).toEqual([]);
  });

  test('another process sees the first table written after it read, a shard begun after it listed the collection’s, and the collection dropped', async () => {
    const id = randomUUID();
    const other = await LanceDbVectorIndex.open(sharded.directory, DIMENSIONS, { shardRows: SHARD_ROWS });
    try {
      // Read before the collection has a table: the first one written later is seen.
      expect(await other.count(id)).toBe(0);
      await sharded.index.add(id, batch(1));
      expect(await other.count(id)).toBe(6);
      await sharded.index.add(id, batch(7));
      expect(await other.count(id)).toBe(12);
      await sharded.index.add(id, batch(13, (seed) => (seed === 15 ? { text: 'a lone quokka' } : {})));
      await sleep(SHARD_LISTING_MS);
      expect(await other.count(id)).toBe(18);
      expect((await other.search(id, { strategy: 'keyword', text: 'quokka', limit: 5, offset: 0 })).map((result) => result.chunk.entityId)).toEqual(['entity-15']);
      await sharded.index.deleteCollection(id);
      expect(await other.count(id)).toBe(0);
    } finally {
      await other.close();
    }
  });

  test('a search while a write optimizes the shard it filled does not wait for that optimize', async () => {
    const id = randomUUID();
    await sharded.index.add(id, batch(1));
    await sharded.index.add(id, batch(7, (seed) => (seed === 8 ? { text: 'a lone okapi' } : {})));
    const maintenance = (sharded.index as unknown as { maintenance: TableMaintenance }).maintenance;
    const compact = maintenance.compact.bind(maintenance);
    let entered!: () => void;
    const compacting = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The third write begins shard 1 and optimizes shard 0, held here until the search has answered.
    const spy = jest.spyOn(maintenance, 'compact').mockImplementation(async (name, table) => {
      entered();
      await released;
      return compact(name, table);
    });
    const writing = sharded.index.add(id, batch(13));
    try {
      await compacting;
      const search = sharded.index.search(id, { strategy: 'keyword', text: 'okapi', limit: 5, offset: 0 });
      const answer = await Promise.race([search, sleep(5000).then(() => 'still waiting')]);
      expect(answer).not.toBe('still waiting');
      expect((answer as ScoredChunk[]).map((result) => result.chunk.entityId)).toEqual(['entity-8']);
    } finally {
      release();
      await writing;
      spy.mockRestore();
    }
    expect(await sharded.index.count(id)).toBe(18);
  });

  test('another process sees a new shard within SHARD_LISTING_MS, though deletes took the full one under shardRows again', async () => {
    const id = randomUUID();
    const other = await LanceDbVectorIndex.open(sharded.directory, DIMENSIONS, { shardRows: SHARD_ROWS });
    try {
      await sharded.index.add(id, batch(1));
      expect(await other.count(id)).toBe(6);
      await sharded.index.add(id, batch(7));
      await sharded.index.add(id, batch(13, (seed) => (seed === 15 ? { text: 'a lone quokka' } : {})));
      // Shard 0 held 12 (full) when shard 1 began; now 9.
      await sharded.index.deleteEntities(id, 'conn-1', ['entity-1', 'entity-2', 'entity-3']);
      await sleep(SHARD_LISTING_MS);
      expect(await other.count(id)).toBe(15);
      expect((await other.search(id, { strategy: 'keyword', text: 'quokka', limit: 5, offset: 0 })).map((result) => result.chunk.entityId)).toEqual(['entity-15']);
    } finally {
      await other.close();
    }
  });

  test('a listing a search read before a write made a new shard is not kept over the write’s: a delete then reaches the new shard', async () => {
    const id = randomUUID();
    await sharded.index.add(id, batch(1));
    await sharded.index.add(id, batch(7));
    await sleep(SHARD_LISTING_MS);
    // The search's listing (shard 0 alone) is read, then held until the write below has made shard 1.
    const db = (sharded.index as unknown as { tables: { db: lancedb.Connection } }).tables.db;
    const tableNames = db.tableNames.bind(db);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = jest.spyOn(db, 'tableNames').mockImplementationOnce(async (...args) => {
      const names = await tableNames(...args);
      await released;
      return names;
    });
    try {
      const search = sharded.index.search(id, { strategy: 'keyword', text: 'quokka', limit: 5, offset: 0 });
      await sharded.index.add(id, batch(13, (seed) => (seed === 15 ? { text: 'a lone quokka' } : {})));
      release();
      await search;
    } finally {
      release();
      held.mockRestore();
    }
    // The write's listing stands: the new shard is read at once.
    expect(await sharded.index.count(id)).toBe(18);
    await sharded.index.deleteEntities(id, 'conn-1', ['entity-15']);
    expect(await sharded.index.count(id)).toBe(17);
    await sleep(SHARD_LISTING_MS);
    expect(await sharded.index.count(id)).toBe(17);
    expect(await sharded.index.search(id, { strategy: 'keyword', text: 'quokka', limit: 5, offset: 0 })).toEqual([]);
  });

  test('a search skips an empty shard another process has just made, and leaves its indexes to that process', async () => {
    const id = randomUUID();
    await sharded.index.add(id, batch(1, (seed) => (seed === 2 ? { text: 'a lone tapir' } : {})));
    const db = await lancedb.connect(sharded.directory);
    const made = await db.createEmptyTable(LanceDbVectorIndex.tableName(id, 1), chunkSchema(DIMENSIONS));
    const reader = await LanceDbVectorIndex.open(sharded.directory, DIMENSIONS, { shardRows: SHARD_ROWS });
    try {
      expect((await reader.search(id, { strategy: 'keyword', text: 'tapir', limit: 5, offset: 0 })).map((result) => result.chunk.entityId)).toEqual(['entity-2']);
      const hybrid = await reader.search(id, { strategy: 'hybrid', text: 'tapir', vector: seededVector(DIMENSIONS, 2), limit: 3, offset: 0 });
      expect(hybrid[0]!.chunk.entityId).toBe('entity-2');
    } finally {
      await reader.close();
      made.close();
    }
    // Read as another process would (the handle that made the table sees the version it made).
    const again = await db.openTable(LanceDbVectorIndex.tableName(id, 1));
    try {
      await again.checkoutLatest();
      expect(await again.listIndices()).toEqual([]);
    } finally {
      again.close();
      db.close();
    }
  });

  test('a new shard is numbered after the last, whatever gaps a drop cut short left', async () => {
    const id = randomUUID();
    for (const first of [1, 7, 13, 19, 25]) await sharded.index.add(id, batch(first));
    const db = await lancedb.connect(sharded.directory);
    await db.dropTable(LanceDbVectorIndex.tableName(id, 1));
    db.close();
    const reopened = await LanceDbVectorIndex.open(sharded.directory, DIMENSIONS, { shardRows: SHARD_ROWS });
    try {
      await reopened.add(id, batch(31));
      await reopened.add(id, batch(37));
      const first = LanceDbVectorIndex.tableName(id);
      expect(tablesOf(sharded.directory).filter((name) => name.startsWith(first))).toEqual([`${first}.lance`, `${first}_s2.lance`, `${first}_s3.lance`]);
      expect(await reopened.count(id)).toBe(12 + 12 + 6);
    } finally {
      await reopened.close();
    }
  });

  test('a table’s name names its collection, for every shard (upkeep, kept by table name, locks and reports its collection even once the table is forgotten)', () => {
    for (const id of [randomUUID(), randomUUID().toUpperCase(), 'bench-search', 'ünïcode collection_s1']) {
      for (const shard of [0, 1, 12]) expect(LanceDbTables.collectionIdOf(LanceDbTables.tableName(id, shard))).toBe(id);
    }
  });

  test('an optimize whose vector index upkeep failed is done again by the next, though its compaction was done', async () => {
    const id = randomUUID();
    await sharded.index.add(id, batch(1));
    const maintenance = (sharded.index as unknown as { maintenance: TableMaintenance }).maintenance;
    const upkeep = jest.spyOn(maintenance, 'upkeepVectorIndex').mockRejectedValueOnce(new Error('index training failed'));
    await expect(sharded.index.optimize(id)).rejects.toThrow('index training failed');
    upkeep.mockRestore();
    const compact = jest.spyOn(maintenance, 'compact');
    try {
      await sharded.index.optimize(id);
      expect(compact.mock.calls.map(([name]) => name)).toEqual([LanceDbVectorIndex.tableName(id)]);
      compact.mockClear();
      await sharded.index.optimize(id);
      expect(compact).not.toHaveBeenCalled();
    } finally {
      compact.mockRestore();
    }
  });

  test('a delete matching none of a full shard’s rows still makes it a version: the next optimize compacts it (its old versions cleaned up)', async () => {
    const id = randomUUID();
    await writeBoth(id);
    await sharded.index.optimize(id);
    const compact = jest.spyOn((sharded.index as unknown as { maintenance: TableMaintenance }).maintenance, 'compact');
    try {
      await sharded.index.optimize(id);
      expect(compact).not.toHaveBeenCalled();
      await sharded.index.deleteEntities(id, 'conn-1', ['entity-absent']);
      await sharded.index.optimize(id);
      expect(compact.mock.calls.map(([name]) => name)).toEqual([0, 1, 2].map((shard) => LanceDbVectorIndex.tableName(id, shard)));
    } finally {
      compact.mockRestore();
    }
  });

  test('a shard is optimized once the writes move on; an optimize compacts the shards written since this process last compacted them, not the full ones left alone', async () => {
    const id = randomUUID();
    await writeBoth(id);
    const unindexed = () => Promise.all([0, 1, 2].map((shard) => unindexedFullTextRows(sharded.directory, id, shard)));
    // A shard is optimized when the writes move on to the next: searches meanwhile scan only the last one's new rows.
    expect(await unindexed()).toEqual([0, 0, 6]);
    await sharded.index.optimize(id);
    /** The tables the index compacts (LanceDB writes no version when there is nothing to compact). */
    const compacted = (index: LanceDbVectorIndex) => jest.spyOn((index as unknown as { maintenance: TableMaintenance }).maintenance, 'compact');
    expect(await unindexed()).toEqual([0, 0, 0]);
    await sharded.index.add(id, [makeChunk(DIMENSIONS, 40)]);
    expect(await unindexed()).toEqual([0, 0, 1]);
    const spy = compacted(sharded.index);
    await sharded.index.optimize(id);
    expect(spy.mock.calls.map(([name]) => name)).toEqual([LanceDbVectorIndex.tableName(id, 2)]);
    spy.mockRestore();
    expect(await unindexed()).toEqual([0, 0, 0]);
    // A process that has compacted none of them (a restart, an optimize owed) optimizes every one.
    await sharded.index.add(id, [makeChunk(DIMENSIONS, 41)]);
    const restarted = await LanceDbVectorIndex.open(sharded.directory, DIMENSIONS, { shardRows: SHARD_ROWS });
    try {
      const restartedSpy = compacted(restarted);
      await restarted.optimize(id);
      expect(restartedSpy.mock.calls.map(([name]) => name)).toEqual([0, 1, 2].map((shard) => LanceDbVectorIndex.tableName(id, shard)));
      expect(await unindexed()).toEqual([0, 0, 0]);
    } finally {
      await restarted.close();
    }
  });
});
