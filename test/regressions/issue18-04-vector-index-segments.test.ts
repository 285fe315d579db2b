import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { makeChunk, seededVector } from '../../src/platform/vectors/vector-index.contract.js';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import { vectorIndexSegmentsAllowed } from '../../src/platform/vectors/lancedb/maintenance.js';

/**
 * Issue 18, finding 4 (bench lab on bench:search's 100,000 chunks): LanceDB's optimize() folds the
 * rows added since the vector index was trained into a segment of their own and never merges
 * segments, and a search probes every one: a collection synced again and again got one segment more
 * with every sync that added rows, each ~0.5 ms of CPU more per semantic search (2.3 ms with one
 * segment, 5.6 with seven). A sync's end (optimize()) now trains the index again when it holds more
 * segments than vectorIndexSegmentsAllowed, one per 250,000 rows and the first.
 */
describe('issue 18-04: a vector index does not gather a segment per sync', () => {
  const DIMENSIONS = 8;
  let directory: string;
  let index: LanceDbVectorIndex;
  const id = randomUUID();
  const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => makeChunk(DIMENSIONS, from + i));

  beforeEach(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'catchment-issue18-04-'));
    index = await LanceDbVectorIndex.open(directory, DIMENSIONS, { vectorIndexMinRows: 1000, ivfPartitionsFor: () => 4 });
  });
  afterEach(async () => {
    await index.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('rows added and optimized after the index was trained leave it in one segment, and are found', async () => {
    const db = await lancedb.connect(directory);
    try {
      const segments = async () => {
        const table = await db.openTable(LanceDbVectorIndex.tableName(id));
        const [vector] = (await table.listIndices()).filter((config) => config.columns.includes('vector'));
        const stats = await table.indexStats(vector!.name);
        table.close();
        return { segments: stats!.numIndices, unindexed: stats!.numUnindexedRows };
      };
      await index.add(id, rows(0, 1500));
      await index.optimize(id);
      expect(await segments()).toEqual({ segments: 1, unindexed: 0 });
      for (let sync = 0; sync < 3; sync++) {
        await index.add(id, rows(1500 + sync * 100, 100));
        await index.optimize(id); // a sync's end
        expect(await segments()).toEqual({ segments: 1, unindexed: 0 });
      }
      const [top] = await index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1777), limit: 1, offset: 0 });
      expect(top!.chunk.entityId).toBe('entity-1777');
    } finally {
      db.close();
    }
  });

  test('segments allowed at a sync’s end: one, and one more per 250,000 rows', () => {
    expect([0, 100_000, 249_999, 250_000, 1_000_000].map(vectorIndexSegmentsAllowed)).toEqual([1, 1, 1, 2, 5]);
  });
});
