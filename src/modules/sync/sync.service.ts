import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import type { Orm } from '../../platform/db/database.js';
import type { EventBus, EventType, RecordedEvent } from '../../platform/events/event-bus.js';
import type { PubSub } from '../../platform/pubsub/pubsub.js';
import type { JobQueue } from '../../platform/queue/queue.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { UUID_PATTERN, uuidv7 } from '../../shared/ids.js';
import { normalizeSyncConfig, type SyncConfig, type SyncConfigPatch } from '../collections/sync-config.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';
import { FINISHED_JOB_STATUSES, SyncJob, type JobStatus } from './sync-job.entity.js';
import { jobView, type SyncJobView } from './sync-job.view.js';
import { NOTHING_SKIPPED, type SkippedRecord } from './skipped-items.js';

export const SYNC_QUEUE = 'sync';
export const jobProgressTopic = (jobId: string) => `sync-job:${jobId}`;
export const jobCancelTopic = 'sync-cancel';

export type SyncEventType = EventType & `sync.${string}`;
/** The event a transition records with it; `extra` adds payload fields (the `error` of sync.failed). */
export interface SyncEvent {
  type: SyncEventType;
  extra?: Record<string, unknown>;
}

/** Job lifecycle rules shared by the API (run, cancel, list) and the worker (transitions, events). */
export class SyncService {
  constructor(
    private readonly orm: Orm,
    private readonly queue: JobQueue,
    private readonly events: EventBus,
    private readonly pubsub: PubSub,
    /**
     * Why a connection cannot be run (see `runRefusal` in connectors/connector.ts), or null: federated
     * connections are searched in their source, push connections sync only the batches they are sent.
     */
    private readonly runRefusal: (connection: SourceConnection) => string | null = () => null,
  ) {}

  private readonly finishedListeners: ((job: SyncJob) => Promise<void>)[] = [];

