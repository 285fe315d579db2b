import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startOwnRedis, type OwnRedis } from '../../../test/support/redis-server.js';
import { RedisPubSub } from './redis-pubsub.js';

/** Two processes' pub/sub on a Redis of the test's own, killed (SIGKILL) and started again. */
let redis: OwnRedis;
let publisher: RedisPubSub;
let subscriber: RedisPubSub;
beforeAll(async () => {
  redis = await startOwnRedis();
  publisher = new RedisPubSub(redis.url, 'outage:');
  subscriber = new RedisPubSub(redis.url, 'outage:');
});
afterAll(async () => {
  await Promise.all([publisher.close(), subscriber.close()]);
  await redis.stop();
});

test('while Redis is down publish returns at once without throwing and readiness fails fast; afterwards subscriptions work again', async () => {
  const events = subscriber.subscribe<{ n: number }>('topic');
  await subscriber.ready();
  await publisher.publish('topic', { n: 1 });
  expect((await events.next()).value).toEqual({ n: 1 });

  await redis.kill();
  const started = Date.now();
  await publisher.publish('topic', { n: 2 });
  await expect(publisher.ping()).rejects.toThrow(/unreachable/);
  expect(Date.now() - started).toBeLessThan(200);

  await redis.restart();
  // The subscriber subscribes again by itself: an event published after the reconnection arrives.
  const deadline = Date.now() + 15_000;
  let received: { n: number } | undefined;
  while (!received && Date.now() < deadline) {
    await publisher.publish('topic', { n: 3 });
    received = await Promise.race([events.next().then((result) => result.value), new Promise<undefined>((resolve) => setTimeout(resolve, 200))]);
  }
  expect(received).toEqual({ n: 3 });
  await expect(publisher.ping()).resolves.toBeUndefined();
  await events.return!();
});
