import { afterAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { makeChunk } from '../../src/platform/vectors/vector-index.contract.js';
import { startTestServer, type TestServer } from '../support/harness.js';
import { unindexedFullTextRows } from '../support/lancedb-fixture.js';
import { api, createCollection, eventually, FAST_WORKER, syncStub } from '../support/sync-helpers.js';

/**
 * Issue 18, finding 13 (the review of 4b57b8a, where a sync's job began to complete before its index
 * optimize): an optimize left running after COMPLETED and lost with its process (killed, or skipped
 * as the index closed) was owed for good — the connection's next run optimized only if it wrote, and
 * a process that had not written never compacted on searches — so the rows it should have folded in
 * were scanned one by one by every search. Each job now records its optimize done
 * (`sync_jobs.index_optimized_at`); the next run and the worker's start do one still owed.
 *
 * Here a completed job's optimize is lost as a stopped process leaves it: rows written and not
 * folded into the full-text index, and the job not marked. The next start must optimize them.
 */
describe('issue 18-13: an index optimize a stopped process left undone is done by the next start', () => {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  afterAll(async () => {
    await second?.running.stop().catch(() => undefined);
    await first?.discard();
  });

  test('the rows a completed job left unoptimized are folded in, and the job marked, when the worker starts again', async () => {
    first = await startTestServer({ deployment: 'embedded', env: FAST_WORKER });
    const call = api(first.url, first.apiKey);
    const collectionId = await createCollection(call, 'optimize-owed');
    const { connectionId, jobId } = await syncStub(call, 'optimize-owed', { entity_count: 30, seed: 4, hierarchy_depth: 0 });
    const core = first.running.core;
    const vectors = await core.vectors();
    await vectors.settled(collectionId);
    const sql = (server: TestServer, statement: string, parameters: unknown[] = []) => server.running.core.database.orm.em.getConnection().execute<Record<string, unknown>[]>(statement, parameters);
    const optimizedAt = async (server: TestServer) => (await sql(server, 'select index_optimized_at from sync_jobs where id = ?', [jobId]))[0]!.index_optimized_at;
    // Marked once the optimize has ended: just after settled() resolves, not with it.
    const firstServer = first;
    await eventually(
      () => optimizedAt(firstServer),
      (at) => at !== null,
    );
    const lanceDirectory = path.join(first.dataDir, 'lancedb');
    expect(await unindexedFullTextRows(lanceDirectory, collectionId)).toBe(0);

    // What the lost optimize leaves: rows its run wrote, not in the full-text index, and the job not marked.
    const dimensions = (await core.embedder()).dimensions;
    await vectors.add(
      collectionId,
      Array.from({ length: 40 }, (_, i) => makeChunk(dimensions, 1000 + i, { sourceConnectionId: connectionId, text: `late rows ${i}` })),
    );
    await sql(first, 'update sync_jobs set index_optimized_at = null where id = ?', [jobId]);
    expect(await unindexedFullTextRows(lanceDirectory, collectionId)).toBe(40);
    await first.running.stop();

    second = await startTestServer({ deployment: 'embedded', env: FAST_WORKER, dataDir: first.dataDir, databaseUrl: first.databaseUrl, redisPrefix: first.redisPrefix });
    const server = second;
    await eventually(
      () => optimizedAt(server),
      (at) => at !== null,
    );
    expect(await unindexedFullTextRows(lanceDirectory, collectionId)).toBe(0);
  });
});
