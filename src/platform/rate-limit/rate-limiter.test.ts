import { afterAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { startOwnRedis } from '../../../test/support/redis-server.js';
import type { Logger } from '../logger.js';
import { createRateLimiter, RateLimitCounters } from './rate-limiter.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const opened: RateLimitCounters[] = [];
afterAll(async () => {
  await Promise.all(opened.map((counters) => counters.close()));
});
/** Counters closed after all tests. */
function counters(options: { redisUrl?: string; keyPrefix?: string } = {}): RateLimitCounters {
  const opening = RateLimitCounters.open(options);
  opened.push(opening);
  return opening;
}

describe.each([
  ['in memory', undefined],
  ['in Redis', REDIS_URL],
])('rate limiter %s', (_name, redisUrl) => {
  test('allows the configured number of requests per key and window, then refuses with the time to wait', async () => {
    const limiter = createRateLimiter({ points: 3, windowSeconds: 30, counters: counters({ redisUrl }) })!;
    const key = `collections:${Math.random()}`;
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(key));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[3]!.limit).toBe(3);
    expect(decisions[3]!.resetSeconds).toBeGreaterThan(0);
    expect(decisions[3]!.resetSeconds).toBeLessThanOrEqual(30);
    // Another key (another organization) has its own budget.
    expect((await limiter.consume(`${key}:other`)).allowed).toBe(true);
  });

  test('a window of one second resets', async () => {
    const limiter = createRateLimiter({ points: 1, windowSeconds: 1, counters: counters({ redisUrl }) })!;
    const key = `sources:${Math.random()}`;
    expect((await limiter.consume(key)).allowed).toBe(true);
    expect((await limiter.consume(key)).allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await limiter.consume(key)).allowed).toBe(true);
  });
});

test('zero requests per window disables rate limiting', () => {
  expect(createRateLimiter({ points: 0, windowSeconds: 60, counters: counters() })).toBeNull();
});

test('while Redis is down the limiter answers at once from memory, still limiting, and logs it; afterwards it counts in Redis again', async () => {
  const redis = await startOwnRedis();
  const warnings: string[] = [];
  const logger = { warn: (message: string) => warnings.push(message) } as unknown as Logger;
  const outageCounters = RateLimitCounters.open({ redisUrl: redis.url, keyPrefix: 'outage' });
  const limiter = createRateLimiter({ points: 2, windowSeconds: 30, counters: outageCounters, logger })!;
  const store = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  store.on('error', () => {});
  /** Consumes on `key` until Redis holds its counter: the limiter's client is connected. */
  const countedInRedis = async (key: string) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      await limiter.consume(key);
      if ((await store.get(`outage:${key}`).catch(() => null)) !== null) return;
      if (Date.now() > deadline) throw new Error('the limiter never counted in Redis');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    await countedInRedis('before');
    expect(warnings).toEqual([]);

    await redis.kill();
    const started = Date.now();
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await limiter.consume('down'));
    expect(Date.now() - started).toBeLessThan(200);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    expect(warnings).toHaveLength(1);

    await redis.restart();
    await countedInRedis('after');
  } finally {
    store.disconnect();
    await outageCounters.close();
    await redis.stop();
  }
});

describe('a limiter waiting for Redis at start (connected)', () => {
  test('once connected, its first request counts in the shared counter, which another process then sees', async () => {
    const prefix = `catchment-test:${Math.random()}`;
    const [firstProcess, secondProcess] = [counters({ redisUrl: REDIS_URL, keyPrefix: prefix }), counters({ redisUrl: REDIS_URL, keyPrefix: prefix })];
    const first = createRateLimiter({ points: 5, windowSeconds: 30, counters: firstProcess })!;
    const second = createRateLimiter({ points: 5, windowSeconds: 30, counters: secondProcess })!;
    await Promise.all([firstProcess.connected(5000), secondProcess.connected(5000)]);
    // Not connected, the first request of a just-made limiter is counted by its in-memory stand-in.
    expect((await first.consume('search:org')).remaining).toBe(4);
    expect((await second.consume('search:org')).remaining).toBe(3);
  });

  test('a Redis that does not answer is waited for at most the time given', async () => {
    const unanswered = counters({ redisUrl: 'redis://127.0.0.1:1' });
    const limiter = createRateLimiter({ points: 5, windowSeconds: 30, counters: unanswered })!;
    const started = Date.now();
    await unanswered.connected(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await limiter.consume('search:org')).allowed).toBe(true);
  });
});

test('the limiters of one process count over one Redis connection, each family under its own keys', async () => {
  const prefix = `catchment-test:${Math.random()}`;
  const shared = counters({ redisUrl: REDIS_URL, keyPrefix: prefix });
  const general = createRateLimiter({ points: 5, windowSeconds: 30, counters: shared })!;
  const search = createRateLimiter({ points: 2, windowSeconds: 30, counters: shared })!;
  await shared.connected(5000);
  expect((await general.consume('collections:org')).remaining).toBe(4);
  expect((await search.consume('search:org')).remaining).toBe(1);
  const admin = new Redis(REDIS_URL);
  try {
    const clients = String(await admin.client('LIST')).split('\n').filter((line) => line.includes(` name=${prefix} `));
    expect(clients).toHaveLength(1);
    expect(await admin.get(`${prefix}:collections:org`)).toBe('1');
    expect(await admin.get(`${prefix}:search:org`)).toBe('1');
  } finally {
    admin.disconnect();
  }
});
