import { afterAll, describe, expect, test } from '@jest/globals';
import { startTestServer, type TestServer } from '../support/harness.js';
import { api, connectStub, createCollection, eventually, waitForJob } from '../support/sync-helpers.js';

/**
 * Issue 18, finding 15: a job finished by someone else while its run goes on (another process's
 * janitor found its heartbeat stale and failed it; a run on a paused or overloaded host) kept
 * receiving checkpoints. Finishing clears the job's counts as of its last checkpoint for good (a
 * finished job never resumes), but the run's next checkpoint wrote them back, so a FAILED job held
 * counts only a resumed run should read. A checkpoint now updates a job that is RUNNING or
 * CANCELLING only; the connection's resume cursor still moves (the entities it covers are committed).
 */
describe('issue 18-15: a checkpoint stored after the job finished does not give it counts again', () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  test('the zombie run of a job failed meanwhile moves the resume cursor, and the job keeps no checkpoint counts', async () => {
    server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_SYNC_BATCH_SIZE: '25' } });
    const call = api(server.url, server.apiKey);
    const database = server.running.core.database.orm.em.getConnection();
    const countsOf = async (id: string) =>
      (await database.execute<{ counts_at_checkpoint: unknown }[]>('select counts_at_checkpoint from sync_jobs where id = ?', [id]))[0]!.counts_at_checkpoint;
    const cursorOf = async (id: string) =>
      JSON.stringify((await database.execute<{ resume_cursor: unknown }[]>('select resume_cursor from source_connections where id = ?', [id]))[0]!.resume_cursor);

    await createCollection(call, 'zombie-run');
    // 10 ms an entity: the stub checkpoints every 100 entities, about once a second.
    const { connectionId, jobId } = await connectStub(call, 'zombie-run', { entity_count: 800, delay_ms: 10, hierarchy_depth: 0 });
    await eventually(() => waitForJob(call, connectionId, jobId, ['RUNNING']), (running) => running.entities_inserted >= 150);
    // The run stores checkpoints with the job's counts: what makes the rest of the test mean something.
    expect(await countsOf(jobId)).not.toBeNull();

    // What another process's janitor does to a job whose heartbeat it found stale.
    const failed = await server.running.core.services.sync.transition(jobId, ['RUNNING'], 'FAILED', { completedAt: new Date(), error: 'stopped responding (test)' });
    expect(failed?.status).toBe('FAILED');
    expect(await countsOf(jobId)).toBeNull();

    // The run goes on (nothing tells it), and stores its next checkpoint: the connection's cursor moves.
    const cursorAtFailure = await cursorOf(connectionId);
    await eventually(
      () => cursorOf(connectionId),
      (cursor) => cursor !== cursorAtFailure,
      15_000,
    );
    expect(await countsOf(jobId)).toBeNull();
    expect((await waitForJob(call, connectionId, jobId, ['FAILED', 'COMPLETED', 'CANCELLED'])).status).toBe('FAILED');
  }, 60_000);
});
