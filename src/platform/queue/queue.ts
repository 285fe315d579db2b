/**
 * Background jobs for the worker role (sync runs, webhook deliveries, cleanups). A job carries a
 * small JSON payload, usually the id of a database record that holds the real state, so a job that
 * is delivered twice finds that state and acts idempotently.
 */
export interface JobOptions {
  /** Deduplicates: a job whose id is already queued or running is not added again. */
  id?: string;
  delayMs?: number;
  /** Extra attempts after a failure, with exponential backoff from `backoffMs`. */
  retries?: number;
  backoffMs?: number;
}

export type JobHandler<T> = (payload: T) => Promise<void>;

export interface JobQueue {
  add<T>(kind: string, payload: T, options?: JobOptions): Promise<void>;
  /** Worker role: runs up to `concurrency` jobs of `kind` at a time. */
  process<T>(kind: string, concurrency: number, handler: JobHandler<T>): void;
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}

interface Pending {
  kind: string;
  payload: unknown;
  options: JobOptions;
  attempt: number;
}

/** The embedded deployment's queue: jobs live in this process (the API and worker run together). */
export class InProcessQueue implements JobQueue {
  private readonly workers = new Map<string, { concurrency: number; handler: JobHandler<unknown>; running: number; waiting: Pending[] }>();
  private readonly backlog = new Map<string, Pending[]>();
  private readonly knownIds = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  async add<T>(kind: string, payload: T, options: JobOptions = {}): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    if (options.id) {
      const key = `${kind}:${options.id}`;
      if (this.knownIds.has(key)) return;
      this.knownIds.add(key);
    }
    this.schedule({ kind, payload: structuredClone(payload), options, attempt: 0 }, options.delayMs ?? 0);
  }

  process<T>(kind: string, concurrency: number, handler: JobHandler<T>): void {
    const worker = { concurrency, handler: handler as JobHandler<unknown>, running: 0, waiting: this.backlog.get(kind) ?? [] };
    this.backlog.delete(kind);
    this.workers.set(kind, worker);
    this.drain(kind);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private schedule(job: Pending, delayMs: number): void {
    if (delayMs <= 0) {
      this.enqueue(job);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue(job);
    }, delayMs);
    this.timers.add(timer);
  }

  private enqueue(job: Pending): void {
    const worker = this.workers.get(job.kind);
    if (!worker) {
      const list = this.backlog.get(job.kind) ?? [];
      list.push(job);
      this.backlog.set(job.kind, list);
      return;
    }
    worker.waiting.push(job);
    this.drain(job.kind);
  }

  private drain(kind: string): void {
    const worker = this.workers.get(kind)!;
    while (!this.closed && worker.running < worker.concurrency && worker.waiting.length > 0) {
      const job = worker.waiting.shift()!;
      worker.running++;
      const run = worker
        .handler(job.payload)
        .then(
          () => this.forget(job),
          () => {
            if (job.attempt < (job.options.retries ?? 0) && !this.closed) {
              this.schedule({ ...job, attempt: job.attempt + 1 }, (job.options.backoffMs ?? 1000) * 2 ** job.attempt);
            } else {
              this.forget(job);
            }
          },
        )
        .finally(() => {
          worker.running--;
          this.inFlight.delete(run);
          this.drain(kind);
        });
      this.inFlight.add(run);
    }
  }

  private forget(job: Pending): void {
    if (job.options.id) this.knownIds.delete(`${job.kind}:${job.options.id}`);
  }
}
