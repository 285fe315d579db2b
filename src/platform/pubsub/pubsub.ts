/**
 * Topic-based publish/subscribe for events that subscribers (GraphQL subscriptions) follow live.
 * In-process when Redis is not configured; Redis channels when it is, so every API process sees
 * what any process publishes.
 */
export interface PubSub {
  /** Best effort, never throws: events are notifications and the database holds the state they announce. */
  publish(topic: string, payload: unknown): Promise<void>;
  /** Events published on `topic` from now on, until the iterator is returned or `signal` aborts. */
  subscribe<T>(topic: string, signal?: AbortSignal): AsyncIterableIterator<T>;
  /** Ends every local subscription (open streams complete) while publishing keeps working: the start of a shutdown. */
  endSubscriptions(): void;
  /** Resolves when the transport answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Delivers payloads to the local subscribers of each topic. Both adapters use it: the in-process
 * one delivers what it publishes, the Redis one what arrives from Redis.
 */
export class LocalFanout {
  private readonly subscribers = new Map<string, Set<(payload: unknown) => void>>();
  private readonly finishers = new Set<() => void>();

  constructor(private readonly hooks: { firstSubscriber?(topic: string): void; lastUnsubscribed?(topic: string): void } = {}) {}

  deliver(topic: string, payload: unknown): void {
    for (const push of this.subscribers.get(topic) ?? []) push(payload);
  }

  /** Ends every subscription (on shutdown, so open streams complete instead of hanging). */
  endAll(): void {
    for (const finish of [...this.finishers]) finish();
  }

  subscribe<T>(topic: string, signal?: AbortSignal): AsyncIterableIterator<T> {
    const buffered: T[] = [];
    let waiting: ((result: IteratorResult<T>) => void) | null = null;
    let done = false;

    const push = (payload: unknown) => {
      if (waiting) {
        const resolve = waiting;
        waiting = null;
        resolve({ value: payload as T, done: false });
      } else {
        buffered.push(payload as T);
      }
    };
    const finish = () => {
      if (done) return;
      done = true;
      this.finishers.delete(finish);
      const listeners = this.subscribers.get(topic);
      listeners?.delete(push);
      if (listeners && listeners.size === 0) {
        this.subscribers.delete(topic);
        this.hooks.lastUnsubscribed?.(topic);
      }
      signal?.removeEventListener('abort', finish);
      waiting?.({ value: undefined, done: true });
      waiting = null;
    };

    let listeners = this.subscribers.get(topic);
    if (!listeners) {
      listeners = new Set();
      this.subscribers.set(topic, listeners);
      this.hooks.firstSubscriber?.(topic);
    }
    listeners.add(push);
    this.finishers.add(finish);
    if (signal?.aborted) finish();
    else signal?.addEventListener('abort', finish, { once: true });

    const iterator: AsyncIterableIterator<T> = {
      next: () => {
        if (buffered.length > 0) return Promise.resolve({ value: buffered.shift()!, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          waiting = resolve;
        });
      },
      return: () => {
        finish();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}

export class InProcessPubSub implements PubSub {
  private readonly fanout = new LocalFanout();

  async publish(topic: string, payload: unknown): Promise<void> {
    // Deliver a copy, as Redis would: subscribers must not share objects with the publisher.
    this.fanout.deliver(topic, structuredClone(payload));
  }

  subscribe<T>(topic: string, signal?: AbortSignal): AsyncIterableIterator<T> {
    return this.fanout.subscribe<T>(topic, signal);
  }

  endSubscriptions(): void {
    this.fanout.endAll();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.fanout.endAll();
  }
}
