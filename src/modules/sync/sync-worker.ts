import { CredentialsRejectedError, type ConnectorEnvironment, type SourceRun, type SyncContext } from '../../connectors/connector.js';
import type { EventBus } from '../../platform/events/event-bus.js';
import type { Orm } from '../../platform/db/database.js';
import type { Logger } from '../../platform/logger.js';
import type { PubSub } from '../../platform/pubsub/pubsub.js';
import type { JobQueue } from '../../platform/queue/queue.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { Collection } from '../collections/collection.entity.js';
import { embeddingMismatch } from '../collections/collection.service.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { SourceService } from '../sources/source.service.js';
import type { SyncPipeline } from './pipeline.js';
import { NO_COUNTS, type SyncCounts } from './sync-counts.js';
import { RawStore } from './raw-store.js';
import type { VectorIndex } from '../../platform/vectors/vector-index.js';
import { CLEANUP_QUEUE, type CleanupRequest, Cleanups } from './cleanup.js';
import { CheckpointWriter, RunCheckpoints } from './checkpoints.js';
import { runContext, type RunContextDependencies } from './run-context.js';
import { OwedOptimizes } from './owed-optimizes.js';
import { layerSyncConfigs } from './sync-config-layers.js';
import { SyncFailures } from './sync-failures.js';
import { type CountsAtCheckpoint, SyncJob } from './sync-job.entity.js';
import { SkipTally, type SkippedRecord } from './skipped-items.js';
import { SyncUpkeep, type SyncUpkeepOptions } from './sync-upkeep.js';
import { jobCancelTopic, jobProgressTopic, SYNC_QUEUE, type SyncService } from './sync.service.js';
import { jobView } from './sync-job.view.js';
import type { BlobStore } from '../../platform/blobs/blob-store.js';

export interface SyncWorkerOptions extends SyncUpkeepOptions {
  concurrency: number;
  heartbeatSeconds: number;
}

/**
 * The worker role for syncs: runs queued jobs through the pipeline with a heartbeat and an abort
 * signal, starts scheduled runs, cleans up after dead workers, and queues again the waiting jobs
 * the queue lost. Only the database decides a job's fate: a failed progress event, heartbeat or
 * queue call (Redis down) is logged, never a reason to fail the sync.
 */
export class SyncWorker {
  private readonly running = new Map<string, AbortController>();
  private readonly settling = new Set<Promise<void>>();
  private stopping = false;
  private cancelSubscription: AsyncIterableIterator<{ jobId: string }> | null = null;
  private readonly cleanups: Cleanups;
  private readonly optimizes: OwedOptimizes;
  private readonly failures: SyncFailures;
  private readonly upkeep: SyncUpkeep;

  constructor(
    private readonly deps: {
      orm: Orm;
      queue: JobQueue;
      pubsub: PubSub;
      sync: SyncService;
      sources: SourceService;
      pipeline: SyncPipeline;
      blobs: BlobStore;
      vectors: VectorIndex;
      secretBox: SecretBox;
      environment: ConnectorEnvironment;
      events: EventBus;
      /** The operator's OAuth apps, which refresh the tokens they obtained. */
      operatorApps: RunContextDependencies['operatorApps'];
      /** The operator's policy for sources (CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS), for the runs' HTTP clients. */
      allowPrivateNetworks: boolean;
      logger: Logger;
      /** Other sources of due runs, looked at on each tick after the cron schedules (e.g. pushed batches waiting for their connection). */
      starters?: { startDue(now: Date): Promise<void> }[];
    },
    private readonly options: SyncWorkerOptions,
  ) {
    this.cleanups = new Cleanups(deps);
    this.optimizes = new OwedOptimizes(deps);
    this.failures = new SyncFailures(deps);
    this.upkeep = new SyncUpkeep({ ...deps, cleanups: this.cleanups }, options, this.running);
  }

  async start(): Promise<void> {
    this.cancelSubscription = this.deps.pubsub.subscribe<{ jobId: string }>(jobCancelTopic);
    void (async () => {
      for await (const { jobId } of this.cancelSubscription!) this.running.get(jobId)?.abort(new Error('Cancelled'));
    })();
    this.deps.queue.process<{ jobId: string }>(SYNC_QUEUE, this.options.concurrency, ({ jobId }) => {
      const run = this.runJob(jobId).finally(() => this.settling.delete(run));
      this.settling.add(run);
      return run;
    });
    this.deps.queue.process<CleanupRequest>(CLEANUP_QUEUE, 1, (request) => this.cleanups.run(request));
    // Jobs queued in memory before a restart are lost with it: queue the waiting ones again.
    await this.queueWaiting();
    await this.cleanups.queuePending();
    await this.optimizes.startLeft();
    this.upkeep.startTicking();
  }

