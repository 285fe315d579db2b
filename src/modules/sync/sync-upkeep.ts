import type { Orm } from '../../platform/db/database.js';
import type { Logger } from '../../platform/logger.js';
import type { JobQueue } from '../../platform/queue/queue.js';
import { ConflictError } from '../../shared/errors.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Cleanups } from './cleanup.js';
import { nextScheduledRun } from './schedule.js';
import { SyncJob } from './sync-job.entity.js';
import { SYNC_QUEUE, type SyncService } from './sync.service.js';

export interface SyncUpkeepOptions {
  /** How often the janitor and the scheduler look. */
  tickSeconds: number;
  /** RUNNING jobs whose heartbeat is older than this are failed: their worker died. */
  staleRunningSeconds: number;
  /** CANCELLING jobs whose worker has not answered for this long are forced to CANCELLED (spec: 3 minutes). */
  cancelTimeoutSeconds: number;
  /** Least time between two scheduled runs of a connection, whatever its cron expression says. */
  scheduleMinIntervalSeconds: number;
}

/**
 * The sync worker's upkeep, on every tick: the jobs and cleanups the queue lost are queued again, the
 * jobs of dead workers and unanswered cancels are ended, and the due runs are started.
 */
export class SyncUpkeep {
  private ticking: Promise<unknown> | null = null;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly deps: {
      orm: Orm;
      queue: JobQueue;
      sync: SyncService;
      cleanups: Pick<Cleanups, 'queuePending'>;
      logger: Logger;
      starters?: { startDue(now: Date): Promise<void> }[];
    },
    private readonly options: SyncUpkeepOptions,
    /** The jobs this process is running: the janitor leaves them alone. */
    private readonly running: ReadonlyMap<string, unknown>,
  ) {}

  /** Looks now, then every `tickSeconds`. */
  startTicking(): void {
    const tick = () => {
      if (this.ticking) return; // the previous look is still going
      const lastTick = new Date(Date.now() - this.options.tickSeconds * 1000);
      this.ticking = Promise.all([
        this.janitor().catch((error) => this.deps.logger.error({ err: error }, 'sync janitor failed')),
        this.queueWaiting(lastTick).catch((error) => this.deps.logger.error({ err: error }, 'sync reconciler failed')),
        this.deps.cleanups.queuePending(lastTick).catch((error) => this.deps.logger.error({ err: error }, 'cleanup reconciler failed')),
        this.schedule().catch((error) => this.deps.logger.error({ err: error }, 'sync scheduler failed')),
      ]).finally(() => {
        this.ticking = null;
      });
    };
    this.timers.push(setInterval(tick, this.options.tickSeconds * 1000));
    tick();
  }

  /** Stops looking; returns the look still going, if any. */
  stop(): Promise<unknown> | null {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    return this.ticking;
  }

  /**
   * The reconciler: the database, not the queue, says which jobs wait. Queues every job waiting to
   * start (PENDING, or CANCELLING before any worker took it), created before `createdBefore` when
   * given. A queue entry can be missing: an enqueue that failed, a Redis restarted without
   * persistence, an in-process queue gone with its process. Queuing is by job id, so a job still
   * queued or running is not queued twice, and a job delivered twice starts once (SyncWorker.runJob).
   */
  async queueWaiting(createdBefore?: Date): Promise<void> {
    const waiting = await this.deps.orm.em.fork().find(
      SyncJob,
      { $or: [{ status: 'PENDING' }, { status: 'CANCELLING', startedAt: null }], ...(createdBefore ? { createdAt: { $lt: createdBefore } } : {}) },
      { fields: ['id'], orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    for (const job of waiting) await this.deps.queue.add(SYNC_QUEUE, { jobId: job.id }, { id: job.id });
  }

  /** Forces CANCELLED after the cancel timeout and fails RUNNING jobs whose worker stopped beating. */
  async janitor(now = new Date()): Promise<void> {
    const em = this.deps.orm.em.fork();
    const cancelBefore = new Date(now.getTime() - this.options.cancelTimeoutSeconds * 1000);
    const staleBefore = new Date(now.getTime() - this.options.staleRunningSeconds * 1000);
    const stuckCancelling = await em.find(SyncJob, { status: 'CANCELLING', cancelRequestedAt: { $lt: cancelBefore }, $or: [{ heartbeatAt: null }, { heartbeatAt: { $lt: cancelBefore } }] });
    for (const job of stuckCancelling) {
      if (this.running.has(job.id)) continue;
      await this.deps.sync.transition(job.id, ['CANCELLING'], 'CANCELLED', { completedAt: now }, { type: 'sync.cancelled' });
    }
    const dead = await em.find(SyncJob, { status: 'RUNNING', heartbeatAt: { $lt: staleBefore } });
    for (const job of dead) {
      if (this.running.has(job.id)) continue;
      const message = `The worker running this sync stopped responding (no heartbeat for ${this.options.staleRunningSeconds} s)`;
      await this.deps.sync.transition(job.id, ['RUNNING'], 'FAILED', { completedAt: now, error: message, errorDetails: { type: 'WorkerLost' } }, { type: 'sync.failed', extra: { error: message } });
    }
  }

  /**
   * Starts the runs that are due: a cron time has come, or a retry asked for by a run that failed for
   * now (SyncFailures.retryLater, on connections with or without a schedule). A claim on next_run_at makes one
   * process start each.
   */
  async schedule(now = new Date()): Promise<void> {
    const em = this.deps.orm.em.fork();
    const due = await em.find(SourceConnection, { nextRunAt: { $lte: now } });
    for (const connection of due) {
      const next = connection.cron ? nextScheduledRun(connection.cron, connection.nextRunAt!, now, this.options.scheduleMinIntervalSeconds) : null;
      const claimed = await em.nativeUpdate(SourceConnection, { id: connection.id, nextRunAt: connection.nextRunAt }, { nextRunAt: next });
      if (claimed === 0) continue;
      try {
        await this.deps.sync.start(connection, { trigger: 'schedule', forceFullSync: false });
      } catch (error) {
        // One run at a time per connection: a run still going means this tick is skipped.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    for (const starter of this.deps.starters ?? []) await starter.startDue(now);
  }
}
