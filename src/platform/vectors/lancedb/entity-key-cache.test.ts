import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { makeChunk } from '../vector-index.contract.js';
import { ENTITY_KEY_COLUMN } from './arrow.js';
import { EntityKeyCache } from './entity-key-cache.js';
import { entityKeyOf } from './entity-key.js';
import { LanceDbVectorIndex } from './lancedb-index.js';

const DIMENSIONS = 8;

describe('EntityKeyCache', () => {
  let directory: string;
  let index: LanceDbVectorIndex;
  let db: lancedb.Connection;
  const id = randomUUID();
  /** Entity e has chunks 0..e%3: several chunks share an entity key. */
  const chunksOf = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, k) => from + k).flatMap((e) => Array.from({ length: 1 + (e % 3) }, (_, c) => makeChunk(DIMENSIONS, e * 10 + c, { entityId: `entity-${e}`, chunkIndex: c })));
  /** Every live row's id and entity key, as the column reads them. */
  const column = async (table: lancedb.Table) => {
    const result = await table.query().select([ENTITY_KEY_COLUMN]).withRowId().toArrow();
    const rowIds = [...(result.getChild('_rowid')!.toArray() as BigUint64Array)];
    return { rowIds, keys: [...(result.getChild(ENTITY_KEY_COLUMN)!.toArray() as BigInt64Array)] };
  };

  beforeEach(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'catchment-lance-keys-'));
    index = await LanceDbVectorIndex.open(directory, DIMENSIONS);
    // Three adds: three fragments.
    for (const [from, to] of [
      [0, 40],
      [40, 90],
      [90, 100],
    ] as const)
      await index.add(id, chunksOf(from, to));
    db = await lancedb.connect(directory);
  });
  afterEach(async () => {
    db.close();
    await index.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('gives the entity key column of any rows, across fragments and after a compaction wrote new ones', async () => {
    const table = await db.openTable(LanceDbVectorIndex.tableName(id));
    const cache = new EntityKeyCache();
    const before = await column(table);
    expect(new Set(before.rowIds.map((rowId) => rowId >> 32n)).size).toBe(3);
    // Any order, repeats, a subset first and then all (the fragments read by the first call are reused).
    const order = before.rowIds.map((_, i) => (i * 37) % before.rowIds.length);
    expect([...(await cache.keysOf(id, table, await table.version(), order.slice(0, 25).map((i) => before.rowIds[i]!)))!]).toEqual(order.slice(0, 25).map((i) => before.keys[i]));
    expect([...(await cache.keysOf(id, table, await table.version(), [...order, 0].map((i) => before.rowIds[i]!)))!]).toEqual([...order, 0].map((i) => before.keys[i]));
    expect(before.keys).toContain(entityKeyOf('conn-1', 'entity-95', false));

    await index.deleteEntities(id, 'conn-1', ['entity-3', 'entity-50']);
    await index.optimize(id); // compaction: the rows live on under new row ids
    await table.checkoutLatest();
    const after = await column(table);
    expect(after.rowIds.some((rowId) => before.rowIds.includes(rowId))).toBe(false);
    expect([...(await cache.keysOf(id, table, await table.version(), after.rowIds))!]).toEqual(after.keys);
  });

  test('concurrent searches each get their rows’ keys while the fragments are being read; a failed read is not kept', async () => {
    const table = await db.openTable(LanceDbVectorIndex.tableName(id));
    const { rowIds, keys } = await column(table);
    const cache = new EntityKeyCache();
    const version = await table.version();
    const parts = await Promise.all(Array.from({ length: 8 }, (_, k) => cache.keysOf(id, table, version, rowIds.filter((_, i) => i % 8 === k))));
    parts.forEach((part, k) => expect([...part!]).toEqual(keys.filter((_, i) => i % 8 === k)));

    const closed = await db.openTable(LanceDbVectorIndex.tableName(id));
    closed.close();
    const fresh = new EntityKeyCache();
    await expect(fresh.keysOf(id, closed, version, rowIds)).rejects.toThrow();
    expect([...(await fresh.keysOf(id, table, version, rowIds))!]).toEqual(keys);
  });

  test('a row deleted before its fragment was read is not known (null: a search then reads the column); searches group chunks by cached keys', async () => {
    const table = await db.openTable(LanceDbVectorIndex.tableName(id));
    const { rowIds, keys } = await column(table);
    const deleted = rowIds[keys.indexOf(entityKeyOf('conn-1', 'entity-7', false))]!;
    await index.deleteEntities(id, 'conn-1', ['entity-7']);
    await table.checkoutLatest();
    const cache = new EntityKeyCache();
    expect(await cache.keysOf(id, table, await table.version(), [rowIds[0]!, deleted])).toBeNull();
    expect([...(await cache.keysOf(id, table, await table.version(), [rowIds[0]!]))!]).toEqual([keys[0]]);
    // The index's searches key candidates from its own cache: one result per entity, whose chunks (1–3) share a key.
    const hits = await index.search(id, { strategy: 'keyword', text: 'ordinary filler', limit: 200, offset: 0 });
    expect(hits).toHaveLength(99);
    expect(new Set(hits.map((hit) => hit.chunk.entityId)).size).toBe(99);
  });
  test('a table another process dropped and made again under the same name is not read with the old table\'s keys', async () => {
    // This handle searches (and caches the keys of fragment 0); another index on the same directory
    // (a worker process re-embedding) drops the table and writes new entities, again from fragment 0
    // (fewer rows than the old fragment 0 held: each row's offset has a key in the old fragment's).
    expect(await index.search(id, { strategy: 'keyword', text: 'ordinary filler', limit: 200, offset: 0 })).toHaveLength(100);
    const other = await LanceDbVectorIndex.open(directory, DIMENSIONS);
    try {
      await other.deleteCollection(id);
      await other.add(id, Array.from({ length: 60 }, (_, e) => makeChunk(DIMENSIONS, e, { entityId: `new-${e}`, chunkIndex: 0 })));
    } finally {
      await other.close();
    }
    const hits = await index.search(id, { strategy: 'keyword', text: 'ordinary filler', limit: 200, offset: 0 });
    expect(hits.map((hit) => hit.chunk.entityId).sort()).toEqual(Array.from({ length: 60 }, (_, e) => `new-${e}`).sort());
  });
});
