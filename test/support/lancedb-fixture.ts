import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { LanceDbVectorIndexOptions } from '../../src/platform/vectors/lancedb/connection.js';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import { makeChunk, seededVector } from '../../src/platform/vectors/vector-index.contract.js';
import type { ChunkRecord, ScoredChunk } from '../../src/platform/vectors/vector-index.js';

/** A LanceDB index in a temporary directory of its own. */
export interface LanceDbFixture {
  directory: string;
  index: LanceDbVectorIndex;
}

/**
 * Registers, in the calling `describe`, the opening of an index in a new temporary directory before
 * each test (`each`) or once (`all`), and its closing and removal after. Its fields are set once the
 * set-up ran.
 */
export function useLanceDbIndex(dimensions: number, options: LanceDbVectorIndexOptions = {}, scope: 'each' | 'all' = 'each'): LanceDbFixture {
  const fixture = {} as LanceDbFixture;
  const [before, after] = scope === 'each' ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    fixture.directory = mkdtempSync(path.join(tmpdir(), 'catchment-lance-'));
    fixture.index = await LanceDbVectorIndex.open(fixture.directory, dimensions, options);
  });
  after(async () => {
    await fixture.index.close();
    rmSync(fixture.directory, { recursive: true, force: true });
  });
  return fixture;
}

/**
 * The statistics of the index of a collection's table (its first shard, or `shard`) that `pick`
 * chooses (its first match), read through a connection of its own, as another process would see them.
 */
export async function indexStatsOf(directory: string, collectionId: string, pick: (config: lancedb.IndexConfig) => boolean, shard = 0): Promise<lancedb.IndexStatistics> {
  const db = await lancedb.connect(directory);
  try {
    const table = await db.openTable(LanceDbVectorIndex.tableName(collectionId, shard));
    try {
      const config = (await table.listIndices()).find(pick);
      if (!config) throw new Error(`the table of ${collectionId} has no such index`);
      return (await table.indexStats(config.name))!;
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
}

/** The rows a collection's full-text index (of its first shard, or `shard`) lacks (written since its last compaction), read as another process would. */
export async function unindexedFullTextRows(directory: string, collectionId: string, shard = 0): Promise<number> {
  return (await indexStatsOf(directory, collectionId, (config) => config.indexType === 'FTS', shard)).numUnindexedRows;
}

/**
 * Write number `write` of `rows` chunks as the upkeep tests make them: chunks numbered on from the
 * writes before, each saying `ordinary filler text marker<write>` (a word every chunk has, and one per write).
 */
export function markedWrite(dimensions: number, write: number, rows: number): ChunkRecord[] {
  return Array.from({ length: rows }, (_, i) => makeChunk(dimensions, write * rows + i, { text: `ordinary filler text marker${write}` }));
}

/** The first three hits of a keyword search for `text` in a collection, as the upkeep tests search (its vector unused). */
export function keywordSearch(index: LanceDbVectorIndex, collectionId: string, dimensions: number, text: string): Promise<ScoredChunk[]> {
  return index.search(collectionId, { strategy: 'keyword', text, vector: seededVector(dimensions, 1), limit: 3, offset: 0 });
}