  /** Stops taking work; running jobs stop at their next batch and go back to PENDING for the next worker. */
  async stop(): Promise<void> {
    this.stopping = true;
    const looking = this.upkeep.stop();
    await this.cancelSubscription?.return?.();
    for (const controller of this.running.values()) controller.abort(new Error('Worker shutting down'));
    await Promise.allSettled([...this.settling, looking]);
  }

  /** See SyncUpkeep.queueWaiting. */
  async queueWaiting(createdBefore?: Date): Promise<void> {
    await this.upkeep.queueWaiting(createdBefore);
  }

  /** Runs one queued job. Safe to call twice for the same job: only a PENDING job starts. */
  async runJob(jobId: string): Promise<void> {
    const { sync, logger } = this.deps;
    const started = await sync.transition(jobId, ['PENDING'], 'RUNNING', { startedAt: new Date(), heartbeatAt: new Date() }, { type: 'sync.running' });
    if (!started) {
      // Cancelled before any worker took it: nothing ran, so it is simply cancelled.
      await sync.transition(jobId, ['CANCELLING'], 'CANCELLED', { completedAt: new Date() }, { type: 'sync.cancelled' });
      return;
    }
    const controller = new AbortController();
    this.running.set(jobId, controller);
    const heartbeat = setInterval(() => void this.beat(jobId, controller), this.options.heartbeatSeconds * 1000);
    let counts: SyncCounts = { ...NO_COUNTS };
    // Saved and published with the next progress (the source says it before it yields the entities).
    let total: number | null = null;
    const expectTotal = (expected: number) => {
      total = Math.max(0, Math.floor(expected));
    };
    // What the source leaves out counts as skipped with the unchanged entities, and is listed by reason.
    const skips = new SkipTally();
    const countFields = (progress: SyncCounts) => ({ ...pipelineCountFields(progress), entitiesSkipped: progress.skipped + skips.count });
    let progressSavedAt = 0;
    try {
      const { cursor, counts: finalCounts } = await this.execute(started, controller.signal, {
        expectTotal,
        skips,
        resume: (from) => {
          counts = from.counts;
          skips.continueFrom(from.skipped);
        },
        onProgress: async (progress) => {
          counts = progress;
          // What is not saved now is saved by the next update or the job's end, which writes the counts too.
          if (Date.now() - progressSavedAt < PROGRESS_SAVE_MIN_INTERVAL_MS) return;
          progressSavedAt = Date.now();
          await this.saveProgress(jobId, { ...countFields(progress), entitiesTotal: total, ...skippedField(skips.takeChanged()) });
        },
      });
      counts = finalCounts;
      const skipped = skips.snapshot();
      if (skipped.count > 0) logger.info({ jobId, skipped: skipped.byReason }, 'sync job: items left out, by reason');
      const completed = await sync.transition(jobId, ['RUNNING'], 'COMPLETED', { completedAt: new Date(), ...countFields(counts), skipped }, { type: 'sync.completed' });
      if (completed) {
        // A finished run leaves nothing to resume.
        await this.deps.orm.em.fork().nativeUpdate(SourceConnection, { id: completed.sourceConnection.id }, { ...(cursor !== undefined ? { cursor } : {}), resumeCursor: null });
      } else {
        await this.finishCancelled(jobId, countFields(counts));
      }
    } catch (error) {
      if (controller.signal.aborted && this.stopping) {
        await this.requeue(jobId, countFields(counts));
      } else if (controller.signal.aborted) {
        await this.finishCancelled(jobId, countFields(counts));
      } else {
        const message = error instanceof Error ? error.message : String(error);
        logger.warn({ jobId, err: error }, 'sync failed');
        await sync.transition(
          jobId,
          ['RUNNING', 'CANCELLING'],
          'FAILED',
          {
            completedAt: new Date(),
            error: message,
            errorDetails: { type: error instanceof Error ? error.name : 'Error' },
            credentialsRejected: error instanceof CredentialsRejectedError,
            ...countFields(counts),
            skipped: skips.snapshot(),
          },
          { type: 'sync.failed', extra: { error: message } },
        );
        await this.failures.afterFailure(started.sourceConnection.id, error);
      }
    } finally {
      clearInterval(heartbeat);
      this.running.delete(jobId);
    }
  }

