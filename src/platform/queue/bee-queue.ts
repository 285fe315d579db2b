import BeeQueue from 'bee-queue';
import type { JobHandler, JobOptions, JobQueue } from './queue.js';

/**
 * The servers deployment's queue: bee-queue on Redis, one bee-queue per job kind. Jobs of a worker
 * that dies are re-delivered after the stall interval, so handlers must be idempotent.
 */
export class BeeJobQueue implements JobQueue {
  private readonly queues = new Map<string, BeeQueue>();

  constructor(
    private readonly redisUrl: string,
    private readonly options: { prefix?: string; stallIntervalMs?: number; onError?: (error: Error) => void } = {},
  ) {}

  private queue(kind: string, isWorker: boolean): BeeQueue {
    let queue = this.queues.get(kind);
    if (!queue) {
      queue = new BeeQueue(kind, {
        prefix: this.options.prefix ?? 'catchment',
        redis: { url: this.redisUrl } as never,
        isWorker,
        activateDelayedJobs: true,
        // State lives in the database; Redis only carries the work.
        getEvents: false,
        sendEvents: false,
        storeJobs: false,
        removeOnSuccess: true,
        removeOnFailure: true,
        stallInterval: this.options.stallIntervalMs ?? 5000,
      });
      // Without a listener a Redis outage would be an unhandled 'error' and end the process; the
      // client reconnects by itself, so log and carry on.
      queue.on('error', (error) => this.options.onError?.(error));
      this.queues.set(kind, queue);
    }
    return queue;
  }

  async add<T>(kind: string, payload: T, options: JobOptions = {}): Promise<void> {
    const job = this.queue(kind, false).createJob(payload);
    if (options.id) job.setId(options.id);
    if (options.delayMs) job.delayUntil(Date.now() + options.delayMs);
    if (options.retries) job.retries(options.retries).backoff('exponential', options.backoffMs ?? 1000);
    await job.save();
  }

  process<T>(kind: string, concurrency: number, handler: JobHandler<T>): void {
    const existing = this.queues.get(kind);
    if (existing && !(existing as unknown as { settings: { isWorker: boolean } }).settings.isWorker) {
      // A producer-only queue was opened first: replace it with a worker one.
      this.queues.delete(kind);
      void existing.close();
    }
    this.queue(kind, true).process(concurrency, (job) => handler(job.data as T));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close(10_000)));
    this.queues.clear();
  }
}