  /**
   * Creates a PENDING job and queues it; 409 while another job of the connection is active, or for a
   * connection that cannot be run. A `push` job (a batch sent to a push connection) and a `reembed`
   * job (CollectionReembedding: a push connection replays its raw data) are not runs asked of the
   * source, so only the first rule applies to them. `attach` stages more changes in the job's
   * transaction (it may throw to roll the job back).
   */
  async start(
    connection: SourceConnection,
    options: {
      trigger: 'manual' | 'schedule' | 'create' | 'push' | 'reembed';
      forceFullSync: boolean;
      syncConfig?: SyncConfig | null;
      attach?: (tx: EntityManager, job: SyncJob) => Promise<void>;
    },
  ): Promise<SyncJobView> {
    const refusal = options.trigger === 'push' || options.trigger === 'reembed' ? null : this.runRefusal(connection);
    if (refusal) throw new ConflictError(refusal);
    let created: { job: SyncJob; event: RecordedEvent };
    try {
      created = await this.orm.em.fork().transactional(async (tx) => {
        const withCollection = await tx.findOneOrFail(SourceConnection, { id: connection.id }, { populate: ['collection'] });
        const job = tx.create(SyncJob, {
          sourceConnection: withCollection,
          organizationId: connection.organization.id,
          status: 'PENDING',
          trigger: options.trigger,
          forceFullSync: options.forceFullSync,
          syncConfig: options.syncConfig ?? null,
        });
        const event = this.record(tx, { type: 'sync.pending' }, job);
        await tx.flush();
        await options.attach?.(tx, job);
        return { job, event };
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new ConflictError('A sync of this source connection is already running');
      throw error;
    }
    const { job, event } = created;
    await this.publish(event, job);
    // The job is committed, so the run was accepted whatever the queue says: one that cannot take
    // the job now (Redis down, a queue closing) gets it again from the worker's reconciler.
    await this.queue.add(SYNC_QUEUE, { jobId: job.id }, { id: job.id }).catch(() => {});
    return jobView(job);
  }

  async run(principal: Principal, connectionId: string, options: { forceFullSync: boolean; syncConfig?: SyncConfigPatch | null }): Promise<SyncJobView> {
    const layer = options.syncConfig == null ? null : normalizeSyncConfig(options.syncConfig, ['sync_config']);
    if (layer?.issues.length) throw new ValidationError(layer.issues);
    const connection = await this.connectionOf(principal, connectionId);
    return this.start(connection, { trigger: 'manual', forceFullSync: options.forceFullSync, syncConfig: layer?.value ?? null });
  }

  async jobs(principal: Principal, connectionId: string, limit: number): Promise<SyncJobView[]> {
    const connection = await this.connectionOf(principal, connectionId);
    const jobs = await this.orm.em.fork().find(SyncJob, { sourceConnection: connection.id }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
    return jobs.map(jobView);
  }

  async job(principal: Principal, jobId: string): Promise<SyncJobView | null> {
    if (!UUID_PATTERN.test(jobId)) return null;
    const job = await this.orm.em.fork().findOne(SyncJob, { id: jobId, organizationId: principal.organizationId });
    return job ? jobView(job) : null;
  }

  /** What a job of the principal's organization left out (null when the job is not theirs). */
  async skipped(principal: Principal, jobId: string): Promise<SkippedRecord | null> {
    if (!UUID_PATTERN.test(jobId)) return null;
    const job = await this.orm.em.fork().findOne(SyncJob, { id: jobId, organizationId: principal.organizationId }, { fields: ['skipped'] });
    return job ? (job.skipped ?? NOTHING_SKIPPED) : null;
  }

  /**
   * PENDING or RUNNING → CANCELLING at once, and a signal to the worker running it. Any other
   * status is a 409: the job cannot be cancelled.
   */
  async cancel(principal: Principal, connectionId: string, jobId: string): Promise<SyncJobView> {
    const connection = await this.connectionOf(principal, connectionId);
    const em = this.orm.em.fork();
    const job = UUID_PATTERN.test(jobId) ? await em.findOne(SyncJob, { id: jobId, sourceConnection: connection.id }) : null;
    if (!job) throw NotFoundError.of('Sync job', jobId);
    const moved = await this.transition(job.id, ['PENDING', 'RUNNING'], 'CANCELLING', { cancelRequestedAt: new Date() });
    if (!moved) throw new ConflictError(`Sync job ${job.id} is ${(await em.refreshOrFail(job)).status} and cannot be cancelled`);
    await this.signalCancel(job.id);
    return jobView(moved);
  }

  /** Tells whichever worker runs the job to abort it now (the heartbeat would notice within seconds anyway). */
  async signalCancel(jobId: string): Promise<void> {
    await this.pubsub.publish(jobCancelTopic, { jobId });
  }

  /**
   * Atomic status change: only from one of `from`. Returns the job after the change, or null. With
   * `event`, the event is recorded in the same transaction as the change and published after it.
   */
  async transition(jobId: string, from: JobStatus[], to: JobStatus, changes: Partial<SyncJob> = {}, event?: SyncEvent): Promise<SyncJob | null> {
    // A finished job is never resumed, and only a resumed run reads the counts of its last checkpoint.
    const finished = FINISHED_JOB_STATUSES.includes(to) ? { countsAtCheckpoint: null } : {};
    const moved = await this.orm.em.fork().transactional(async (tx) => {
      const updated = await tx.nativeUpdate(SyncJob, { id: jobId, status: { $in: from } }, { ...changes, ...finished, status: to });
      if (updated === 0) return null;
      const job = await tx.findOneOrFail(SyncJob, { id: jobId }, { populate: ['sourceConnection', 'sourceConnection.collection'] });
      return { job, recorded: event ? this.record(tx, event, job) : null };
    });
    if (moved?.recorded) await this.publish(moved.recorded, moved.job);
    if (moved && FINISHED_JOB_STATUSES.includes(to)) {
      for (const listener of this.finishedListeners) await listener(moved.job);
    }
    return moved?.job ?? null;
  }

  /**
   * Calls `listener` after each job this process moves to COMPLETED, FAILED or CANCELLED (its
   * connection loaded), e.g. to start the next pushed batch of the connection. Listeners handle
   * their own errors.
   */
  onJobFinished(listener: (job: SyncJob) => Promise<void>): void {
    this.finishedListeners.push(listener);
  }

  /** Stages a sync event of `job` (its connection and collection loaded) in `em`, to commit with the change. */
  private record(em: ReturnType<Orm['em']['fork']>, { type, extra }: SyncEvent, job: SyncJob): RecordedEvent {
    const connection = job.sourceConnection;
    const timestamp = new Date().toISOString();
    const event: RecordedEvent = {
      id: uuidv7(),
      type,
      organizationId: job.organizationId,
      occurredAt: timestamp,
      payload: {
        event_type: type,
        organization_id: job.organizationId,
        timestamp,
        sync_id: connection.id,
        sync_job_id: job.id,
        collection_id: connection.collection.id,
        collection_readable_id: connection.collection.readableId,
        collection_name: connection.collection.name,
        source_connection_id: connection.id,
        source_type: connection.shortName,
        entities_inserted: job.entitiesInserted,
        entities_updated: job.entitiesUpdated,
        entities_deleted: job.entitiesDeleted,
        entities_skipped: job.entitiesSkipped,
        chunks_written: job.chunksWritten,
        ...extra,
      },
    };
    this.events.record(em, event);
    return event;
  }

  /** After the commit: event subscribers, the webhook dispatcher and the job's progress stream. */
  private async publish(event: RecordedEvent, job: SyncJob): Promise<void> {
    await this.events.publish({ ...event, subject: jobView(job) });
    await this.pubsub.publish(jobProgressTopic(job.id), jobView(job));
  }

  /** The organization's connection by id; NotFoundError otherwise (another organization's included). */
  async connectionOf(principal: Principal, connectionId: string): Promise<SourceConnection> {
    const connection = UUID_PATTERN.test(connectionId)
      ? await this.orm.em.fork().findOne(SourceConnection, { id: connectionId, organization: principal.organizationId })
      : null;
    if (!connection) throw NotFoundError.of('Source connection', connectionId);
    return connection;
  }
}