  /**
   * A job interrupted by this worker's shutdown (not by a cancel) waits for the next worker: its
   * committed batches are kept and the re-run skips them by hash. Workers queue PENDING jobs at start.
   */
  private async requeue(jobId: string, counts: JobCountFields): Promise<void> {
    const pending = await this.deps.sync.transition(jobId, ['RUNNING'], 'PENDING', { startedAt: null, heartbeatAt: null, ...counts });
    if (!pending) return this.finishCancelled(jobId, counts); // it was being cancelled meanwhile
    await this.deps.queue.add(SYNC_QUEUE, { jobId }, { id: jobId }).catch(() => {
      // The queue is closing too (in-process): the next worker start queues PENDING jobs again.
    });
  }

  private async finishCancelled(jobId: string, counts: JobCountFields): Promise<void> {
    await this.deps.sync.transition(jobId, ['RUNNING', 'CANCELLING'], 'CANCELLED', { completedAt: new Date(), ...counts }, { type: 'sync.cancelled' });
  }


  /**
   * Loads the connection, decides full, incremental or resumed, and runs the pipeline, storing
   * checkpoints as batches commit. A run of the job resumed from its own checkpoint continues from
   * the counts and skips it stored with it (`run.resume`).
   */
  private async execute(job: SyncJob, signal: AbortSignal, run: JobRun) {
    const em = this.deps.orm.em.fork();
    const connection = await em.findOneOrFail(SourceConnection, { id: job.sourceConnection.id });
    const collection = await em.findOneOrFail(Collection, { id: connection.collection.id });
    const connector = this.deps.sources.connector(connection.shortName);
    const config = layerSyncConfigs(collection.syncConfig, connection.syncConfig, job.syncConfig);
    const mismatch = embeddingMismatch(collection, this.deps.pipeline.embedding);
    if (mismatch) throw new Error(mismatch);
    const checkpoints = new RunCheckpoints();
    let source: SourceRun;
    let startCounts: SyncCounts | undefined;
    if (config.behavior.replayFromArf) {
      source = new RawStore(this.deps.blobs, collection.id, connection.id).replay();
    } else {
      const context = runContext(this.deps, connector, connection, { loadCursor: !job.forceFullSync && !config.cursor.skipLoad, signal });
      // A run that does not resume starts a new series of checkpoints: an older one no longer applies.
      if (!context.resuming && connection.resumeCursor !== null) await em.nativeUpdate(SourceConnection, { id: connection.id }, { resumeCursor: null });
      // The checkpoint is this job's when it stored counts with it (a connection runs one job at a time); else a failed job's, whose counts are its own.
      const resumed = context.resuming ? (await em.findOneOrFail(SyncJob, { id: job.id }, { fields: ['countsAtCheckpoint'] })).countsAtCheckpoint : null;
      if (resumed) {
        startCounts = resumed.counts;
        run.resume(resumed);
      }
      const sourceRun = connector.sync(
        { ...context, checkpoint: checkpoints.checkpoint, signal, logger: this.deps.logger, jobId: job.id, expectTotal: run.expectTotal, reportSkipped: (item) => run.skips.add(item) },
        this.deps.environment,
      );
      source = { complete: sourceRun.complete, nextCursor: () => sourceRun.nextCursor(), items: checkpoints.count(sourceRun.items) };
    }
    const [previous] = await em.find(SyncJob, { sourceConnection: connection.id, id: { $ne: job.id }, status: { $in: ['COMPLETED', 'FAILED', 'CANCELLED'] } }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 1 });
    const checkpointWriter = new CheckpointWriter<{ cursor: unknown; counts: CountsAtCheckpoint }>(({ cursor, counts }) => this.storeCheckpoint(job.id, connection.id, cursor, counts));
    const counts = await this.deps.pipeline.run({
      jobId: job.id,
      syncId: connection.id,
      collectionId: collection.id,
      sourceConnectionId: connection.id,
      sourceName: connection.shortName,
      config,
      source,
      startCounts,
      orphansPossible: previous !== undefined && previous.status !== 'COMPLETED',
      optimizeOwed: previous?.status === 'COMPLETED' && previous.indexOptimizedAt === null,
      onIndexOptimized: () => this.optimizes.markDone([job.id]),
      signal,
      onProgress: async (progress, committedItems, countsThrough) => {
        // Due with the batch that committed every item yielded before it, stored at most once every
        // CHECKPOINT_MIN_INTERVAL_MS (unless cursors are not to move); taken either way, so checkpoints do not
        // pile up over a run whose cursor stays. Its counts are taken now: `countsThrough` reads this batch's items only.
        const due = checkpoints.committedThrough(committedItems);
        if (!config.cursor.skipUpdates) await checkpointWriter.offer(due && { cursor: due.cursor, counts: { counts: countsThrough(due.after), skipped: run.skips.snapshot() } });
        await run.onProgress(progress);
      },
    })
      // A run that fails or stops keeps the checkpoint it held back: what it covers is committed.
      .catch(async (error: unknown) => {
        await checkpointWriter.flush().catch((storing: unknown) => this.deps.logger.warn({ err: storing, jobId: job.id }, 'storing the last checkpoint of a stopped run failed'));
        throw error;
      })
      .finally(() =>
        // Every write of the run has ended here (the pipeline returns, or throws, only then).
        this.cleanups.afterRun({ collectionId: collection.id, sourceConnectionId: connection.id }).catch((error: unknown) =>
          this.deps.logger.error({ err: error, jobId: job.id, sourceConnectionId: connection.id }, 'checking for a deletion during the run failed'),
        ),
      );
    // The cursor moves on only when asked to and the source gave one.
    const cursor = config.cursor.skipUpdates || config.behavior.replayFromArf ? undefined : source.nextCursor();
    return { counts, cursor };
  }

  /** The connection's checkpoint and the job's counts as of it, together: a resumed run continues from both. */
  private async storeCheckpoint(jobId: string, connectionId: string, cursor: unknown, countsAtCheckpoint: CountsAtCheckpoint): Promise<void> {
    await this.deps.orm.em.fork().transactional(async (tx) => {
      await tx.nativeUpdate(SourceConnection, { id: connectionId }, { resumeCursor: cursor });
      // Not on a job finished meanwhile (the janitor's FAILED, a cancel): finishing cleared its counts for good.
      await tx.nativeUpdate(SyncJob, { id: jobId, status: { $in: ['RUNNING', 'CANCELLING'] } }, { countsAtCheckpoint });
    });
  }

  private async saveProgress(jobId: string, progress: JobCountFields & Pick<SyncJob, 'entitiesTotal'> & Partial<Pick<SyncJob, 'skipped'>>): Promise<void> {
    const em = this.deps.orm.em.fork();
    await em.nativeUpdate(SyncJob, { id: jobId }, { ...progress, heartbeatAt: new Date() });
    const job = await em.findOne(SyncJob, { id: jobId });
    if (job) await this.deps.pubsub.publish(jobProgressTopic(jobId), jobView(job));
  }

  /** Refreshes the heartbeat; a job moved to CANCELLING elsewhere (another process) is aborted here. */
  private async beat(jobId: string, controller: AbortController): Promise<void> {
    try {
      const em = this.deps.orm.em.fork();
      await em.nativeUpdate(SyncJob, { id: jobId }, { heartbeatAt: new Date() });
      const job = await em.findOne(SyncJob, { id: jobId }, { fields: ['status'] });
      if (!job || job.status === 'CANCELLING') controller.abort(new Error('Cancelled'));
    } catch (error) {
      this.deps.logger.warn({ err: error, jobId }, 'heartbeat failed');
    }
  }

  /** See SyncUpkeep.janitor. */
  async janitor(now = new Date()): Promise<void> {
    await this.upkeep.janitor(now);
  }

  /** See SyncUpkeep.schedule. */
  async schedule(now = new Date()): Promise<void> {
    await this.upkeep.schedule(now);
  }
}

/**
 * The least time between two saved (and published) progress updates of a job: an unchanged re-sync
 * commits a batch every few tens of milliseconds, and each update is two statements and an event.
 * Checkpoints are stored at every committed batch all the same.
 */
const PROGRESS_SAVE_MIN_INTERVAL_MS = 100;

/** What a job's run reports to the job: what the source says (see SyncContext), the pipeline's progress, and the counts a resumed run continues from. */
interface JobRun {
  expectTotal: Required<SyncContext>['expectTotal'];
  skips: SkipTally;
  resume(from: CountsAtCheckpoint): void;
  onProgress(counts: SyncCounts): Promise<void>;
}

type JobCountFields = ReturnType<typeof pipelineCountFields>;

/** The skipped record to save with a progress update, when it changed. */
const skippedField = (record: SkippedRecord | undefined) => (record ? { skipped: record } : {});

function pipelineCountFields(counts: SyncCounts) {
  return {
    entitiesInserted: counts.inserted,
    entitiesUpdated: counts.updated,
    entitiesDeleted: counts.deleted,
    entitiesSkipped: counts.skipped,
    entitiesFailed: counts.failed,
    chunksWritten: counts.chunks,
  };
}
