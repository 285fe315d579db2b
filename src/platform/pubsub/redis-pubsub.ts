import { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { LocalFanout, type PubSub } from './pubsub.js';

/** ioredis states in which the connection is known to be down (it reconnects by itself meanwhile). */
const DISCONNECTED = new Set(['close', 'reconnecting', 'end']);

/**
 * Redis channels carry events between processes. One subscriber connection per process; each
 * channel is subscribed while at least one local subscriber follows it.
 *
 * Events are notifications, never the record (the database is): while Redis is down a publish is
 * dropped at once and logged, so no request and no sync waits on it or fails for it. The
 * subscriber reconnects and subscribes its channels again by itself; what was published meanwhile
 * is missed, and readers that must not miss anything also poll the database (webhook deliveries,
 * job status).
 */
export class RedisPubSub implements PubSub {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly fanout: LocalFanout;
  private readonly pendingSubscriptions = new Set<Promise<unknown>>();
  /** Publishes are being dropped (logged once per outage). */
  private dropping = false;

  constructor(
    redisUrl: string,
    private readonly prefix = 'catchment:',
    private readonly logger?: Logger,
  ) {
    // A Redis that accepts the connection but does not answer must not hold a publish either.
    this.publisher = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, commandTimeout: 1000 });
    // SUBSCRIBE sent during an outage waits for the reconnection, however long (autoResubscribe
    // covers the channels subscribed before it).
    this.subscriber = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: null, autoResubscribe: true });
    // ioredis reconnects by itself; without listeners an outage would print unhandled error events.
    this.publisher.on('error', () => {});
    this.subscriber.on('error', () => {});
    this.publisher.on('ready', () => {
      if (!this.dropping) return;
      this.dropping = false;
      this.logger?.info('pub/sub: Redis answers again, events are published');
    });
    this.fanout = new LocalFanout({
      firstSubscriber: (topic) => this.track(this.subscriber.subscribe(this.prefix + topic)),
      lastUnsubscribed: (topic) => this.track(this.subscriber.unsubscribe(this.prefix + topic)),
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel.startsWith(this.prefix)) this.fanout.deliver(channel.slice(this.prefix.length), JSON.parse(message));
    });
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch(() => {}).finally(() => this.pendingSubscriptions.delete(tracked));
    this.pendingSubscriptions.add(tracked);
  }

  /** Resolves once every SUBSCRIBE sent so far is acknowledged by Redis (tests wait on it). */
  async ready(): Promise<void> {
    await Promise.all(this.pendingSubscriptions);
  }

  /** Best effort: never waits on a Redis that is down, never throws (see the class comment). */
  async publish(topic: string, payload: unknown): Promise<void> {
    try {
      if (DISCONNECTED.has(this.publisher.status)) throw new Error('Redis is unreachable (reconnecting)');
      await this.publisher.publish(this.prefix + topic, JSON.stringify(payload));
    } catch (error) {
      if (this.dropping) return;
      this.dropping = true;
      this.logger?.warn({ err: error, topic }, 'pub/sub: Redis is unreachable, events are dropped until it answers');
    }
  }

  subscribe<T>(topic: string, signal?: AbortSignal): AsyncIterableIterator<T> {
    return this.fanout.subscribe<T>(topic, signal);
  }

  endSubscriptions(): void {
    this.fanout.endAll();
  }

  /** Readiness: fails at once while Redis is down instead of waiting for the reconnection. */
  async ping(): Promise<void> {
    if (DISCONNECTED.has(this.publisher.status)) throw new Error('Redis is unreachable (reconnecting)');
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.fanout.endAll();
    // QUIT would wait for a Redis that is down (the subscriber's commands wait for ever): just drop the connection then.
    const end = async (client: Redis) => (DISCONNECTED.has(client.status) ? client.disconnect() : void (await client.quit()));
    await Promise.allSettled([end(this.publisher), end(this.subscriber)]);
  }
}
