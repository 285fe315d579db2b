import { afterAll, describe, expect, test } from '@jest/globals';
import { InProcessPubSub, type PubSub } from './pubsub.js';
import { RedisPubSub } from './redis-pubsub.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const opened: PubSub[] = [];
afterAll(async () => {
  await Promise.all(opened.map((pubsub) => pubsub.close()));
});

/** The same contract for both adapters; `pair` gives a publisher and a subscriber side (two processes for Redis). */
const adapters: [string, () => Promise<{ publisher: PubSub; subscriber: PubSub; settle(): Promise<void> }>][] = [
  [
    'in-process',
    async () => {
      const pubsub = new InProcessPubSub();
      opened.push(pubsub);
      return { publisher: pubsub, subscriber: pubsub, settle: async () => {} };
    },
  ],
  [
    'Redis (two connections, as two processes would have)',
    async () => {
      const publisher = new RedisPubSub(REDIS_URL, `catchment-test-${Date.now()}-${Math.random()}:`);
      const subscriber = new RedisPubSub(REDIS_URL, (publisher as unknown as { prefix: string }).prefix);
      opened.push(publisher, subscriber);
      return { publisher, subscriber, settle: () => subscriber.ready() };
    },
  ],
];

describe.each(adapters)('%s pub/sub', (_name, open) => {
  test('delivers events in order to every subscriber of the topic, and nothing from other topics', async () => {
    const { publisher, subscriber, settle } = await open();
    const first = subscriber.subscribe<{ n: number }>('org:a');
    const second = subscriber.subscribe<{ n: number }>('org:a');
    const other = subscriber.subscribe<{ n: number }>('org:b');
    await settle();
    for (const n of [1, 2, 3]) await publisher.publish('org:a', { n });
    await publisher.publish('org:b', { n: 99 });
    for (const iterator of [first, second]) {
      const received = [];
      for (let i = 0; i < 3; i++) received.push((await iterator.next()).value);
      expect(received).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    }
    expect((await other.next()).value).toEqual({ n: 99 });
    await Promise.all([first.return!(), second.return!(), other.return!()]);
  });

  test('an aborted subscription ends, and close() ends the ones still open', async () => {
    const { publisher, subscriber, settle } = await open();
    const controller = new AbortController();
    const aborted = subscriber.subscribe('org:c', controller.signal);
    const open_ = subscriber.subscribe('org:c');
    await settle();
    const pending = aborted.next();
    controller.abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    await publisher.publish('org:c', { after: 'abort' });
    expect((await open_.next()).value).toEqual({ after: 'abort' });
    const waiting = open_.next();
    await subscriber.close();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  test('subscribers receive a copy, never the publisher\'s object', async () => {
    const { publisher, subscriber, settle } = await open();
    const iterator = subscriber.subscribe<{ list: number[] }>('org:d');
    await settle();
    const payload = { list: [1] };
    await publisher.publish('org:d', payload);
    payload.list.push(2);
    expect((await iterator.next()).value).toEqual({ list: [1] });
    await iterator.return!();
  });
});
