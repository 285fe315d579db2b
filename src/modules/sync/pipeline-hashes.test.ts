import { beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { SourceItem } from '../../connectors/connector.js';
import { stubEntity } from '../../connectors/stub/index.js';
import { pipelineOn, runOn, useEntityTable } from '../../../test/support/entity-table-fixture.js';
import { contentHash } from './content-hash.js';
import type { EntityRow } from './entity-store.js';
import type { SyncPipeline } from './pipeline.js';

/**
 * A run reads the stored hashes of the entities it meets, to skip the unchanged ones. Into a
 * connection that held no entity when the run began, only ids the run met before can be stored (by
 * the run itself): only theirs are read. Real entity table (PGlite), index and embedder; batches of one.
 */
describe('the stored hashes a run reads', () => {
  const table = useEntityTable('hashes-read');
  let pipeline: SyncPipeline;
  /** The ids of each hashes() call of the pipeline. */
  let asked: string[][] = [];
  /** Each non-empty upsert's rows: id, and whether the run wrote it as new (a plain insert). */
  let written: [string, boolean | undefined][][] = [];
  const settings = { seed: 5, size_mix: 'small', hierarchy_depth: 0, code_files: false, revision: 0 } as const;
  const jobId = '00000000-0000-4000-8000-0000000000cc';

  const storedHashes = async () => table.store.hashes(table.connectionId, ['stub-0', 'stub-1', 'stub-2']);
  const run = (items: SourceItem[]) => pipeline.run(runOn(table, jobId, items, false));

  beforeAll(async () => {
    const entities = table.store;
    const counted = Object.create(entities) as typeof entities;
    counted.hashes = (sourceConnectionId, entityIds) => {
      asked.push([...entityIds]);
      return entities.hashes(sourceConnectionId, entityIds);
    };
    counted.upsert = (sourceConnectionId, collectionId, job, rows) => {
      if (rows.length > 0) written.push(rows.map((row) => [row.entityId, row.isNew]));
      return entities.upsert(sourceConnectionId, collectionId, job, rows);
    };
    pipeline = await pipelineOn(table, counted);
  });
  beforeEach(async () => {
    await table.store.delete(table.connectionId, ['stub-0', 'stub-1', 'stub-2']);
    asked = [];
    written = [];
  });

  test('into an empty connection: none for ids met first; an id met again is compared with what the run stored (unchanged: skipped; changed: updated)', async () => {
    const revised = stubEntity(0, { ...settings, revision: 1 });
    const counts = await run([stubEntity(0, settings), stubEntity(1, settings), stubEntity(1, settings), revised]);
    expect(asked.filter((ids) => ids.length > 0)).toEqual([['stub-1'], ['stub-0']]);
    expect(counts).toMatchObject({ inserted: 2, skipped: 1, updated: 1 });
    expect(written).toEqual([[['stub-0', true]], [['stub-1', true]], [['stub-0', false]]]);
    expect(await storedHashes()).toEqual(new Map([['stub-0', contentHash(revised)], ['stub-1', contentHash(stubEntity(1, settings))]]));
  });

  test('into a connection that holds an entity: every id met is read, and a stored one is updated, not inserted', async () => {
    const stale: EntityRow = { entityId: 'stub-2', entityType: 'note', name: 'stale', contentHash: 'old', chunkCount: 0, breadcrumbs: [], fields: null, sourceCreatedAt: null, sourceUpdatedAt: null };
    await table.store.upsert(table.connectionId, table.collectionId, jobId, [stale]);
    const counts = await run([stubEntity(0, settings), stubEntity(2, settings)]);
    expect(asked).toEqual([['stub-0'], ['stub-2']]);
    expect(counts).toMatchObject({ inserted: 1, updated: 1, skipped: 0 });
    expect(written).toEqual([[['stub-0', true]], [['stub-2', false]]]);
  });
});
