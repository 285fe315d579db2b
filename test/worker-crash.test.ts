import { afterAll, expect, test } from '@jest/globals';
import { REDIS_URL, startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/process.js';
import { api, eventually, waitForJob } from './support/sync-helpers.js';

let server: TestServer | undefined;
const workers: ServerProcess[] = [];
afterAll(async () => {
  for (const worker of workers) await worker.stop('SIGKILL');
  await server?.stop();
});

function workerEnvFor(server: TestServer) {
  return {
    DATABASE_URL: server.databaseUrl!,
    REDIS_URL,
    CATCHMENT_REDIS_PREFIX: server.redisPrefix,
    CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    CATCHMENT_DATA_DIR: server.dataDir,
    CATCHMENT_SYNC_HEARTBEAT_SECONDS: '1',
    CATCHMENT_SYNC_STALE_SECONDS: '3',
    CATCHMENT_WORKER_TICK_SECONDS: '1',
    CATCHMENT_SYNC_BATCH_SIZE: '25',
  };
}

test('a worker SIGKILLed mid-sync loses no committed work and leaves no job RUNNING (servers deployment, separate worker processes)', async () => {
  server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
  const workerEnv = workerEnvFor(server);
  const first = await startServerProcess(workerEnv, 60_000, 'worker');
  workers.push(first);
  const call = api(server.url, server.apiKey);
  await call('POST', '/collections', { name: 'Crash target', readable_id: 'crash-target' });
  const connection = (
    await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: 'crash-target',
      authentication: { credentials: { token: 't' } },
      config: { entity_count: 1000, delay_ms: 5, hierarchy_depth: 0 },
    })
  ).body;
  const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
  await eventually(() => waitForJob(call, connection.id, job.id, ['RUNNING']), (j) => j.entities_inserted >= 50);

  expect(await first.stop('SIGKILL')).toBe(null);
  const second = await startServerProcess(workerEnv, 60_000, 'worker');
  workers.push(second);

  const failed = await waitForJob(call, connection.id, job.id, ['FAILED', 'COMPLETED', 'CANCELLED'], 30_000);
  expect(failed.status).toBe('FAILED');
  expect(failed.error).toMatch(/stopped responding/);
  const kept = (await call('GET', `/source-connections/${connection.id}`)).body.entity_count;
  expect(kept).toBeGreaterThanOrEqual(failed.entities_inserted);
  expect(kept).toBeGreaterThanOrEqual(50);

  // The next run picks up where the committed work stopped: only the rest is inserted.
  const rerun = (await call('POST', `/source-connections/${connection.id}/run?force_full_sync=true`)).body;
  const done = await waitForJob(call, connection.id, rerun.id, ['COMPLETED', 'FAILED'], 60_000);
  expect(done).toMatchObject({ status: 'COMPLETED', entities_inserted: 1000 - kept, entities_skipped: kept, entities_deleted: 0 });
  expect((await call('GET', `/source-connections/${connection.id}`)).body.entity_count).toBe(1000);
  expect(await second.stop('SIGTERM')).toBe(0);
});

/**
 * A 600-entity stub sync (`delayMs` an entity) into a new collection `readableId`, run by a worker
 * stopped with SIGTERM once the job has inserted `stopAfter` entities, then by a second worker.
 * Returns the job as handed back (asserted PENDING) and as completed by the second worker.
 */
async function handBackAndResume(readableId: string, delayMs: number, stopAfter: number) {
  const workerEnv = workerEnvFor(server!);
  const first = await startServerProcess(workerEnv, 60_000, 'worker');
  workers.push(first);
  const call = api(server!.url, server!.apiKey);
  await call('POST', '/collections', { name: readableId, readable_id: readableId });
  const connection = (
    await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: readableId,
      authentication: { credentials: { token: 't' } },
      config: { entity_count: 600, delay_ms: delayMs, hierarchy_depth: 0 },
    })
  ).body;
  const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
  await eventually(() => waitForJob(call, connection.id, job.id, ['RUNNING']), (j) => j.entities_inserted >= stopAfter);
  expect(await first.stop('SIGTERM')).toBe(0);
  const handedBack = await waitForJob(call, connection.id, job.id, ['PENDING', 'COMPLETED', 'FAILED', 'CANCELLED']);
  expect(handedBack.status).toBe('PENDING');

  const second = await startServerProcess(workerEnv, 60_000, 'worker');
  workers.push(second);
  const done = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED', 'CANCELLED'], 60_000);
  expect(done.status).toBe('COMPLETED');
  expect((await call('GET', `/source-connections/${connection.id}`)).body.entity_count).toBe(600);
  expect(await second.stop('SIGTERM')).toBe(0);
  return { handedBack, done };
}

test('a worker stopped with SIGTERM mid-sync hands the job back: the next worker completes it', async () => {
  // 40 ms an entity: the worker is stopped before the stub's first checkpoint (CHECKPOINT_EVERY, 100 entities:
  // 4 s in), so the next worker runs the job from the start (the test below stops it after checkpoints).
  const { done } = await handBackAndResume('restart-target', 40, 25);
  expect(done.entities_inserted + done.entities_skipped).toBe(600);
});

test('a job handed back after checkpoints resumes from the last one with the counts as of it: every entity counted once', async () => {
  // 5 ms an entity: two of the stub's checkpoints (every 100 entities) are stored before the stop.
  const { handedBack, done } = await handBackAndResume('resume-target', 5, 250);
  expect(handedBack.entities_inserted).toBeLessThan(600);
  // The resumed run lists again only what came after the checkpoint (what the first worker committed past it is
  // skipped by hash): counted from 0, the job said 600 less the checkpoint's entities.
  expect(done.entities_inserted + done.entities_skipped).toBe(600);
  expect(done.entities_inserted).toBeGreaterThanOrEqual(200);
  // The checkpoint's counts were kept while the job could resume, and go once it is finished.
  const [row] = await server!.running.core.database.orm.em
    .getConnection()
    .execute<{ counts_at_checkpoint: unknown }[]>('select counts_at_checkpoint from sync_jobs where id = ?', [done.id]);
  expect(row).toEqual({ counts_at_checkpoint: null });
});
