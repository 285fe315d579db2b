/**
 * A push-to-pull queue: the producer pushes events as they happen, the consumer iterates (a server-
 * sent-event stream or a GraphQL subscription). `return()` (the consumer leaving) runs `onClose` at
 * once, even while the consumer waits.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  private readonly buffer: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private ended = false;

  constructor(private readonly onClose: () => void) {}

  push(value: T): void {
    if (this.ended) return;
    if (this.waiting) {
      this.waiting({ value, done: false });
      this.waiting = null;
    } else this.buffer.push(value);
  }

  end(): void {
    this.ended = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffer.length) return Promise.resolve({ value: this.buffer.shift()!, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.buffer.length = 0;
    this.end();
    this.onClose();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}
