import { beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { SourceItem } from '../../connectors/connector.js';
import { stubEntity } from '../../connectors/stub/index.js';
import { pipelineOn, runOn, useEntityTable } from '../../../test/support/entity-table-fixture.js';
import type { EntityRow } from './entity-store.js';
import type { SyncPipeline } from './pipeline.js';

/**
 * The end of a complete run deletes what the connection stores and the run did not meet. It skips
 * reading the stored ids when it met only entities (each written or matched by its stored hash) and
 * the connection stores as many rows as it met ids: then nothing can be gone. These cases have equal
 * counts although something is gone, so the shortcut must not apply: a `keep` of an id never stored,
 * and an entity met then deleted by a later item. Real entity table (PGlite), index and embedder.
 */
describe('a complete run deletes the stored entities it did not meet, also when the counts match', () => {
  const table = useEntityTable('unseen');
  let pipeline: SyncPipeline;
  let idPagesRead = 0;
  const settings = { seed: 3, size_mix: 'small', hierarchy_depth: 0, code_files: false, revision: 0 } as const;
  const jobId = '00000000-0000-4000-8000-0000000000bb';

  const storedIds = async () => {
    const pages: string[] = [];
    for await (const page of table.store.ids(table.connectionId, 100)) pages.push(...page);
    return pages;
  };
  const storeStale = (entityId: string) =>
    table.store.upsert(table.connectionId, table.collectionId, jobId, [
      { entityId, entityType: 'note', name: entityId, contentHash: 'old', chunkCount: 0, breadcrumbs: [], fields: null, sourceCreatedAt: null, sourceUpdatedAt: null } satisfies EntityRow,
    ]);
  const completeRun = (items: SourceItem[]) => pipeline.run(runOn(table, jobId, items, true));

  beforeAll(async () => {
    const entities = table.store;
    // The real store, its id pages counted.
    const counted = Object.create(entities) as typeof entities;
    counted.ids = (sourceConnectionId, pageSize) => {
      idPagesRead++;
      return entities.ids(sourceConnectionId, pageSize);
    };
    pipeline = await pipelineOn(table, counted);
  });
  beforeEach(async () => {
    await table.store.delete(table.connectionId, await storedIds());
    idPagesRead = 0;
  });

  test('a keep of an id never stored: the stale row goes', async () => {
    await storeStale('stale');
    const counts = await completeRun([stubEntity(0, settings), { keep: 'never-stored' }]);
    expect(await storedIds()).toEqual(['stub-0']);
    expect(counts.deleted).toBe(1);
  });

  test('an entity met, then deleted by a later item: the stale row goes too', async () => {
    await storeStale('stale');
    await completeRun([stubEntity(0, settings), { delete: 'stub-0' }]);
    expect(await storedIds()).toEqual([]);
  });

  test('only entities, as many stored as met: no id page is read', async () => {
    await completeRun([stubEntity(0, settings), stubEntity(1, settings)]);
    expect(await storedIds()).toEqual(['stub-0', 'stub-1']);
    expect(idPagesRead).toBe(0);
  });

  test('only entities, one stored row not met: the pages are read and it goes', async () => {
    await storeStale('stale');
    const counts = await completeRun([stubEntity(0, settings), stubEntity(1, settings)]);
    expect(await storedIds()).toEqual(['stub-0', 'stub-1']);
    expect(counts.deleted).toBe(1);
    expect(idPagesRead).toBe(1);
  });
});
