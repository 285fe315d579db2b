import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import { startTestServer, type TestServer } from '../support/harness.js';
import { api, connectStub, createCollection, eventually, FAST_WORKER } from '../support/sync-helpers.js';

/**
 * Issue 18, finding 12 (the review of the durable cleanups, a1da6a2): a deletion waits at most 15 s
 * for a running sync to stop (stopSyncs), then commits and records its cleanup. A run still writing
 * after that — a batch queued behind a long compaction, a worker the cancel did not reach — added
 * chunks and raw records after that cleanup had run, and a deleted collection's table was made again
 * by its next write: they stayed for good. The worker now checks, when a run has ended (its writes
 * included), whether its connection or collection is gone, and records and queues the cleanup of
 * what it wrote.
 *
 * Here the rows are deleted in SQL while their runs write, with no cleanup of their own: what the
 * runs wrote, before and after, is what their ends must clean up (a deletion's own cleanup, run
 * before the late writes, would leave exactly the late ones). One deployment: the check is the
 * worker's, the same code over either database and queue.
 */
describe('issue 18-12: what a run writes after its connection or collection was deleted is cleaned up when it ends', () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  test('a connection deleted under its run, and a collection deleted under its run, leave no chunks, raw data or table; a connection beside them keeps its own', async () => {
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_SYNC_CONCURRENCY: '2' } });
    const call = api(server.url, server.apiKey);
    const core = server.running.core;
    const vectors = await core.vectors();

    const connect = async (readableId: string, config: Record<string, unknown>) => (await connectStub(call, readableId, { hierarchy_depth: 0, ...config })).connectionId;
    const chunksOf = async (collectionId: string, connectionId: string) => (await vectors.list(collectionId, [], 10_000)).filter((chunk) => chunk.sourceConnectionId === connectionId).length;
    const rawKeys = async (prefix: string) => {
      let keys = 0;
      for await (const _ of core.blobs.list(prefix)) keys++;
      return keys;
    };
    const sql = (statement: string, parameters: unknown[] = []) => core.database.orm.em.getConnection().execute<Record<string, unknown>[]>(statement, parameters);

    const kept = await createCollection(call, 'late-kept');
    const dropped = await createCollection(call, 'late-dropped');
    const keptConnection = await connect('late-kept', { entity_count: 12, seed: 1 });
    await eventually(
      () => chunksOf(kept, keptConnection),
      (chunks) => chunks > 0,
    );
    const keptChunks = await eventually(
      () => sql(`select status from sync_jobs where source_connection_id = ?`, [keptConnection]),
      (rows) => rows[0]?.status === 'COMPLETED',
    ).then(() => chunksOf(kept, keptConnection));
    // Two slow runs (10 ms an entity, ~6 s each), both writing a batch of 20 every ~200 ms.
    const deletedConnection = await connect('late-kept', { entity_count: 600, seed: 2, delay_ms: 10 });
    const droppedConnection = await connect('late-dropped', { entity_count: 600, seed: 3, delay_ms: 10 });
    await eventually(
      async () => [await chunksOf(kept, deletedConnection), await chunksOf(dropped, droppedConnection)],
      ([deleted, inDropped]) => deleted! >= 40 && inDropped! >= 40,
    );
    expect(await rawKeys(`raw/${kept}/${deletedConnection}`)).toBeGreaterThan(0);

    // Deleted under the running syncs, without their wait or cleanup (the jobs go with the connections).
    await sql('delete from source_connections where id = ?', [deletedConnection]);
    await sql('delete from collections where id = ?', [dropped]);

    const tablePath = path.join(server.dataDir, 'lancedb', `${LanceDbVectorIndex.tableName(dropped)}.lance`);
    const after = await eventually(
      async () => ({
        deletedChunks: await chunksOf(kept, deletedConnection),
        deletedRaw: await rawKeys(`raw/${kept}/${deletedConnection}`),
        droppedRaw: await rawKeys(`raw/${dropped}`),
        droppedTable: existsSync(tablePath),
        pending: Number((await sql('select count(*) as count from pending_cleanups'))[0]!.count),
      }),
      (now) => now.deletedChunks === 0 && now.deletedRaw === 0 && now.droppedRaw === 0 && !now.droppedTable && now.pending === 0,
    );
    expect(after).toEqual({ deletedChunks: 0, deletedRaw: 0, droppedRaw: 0, droppedTable: false, pending: 0 });
    expect(await chunksOf(kept, keptConnection)).toBe(keptChunks);
    expect(await rawKeys(`raw/${kept}/${keptConnection}`)).toBeGreaterThan(0);
  });
});
