import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startOwnRedis, type OwnRedis } from '../../../test/support/redis-server.js';
import { waitFor } from '../../../test/support/wait.js';
import { BeeJobQueue } from './bee-queue.js';

/** The queue on a Redis of the test's own, killed (SIGKILL, no persistence) and started again. */
/** Reconnections after the restart take a few seconds. */
const RECOVERY_MS = 15_000;
let redis: OwnRedis;
const opened: BeeJobQueue[] = [];
beforeAll(async () => {
  redis = await startOwnRedis();
});
afterAll(async () => {
  await Promise.all(opened.map((queue) => queue.close()));
  await redis.stop();
});

test('producer and worker survive a Redis restart: scripts come back, a job added while Redis is down waits (once per id) and then runs', async () => {
  const prefix = `outage-${Date.now()}`;
  const producer = new BeeJobQueue(redis.url, { prefix, retryParkedMs: 100 });
  const worker = new BeeJobQueue(redis.url, { prefix, stallIntervalMs: 1000 });
  opened.push(producer, worker);
  const seen: string[] = [];
  worker.process<{ label: string }>('work', 1, async ({ label }) => {
    seen.push(label);
  });
  await producer.add('work', { label: 'before' }, { id: 'before' });
  await waitFor(() => seen.includes('before'), RECOVERY_MS);

  await redis.kill();
  const started = Date.now();
  // A job with an id queued again while down (as the worker's reconcilers do every tick) waits once.
  for (let tick = 0; tick < 3; tick++) await producer.add('work', { label: 'while down' }, { id: 'while-down' });
  await producer.add('work', { label: 'while down, no id' });
  // Never waits on a Redis that is down.
  expect(Date.now() - started).toBeLessThan(500);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(seen).toEqual(['before']);

  await redis.restart();
  // Parked jobs go out once Redis answers; the scripts Redis forgot are loaded again (no NOSCRIPT).
  await waitFor(() => seen.length === 3, RECOVERY_MS);
  await new Promise((resolve) => setTimeout(resolve, 500)); // room for a copy, were one parked
  expect(seen.slice(1).sort()).toEqual(['while down', 'while down, no id']);
  await producer.add('work', { label: 'after' }, { id: 'after' });
  await producer.add('work', { label: 'delayed after' }, { delayMs: 200 });
  await waitFor(() => seen.length === 5, RECOVERY_MS);
  expect(seen.slice(3)).toEqual(['after', 'delayed after']);
});

test('a queue opened while Redis is down connects once it is up', async () => {
  await redis.kill();
  const prefix = `late-${Date.now()}`;
  const producer = new BeeJobQueue(redis.url, { prefix, retryParkedMs: 100 });
  const worker = new BeeJobQueue(redis.url, { prefix });
  opened.push(producer, worker);
  const seen: number[] = [];
  worker.process<{ n: number }>('late', 1, async ({ n }) => {
    seen.push(n);
  });
  const started = Date.now();
  await producer.add('late', { n: 1 });
  expect(Date.now() - started).toBeLessThan(1500);
  await redis.restart();
  await waitFor(() => seen.length > 0, RECOVERY_MS);
  // Nothing was sent before the queue connected: the job runs once.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(seen).toEqual([1]);
});

test('closing while Redis is down does not wait for it', async () => {
  const prefix = `close-${Date.now()}`;
  const producer = new BeeJobQueue(redis.url, { prefix });
  const worker = new BeeJobQueue(redis.url, { prefix });
  worker.process('idle', 1, async () => {});
  await producer.add('idle', {});
  await redis.kill();
  await producer.add('idle', {});
  const started = Date.now();
  await Promise.all([producer.close(), worker.close()]);
  expect(Date.now() - started).toBeLessThan(3000);
  await redis.restart();
});

test('while Redis is down, a job queued again under its id waits once (what closing reports dropped says so)', async () => {
  const dropped: number[] = [];
  const logger = { warn: (fields: { dropped?: number }) => fields.dropped !== undefined && dropped.push(fields.dropped), info: () => undefined, error: () => undefined };
  const producer = new BeeJobQueue(redis.url, { prefix: `parked-${Date.now()}`, retryParkedMs: 60_000, logger: logger as never });
  await producer.add('owed', { connected: true });
  await redis.kill();
  // The worker's reconcilers queue every job and cleanup still owed on each tick, by id.
  for (let tick = 0; tick < 5; tick++) await producer.add('owed', { tick }, { id: 'owed-1' });
  await producer.add('owed', { other: true }, { id: 'owed-2' });
  await producer.add('owed', { anonymous: true });
  await producer.close();
  expect(dropped).toEqual([3]);
  await redis.restart();
});
