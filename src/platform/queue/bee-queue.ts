import { createRequire } from 'node:module';
import BeeQueue from 'bee-queue';
import type { Logger } from '../logger.js';
import type { JobHandler, JobOptions, JobQueue } from './queue.js';

/** bee-queue's Lua scripts (by name) and their SHA1s, which EVALSHA names them by. */
const beeQueueLua = createRequire(import.meta.url)('bee-queue/lib/lua') as { scripts: Record<string, string>; shas: Record<string, string> };

type RedisCallback = (error: Error | null, result: unknown) => void;
/** What bee-queue runs its scripts on: its node_redis client (or a batch of it). */
interface ScriptRunner {
  evalsha(...args: unknown[]): unknown;
  eval(...args: unknown[]): unknown;
}

/**
 * bee-queue loads its Lua scripts into Redis once, when it connects, and then runs them by SHA. A
 * Redis that restarts has forgotten them: every EVALSHA would answer NOSCRIPT until the process
 * restarted. On NOSCRIPT this queue sends the script's text instead (nothing ran, so it is safe to
 * send again); EVAL caches the script in Redis anew, so the next EVALSHA works again.
 */
class ScriptReloadingBeeQueue extends BeeQueue {
  declare client: ScriptRunner | null;

  /** Overrides bee-queue's (private) `_evalScriptOn(commandable, [scriptName, numKeys, ...keysAndArgs])`. */
  _evalScriptOn(commandable: ScriptRunner, args: unknown[]): Promise<unknown> {
    const [name, ...rest] = args as [string, ...unknown[]];
    return new Promise((resolve, reject) => {
      const settle: RedisCallback = (error, result) => (error ? reject(error) : resolve(result));
      commandable.evalsha(beeQueueLua.shas[name], ...rest, ((error, result) => {
        if (!error?.message.startsWith('NOSCRIPT')) return settle(error, result);
        (this.client ?? commandable).eval(beeQueueLua.scripts[name], ...rest, settle);
      }) satisfies RedisCallback);
    });
  }
}

/** A job on its way to Redis (parked in this process while Redis does not answer). */
interface OutgoingJob {
  kind: string;
  payload: unknown;
  options: JobOptions;
}

export interface BeeJobQueueOptions {
  prefix?: string;
  stallIntervalMs?: number;
  /** How long `add` waits for a Redis that is connected but does not answer before parking the job. */
  addTimeoutMs?: number;
  /** How often parked jobs are tried again while Redis is unreachable. */
  retryParkedMs?: number;
  /** Redis errors, and jobs waiting in memory for Redis. */
  logger?: Logger;
}

const parkedKey = (job: OutgoingJob): string | null => (job.options.id ? `${job.kind}:${job.options.id}` : null);

/**
 * The servers deployment's queue: bee-queue on Redis, one bee-queue per job kind. Jobs of a worker
 * that dies are re-delivered after the stall interval, so handlers must be idempotent.
 *
 * Redis outages: the clients reconnect for as long as it takes (backoff up to 2 s), scripts are
 * reloaded on NOSCRIPT, and `add` never waits on a Redis that is down: the job waits in this
 * process's memory and is sent once Redis answers. Those parked jobs die with the process, and a
 * Redis restart without persistence forgets queued jobs, so jobs whose state lives in the database
 * (sync jobs, cleanups) are also re-queued from it by the worker (SyncWorker's reconcilers).
 */
