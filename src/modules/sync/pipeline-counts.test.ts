import { beforeAll, describe, expect, test } from '@jest/globals';
import type { SourceItem } from '../../connectors/connector.js';
import { stubEntity } from '../../connectors/stub/index.js';
import { pipelineOn, runOn, useEntityTable } from '../../../test/support/entity-table-fixture.js';
import type { SyncPipeline } from './pipeline.js';
import type { SyncCounts } from './sync-counts.js';

/**
 * A checkpoint falls anywhere in a batch, and a job resumed from it continues from the counts as of
 * its item: the pipeline gives the counts at every item of a committed batch, and starts a run from
 * the counts it is given. Real entity table (PGlite), index and embedder; batches of four.
 */
describe('the counts as of each item of a batch', () => {
  const table = useEntityTable('counts-at-items');
  let pipeline: SyncPipeline;
  const settings = { seed: 9, size_mix: 'small', hierarchy_depth: 0, code_files: false, revision: 0 } as const;
  const pick = ({ inserted, updated, deleted, skipped }: SyncCounts) => ({ inserted, updated, deleted, skipped });

  beforeAll(async () => {
    pipeline = await pipelineOn(table, table.store, 4);
    // Stored before: stub-3 met unchanged below (skipped), then deleted; stub-7 deleted in the last test.
    await pipeline.run(runOn(table, '00000000-0000-4000-8000-0000000000d0', [stubEntity(3, settings), stubEntity(7, settings)], false));
  });

  test('every item counts where it comes: a superseded version nothing, a deletion of an entity not stored nothing', async () => {
    const items: SourceItem[] = [
      stubEntity(0, settings), // superseded by its revision, later in the batch
      { keep: 'stub-9' },
      stubEntity(3, settings), // unchanged
      stubEntity(0, { ...settings, revision: 1 }),
      // Second batch.
      { delete: 'stub-3' },
      stubEntity(1, settings),
      { delete: 'never-stored' },
    ];
    const through: { committed: number; counts: ReturnType<typeof pick>[]; chunks: number[] }[] = [];
    let previous = 0;
    const run = runOn(table, '00000000-0000-4000-8000-0000000000d1', items, false);
    run.onProgress = async (_counts, committed, countsThrough) => {
      const at = Array.from({ length: committed - previous }, (_, i) => countsThrough(previous + i + 1));
      through.push({ committed, counts: at.map(pick), chunks: at.map((counts) => counts.chunks) });
      previous = committed;
    };
    const counts = await pipeline.run(run);

    expect(through.map(({ committed }) => committed)).toEqual([4, 7]);
    expect(through[0]!.counts).toEqual([
      { inserted: 0, updated: 0, deleted: 0, skipped: 0 },
      { inserted: 0, updated: 0, deleted: 0, skipped: 1 },
      { inserted: 0, updated: 0, deleted: 0, skipped: 2 },
      { inserted: 1, updated: 0, deleted: 0, skipped: 2 },
    ]);
    expect(through[1]!.counts).toEqual([
      { inserted: 1, updated: 0, deleted: 1, skipped: 2 },
      { inserted: 2, updated: 0, deleted: 1, skipped: 2 },
      { inserted: 2, updated: 0, deleted: 1, skipped: 2 },
    ]);
    // Chunks come with the written entities only, and the last item's counts are the run's.
    const [first, second] = through.map(({ chunks }) => chunks);
    expect(first!.slice(0, 3)).toEqual([0, 0, 0]);
    expect(first![3]).toBeGreaterThan(0);
    expect(second![1]).toBeGreaterThan(second![0]!);
    expect(second![2]).toBe(counts.chunks);
    expect(pick(counts)).toEqual(through[1]!.counts[2]);
  });

  test('a deletion counts at its own item, when it removed a stored entity, and once', async () => {
    const items: SourceItem[] = [{ delete: 'never-stored-either' }, { delete: 'stub-7' }, { delete: 'stub-7' }, stubEntity(8, settings)];
    const through: ReturnType<typeof pick>[] = [];
    const run = runOn(table, '00000000-0000-4000-8000-0000000000d3', items, false);
    run.onProgress = async (_counts, committed, countsThrough) => {
      for (let item = 1; item <= committed; item++) through.push(pick(countsThrough(item)));
    };
    const counts = await pipeline.run(run);
    expect(through).toEqual([
      { inserted: 0, updated: 0, deleted: 0, skipped: 0 },
      { inserted: 0, updated: 0, deleted: 1, skipped: 0 },
      { inserted: 0, updated: 0, deleted: 1, skipped: 0 },
      { inserted: 1, updated: 0, deleted: 1, skipped: 0 },
    ]);
    expect(pick(counts)).toEqual(through[3]);
  });

  test('a run given counts to start from adds to them', async () => {
    const run = runOn(table, '00000000-0000-4000-8000-0000000000d2', [stubEntity(5, settings), stubEntity(1, settings)], false);
    run.startCounts = { inserted: 300, updated: 2, deleted: 1, skipped: 40, failed: 0, chunks: 900 };
    const counts = await pipeline.run(run);
    expect(pick(counts)).toEqual({ inserted: 301, updated: 2, deleted: 1, skipped: 41 });
    expect(counts.chunks).toBeGreaterThan(900);
  });
});
