import { Redis } from 'ioredis';
import { LocalFanout, type PubSub } from './pubsub.js';

/**
 * Redis channels carry events between processes. One subscriber connection per process; each
 * channel is subscribed while at least one local subscriber follows it.
 */
export class RedisPubSub implements PubSub {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly fanout: LocalFanout;
  private readonly pendingSubscriptions = new Set<Promise<unknown>>();

  constructor(redisUrl: string, private readonly prefix = 'catchment:') {
    this.publisher = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.subscriber = new Redis(redisUrl, { lazyConnect: false });
    // ioredis reconnects by itself; without listeners an outage would print unhandled error events.
    this.publisher.on('error', () => {});
    this.subscriber.on('error', () => {});
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

  async publish(topic: string, payload: unknown): Promise<void> {
    await this.publisher.publish(this.prefix + topic, JSON.stringify(payload));
  }

  subscribe<T>(topic: string, signal?: AbortSignal): AsyncIterableIterator<T> {
    return this.fanout.subscribe<T>(topic, signal);
  }

  endSubscriptions(): void {
    this.fanout.endAll();
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.fanout.endAll();
    await Promise.allSettled([this.publisher.quit(), this.subscriber.quit()]);
  }
}