export class BeeJobQueue implements JobQueue {
  private readonly queues = new Map<string, ScriptReloadingBeeQueue>();
  private readonly parked: OutgoingJob[] = [];
  /** `kind:id` of the parked jobs that have an id. */
  private readonly parkedIds = new Set<string>();
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly redisUrl: string,
    private readonly options: BeeJobQueueOptions = {},
  ) {}

  private queue(kind: string, isWorker: boolean): ScriptReloadingBeeQueue {
    let queue = this.queues.get(kind);
    if (!queue) {
      queue = new ScriptReloadingBeeQueue(kind, {
        prefix: this.options.prefix ?? 'catchment',
        redis: {
          url: this.redisUrl,
          // node_redis gives up after `connect_timeout` ms of reconnecting (1 h by default) and then
          // never tries again: reconnect every 2 s at most, for as long as a timer can wait (24 days).
          retry_strategy: ({ attempt }: { attempt: number }) => Math.min(attempt * 100, 2000),
          connect_timeout: 2 ** 31 - 1,
        } as never,
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
      queue.on('error', (error) => this.options.logger?.warn({ err: error, kind }, 'job queue: Redis error'));
      this.queues.set(kind, queue);
    }
    return queue;
  }

  async add<T>(kind: string, payload: T, options: JobOptions = {}): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    // Jobs keep their order: while some are parked, a new one waits behind them.
    if (this.parked.length > 0) return this.park({ kind, payload, options });
    try {
      await this.save({ kind, payload, options });
    } catch (error) {
      this.park({ kind, payload, options }, error as Error);
    }
  }

  /**
   * Hands a job to Redis: fails at once when the client knows Redis is down, and after
   * `addTimeoutMs` when the queue cannot connect or Redis does not answer.
   */
  private async save({ kind, payload, options }: OutgoingJob): Promise<void> {
    const queue = this.queue(kind, false);
    // A queue opened while Redis is down connects once it is up; nothing is sent before.
    await this.withinAddTimeout(queue.ready());
    if (!(queue.client as { ready?: boolean } | null)?.ready) throw new Error('Redis is unreachable (reconnecting)');
    const job = queue.createJob(payload);
    if (options.id) job.setId(options.id);
    if (options.delayMs) job.delayUntil(Date.now() + options.delayMs);
    if (options.retries) job.retries(options.retries).backoff('exponential', options.backoffMs ?? 1000);
    // A save that times out may still reach Redis later: at worst the job runs twice, which
    // handlers already allow for (and a job with an id is never queued twice).
    await this.withinAddTimeout(job.save());
  }

  private async withinAddTimeout<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Redis did not answer in time')), this.options.addTimeoutMs ?? 1000);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  private park(job: OutgoingJob, reason?: Error): void {
    // A job with an id is parked once (JobOptions.id): the reconcilers queue what is still owed on
    // every tick, and would otherwise park a copy each time for as long as Redis stays away.
    const key = parkedKey(job);
    if (key !== null) {
      if (this.parkedIds.has(key)) return;
      this.parkedIds.add(key);
    }
    this.parked.push(job);
    if (this.parked.length === 1) this.options.logger?.warn({ err: reason, kind: job.kind }, 'job queue: Redis is unreachable, jobs wait in memory until it answers');
    this.retryTimer ??= setTimeout(() => void this.sendParked(), this.options.retryParkedMs ?? 1000);
  }

  private async sendParked(): Promise<void> {
    while (this.parked.length > 0 && !this.closed) {
      try {
        await this.save(this.parked[0]!);
      } catch {
        // A queue closed meanwhile keeps no timer alive past its stop().
        this.retryTimer = this.closed ? null : setTimeout(() => void this.sendParked(), this.options.retryParkedMs ?? 1000);
        return;
      }
      const sent = this.parked.shift()!;
      const key = parkedKey(sent);
      if (key !== null) this.parkedIds.delete(key);
    }
    this.retryTimer = null;
    if (!this.closed) this.options.logger?.info('job queue: Redis answers again, the waiting jobs are queued');
  }

  process<T>(kind: string, concurrency: number, handler: JobHandler<T>): void {
    const existing = this.queues.get(kind);
    if (existing && !(existing.settings as { isWorker: boolean }).isWorker) {
      // A producer-only queue was opened first: replace it with a worker one.
      this.queues.delete(kind);
      void existing.close();
    }
    this.queue(kind, true).process(concurrency, (job) => handler(job.data as T));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.parked.length > 0) {
      this.options.logger?.warn({ dropped: this.parked.length }, 'job queue: closing with jobs that never reached Redis (sync jobs and cleanups are queued again from the database)');
    }
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close(10_000)));
    this.queues.clear();
  }
}
