import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { http, startTestServer, type TestServer } from '../support/harness.js';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.js';
import { api, type Api, waitForJob } from '../support/sync-helpers.js';

/**
 * Issue 12, finding 2: a Redis restart broke the job queue until every process restarted (NOSCRIPT
 * on every run and create, a running sync failed on "maxRetriesPerRequest", PENDING jobs never
 * started, rate-limited calls took seconds and answered 500). Here a servers deployment runs on a
 * Redis of the test's own, which is SIGKILLed mid-sync (no persistence: every key is lost) and
 * started again on the same port, with no process restart.
 */
let redis: OwnRedis;
let server: TestServer;
let call: Api;
beforeAll(async () => {
  redis = await startOwnRedis();
  server = await startTestServer({
    deployment: 'servers',
    redisUrl: redis.url,
    env: {
      CATCHMENT_WORKER_TICK_SECONDS: '1',
      CATCHMENT_SYNC_HEARTBEAT_SECONDS: '1',
      CATCHMENT_SYNC_BATCH_SIZE: '20',
      // One sync at a time: a second connection's job waits in Redis, and is lost with it.
      CATCHMENT_SYNC_CONCURRENCY: '1',
      // Rate limits on (generous), so every REST call goes through the limiter.
      CATCHMENT_RATE_LIMIT_REQUESTS: '10000',
    },
  });
  call = api(server.url, server.apiKey);
});
afterAll(async () => {
  await server?.stop();
  await redis?.stop();
});

const stubConnection = async (collection: string, entityCount: number, delayMs: number) => {
  await call('POST', '/collections', { name: collection, readable_id: collection });
  const created = await call('POST', '/source-connections', {
    short_name: 'stub',
    readable_collection_id: collection,
    authentication: { credentials: { token: 't' } },
    config: { entity_count: entityCount, delay_ms: delayMs, hierarchy_depth: 0 },
  });
  expect(created.status).toBeLessThan(300);
  const [job] = (await call('GET', `/source-connections/${created.body.id}/jobs`)).body;
  return { connectionId: created.body.id as string, jobId: job.id as string };
};

/** Runs a call and checks it answered quickly and without a server error. */
const quickly = async <R extends { status: number }>(label: string, request: () => Promise<R>): Promise<R> => {
  const started = Date.now();
  const response = await request();
  const elapsed = Date.now() - started;
  expect({ label, elapsed: elapsed < 1500, serverError: response.status >= 500 }).toEqual({ label, elapsed: true, serverError: false });
  return response;
};

test('a Redis restart mid-sync: the sync completes, the API answers quickly and never 500 meanwhile, lost and new jobs start, no process restart', async () => {
  const running = await stubConnection('redis-running', 400, 10);
  await waitForJob(call, running.connectionId, running.jobId, ['RUNNING']);
  // Queued behind the running sync (concurrency 1): only Redis knows about this queue entry.
  const queued = await stubConnection('redis-queued', 5, 0);
  expect((await call('GET', `/source-connections/${queued.connectionId}/jobs`)).body[0].status).toBe('PENDING');

  await redis.kill();

  // Redis down: reads, writes, a create that starts a sync, a run and readiness answer at once.
  await quickly('list collections', () => call('GET', '/collections'));
  await quickly('job list', () => call('GET', `/source-connections/${running.connectionId}/jobs`));
  const whileDown = await quickly('create a connection (syncs at once)', () =>
    call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: 'redis-queued',
      authentication: { credentials: { token: 't' } },
      config: { entity_count: 5, delay_ms: 0, hierarchy_depth: 0 },
    }),
  );
  expect(whileDown.status).toBeLessThan(300);
  const [whileDownJob] = (await call('GET', `/source-connections/${whileDown.body.id}/jobs`)).body;
  expect(whileDownJob.status).toBe('PENDING');
  // Readiness says so, at once (503 is its answer for a backing service that does not answer).
  const readinessStarted = Date.now();
  expect((await http(server.url, 'GET', '/readyz')).status).toBe(503);
  expect(Date.now() - readinessStarted).toBeLessThan(1500);
  // The running sync keeps publishing progress into the outage for a while.
  await new Promise((resolve) => setTimeout(resolve, 1500));

  await redis.restart();

  // The running sync was not failed by the outage; the lost and the new job both start.
  const finished = await waitForJob(call, running.connectionId, running.jobId, ['COMPLETED', 'FAILED', 'CANCELLED'], 45_000);
  expect(finished).toMatchObject({ status: 'COMPLETED', entities_inserted: 400 });
  for (const { connectionId, jobId } of [queued, { connectionId: whileDown.body.id, jobId: whileDownJob.id }]) {
    expect((await waitForJob(call, connectionId, jobId, ['COMPLETED', 'FAILED', 'CANCELLED'], 30_000)).status).toBe('COMPLETED');
  }

  // Runs and creates work again on the restarted Redis (its scripts were reloaded: no NOSCRIPT).
  const rerun = await call('POST', `/source-connections/${queued.connectionId}/run`);
  expect(rerun.status).toBe(200);
  expect((await waitForJob(call, queued.connectionId, rerun.body.id, ['COMPLETED', 'FAILED', 'CANCELLED'], 30_000)).status).toBe('COMPLETED');
  const after = await stubConnection('redis-after', 5, 0);
  expect((await waitForJob(call, after.connectionId, after.jobId, ['COMPLETED', 'FAILED', 'CANCELLED'], 30_000)).status).toBe('COMPLETED');
  expect((await http(server.url, 'GET', '/readyz')).status).toBe(200);
});
