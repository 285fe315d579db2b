import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { makeChunk, seededVector } from '../../src/platform/vectors/vector-index.contract.js';
import { indexStatsOf, useLanceDbIndex } from '../support/lancedb-fixture.js';
import { vectorIndexSegmentsAllowed } from '../../src/platform/vectors/lancedb/maintenance.js';

/**
 * Issue 18, finding 4 (bench lab on bench:search's 100,000 chunks): LanceDB's optimize() folds the
 * rows added since the vector index was trained into a segment of their own and never merges
 * segments, and a search probes every one: a collection synced again and again got one segment more
 * with every sync that added rows, each ~0.5 ms of CPU more per semantic search (2.3 ms with one
 * segment, 5.6 with seven). A sync's end (optimize()) now trains the index again when it holds more
 * segments than vectorIndexSegmentsAllowed, one per 250,000 rows and the first, and the rows added
 * since it was trained are a tenth of the table, or the extra segments are more than three. (The
 * review of the first fix found every sync that added a row retraining the index: a one-entity push
 * cost 2.5–2.8 s of CPU at 100,000 rows, against 0.65–0.85 s before it.)
 */
describe('issue 18-04: a vector index does not gather a segment per sync', () => {
  const DIMENSIONS = 8;
  const lance = useLanceDbIndex(DIMENSIONS, { vectorIndexMinRows: 1000, ivfPartitionsFor: () => 4 });
  const id = randomUUID();
  const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => makeChunk(DIMENSIONS, from + i));
  const segmentsOf = async () => {
    const stats = await indexStatsOf(lance.directory, id, (config) => config.columns.includes('vector'));
    return { segments: stats.numIndices, unindexed: stats.numUnindexedRows };
  };

  test('a sync that adds a tenth of the table or more leaves the index in one segment, and its rows are found', async () => {
    await lance.index.add(id, rows(0, 1500));
    await lance.index.optimize(id);
    expect(await segmentsOf()).toEqual({ segments: 1, unindexed: 0 });
    for (let sync = 0; sync < 2; sync++) {
      await lance.index.add(id, rows(1500 + sync * 200, 200));
      await lance.index.optimize(id); // a sync's end
      expect(await segmentsOf()).toEqual({ segments: 1, unindexed: 0 });
    }
    const [top] = await lance.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1777), limit: 1, offset: 0 });
    expect(top!.chunk.entityId).toBe('entity-1777');
  });

  test('small syncs (a push of one entity) keep their segments, until more than three extra ones or a tenth of the table added', async () => {
    await lance.index.add(id, rows(0, 1500));
    await lance.index.optimize(id);
    const seen: number[] = [];
    for (let push = 0; push < 8; push++) {
      await lance.index.add(id, rows(1500 + push, 1));
      await lance.index.optimize(id);
      seen.push((await segmentsOf()).segments ?? 1);
    }
    // Retraining costs the whole table: one-row pushes keep their segments (LanceDB's compaction may
    // fold one into the last), and the index is trained again once more than three extra would stay.
    expect(seen.filter((segments) => segments > 1).length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...seen)).toBe(4);
    expect(seen.indexOf(4)).toBeLessThan(seen.length - 1);
    expect(seen[seen.indexOf(4) + 1]).toBe(1);
    // The rows added since the last training reach a tenth of the table: merged at once.
    await lance.index.add(id, rows(1508, 180));
    await lance.index.optimize(id);
    expect(await segmentsOf()).toEqual({ segments: 1, unindexed: 0 });
    const [top] = await lance.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 1502), limit: 1, offset: 0 });
    expect(top!.chunk.entityId).toBe('entity-1502');
  });

  test('segments allowed at a sync’s end: one, and one more per 250,000 rows', () => {
    expect([0, 100_000, 249_999, 250_000, 1_000_000].map(vectorIndexSegmentsAllowed)).toEqual([1, 1, 1, 2, 5]);
  });
});
