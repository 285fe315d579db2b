import type { PushedBatches, SourceItem } from '../../connectors/connector.js';
import type { Orm } from '../../platform/db/database.js';
import type { Logger } from '../../platform/logger.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import { UUID_PATTERN } from '../../shared/ids.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { SourceService } from '../sources/source.service.js';
import { PushBatch } from './push-batch.entity.js';
import { checkPush, pushedItems, type PushInput } from './push-entities.js';
import type { SyncJob } from './sync-job.entity.js';
import { jobView, type SyncJobView } from './sync-job.view.js';
import type { SyncService } from './sync.service.js';

/** A batch as clients see it (REST `PushBatch`, GraphQL `PushBatch`). */
export interface PushBatchView {
  id: string;
  sourceConnectionId: string;
  entityCount: number;
  deletionCount: number;
  createdAt: Date;
  /** The job syncing the batch; null while the batch waits for the connection's previous one. */
  job: SyncJobView | null;
}

/** Jobs a batch gets in all: a batch whose worker died while running it waits again, up to this. */
const MAX_ATTEMPTS = 3;
/** SQL over a batch `b` and its job `j`: the job was lost with its worker and the batch has attempts left. */
const RETRYABLE = `(j.status = 'FAILED' and j.error_details->>'type' = 'WorkerLost' and b.items is not null and b.attempts < ${MAX_ATTEMPTS})`;

/** Another process linked the batch to a job first. */
class BatchTaken extends Error {}

/**
 * The push source's rules: accepting batches of entities for push connections, and feeding them one
 * by one, oldest first, through the sync pipeline as jobs of their own (a connection runs one job at
 * a time, so a batch sent while another is syncing waits for it). Also the store the `push`
 * connector reads a job's batch from.
 */
export class PushBatchService implements PushedBatches {
  constructor(
    private readonly orm: Orm,
    private readonly sources: SourceService,
    private readonly sync: SyncService,
    private readonly logger: Logger,
  ) {}

  /**
   * Stores a batch of entities (upserts) and deletions for a push connection of the caller's
   * organization and starts its sync job, or leaves it waiting behind the connection's current job.
   * 404 for an unknown connection, 409 for one whose source does not receive pushes, 422 for bad input.
   */
  async push(principal: Principal, connectionId: string, input: PushInput): Promise<PushBatchView> {
    const em = this.orm.em.fork();
    const connection = await this.sync.connectionOf(principal, connectionId);
    if (!this.sources.connector(connection.shortName).receivesPushes) {
      throw new ConflictError(`Source connection "${connection.id}" is a ${connection.shortName} connection: only push connections accept entities`);
    }
    const { issues, items } = checkPush(input);
    if (issues.length) throw new ValidationError(issues);
    const batch = em.create(PushBatch, {
      sourceConnection: em.getReference(SourceConnection, connection.id),
      organizationId: principal.organizationId,
      entityCount: items.entities.length,
      deletionCount: items.deletions.length,
      items,
    });
    await em.flush();
    // Accepted from here on: should the start fail, the worker's next tick starts the batch.
    await this.startNext(connection.id).catch((error: unknown) => this.logger.error({ err: error, batchId: batch.id }, 'could not start the sync of a pushed batch'));
    return (await this.view(batch.id))!;
  }

  /** One batch of a connection of the caller's organization, with its job; null when there is none. */
  async batch(principal: Principal, connectionId: string, batchId: string): Promise<PushBatchView | null> {
    const connection = await this.sync.connectionOf(principal, connectionId);
    if (!UUID_PATTERN.test(batchId)) return null;
    const batch = await this.orm.em.fork().findOne(PushBatch, { id: batchId, sourceConnection: connection.id }, { fields: ['id'] });
    return batch ? this.view(batch.id) : null;
  }

  /** PushedBatches: the items of the batch a job was started for (read by the `push` connector's run). */
  async itemsOf(jobId: string): Promise<SourceItem[]> {
    const batch = await this.orm.em.fork().findOne(PushBatch, { job: jobId });
    if (!batch?.items) throw new Error('The pushed batch of this job is no longer stored');
    return pushedItems(batch.items);
  }

  /** After a job of a push connection ends: its batch is done (or waits again) and the next one starts. */
  async jobFinished(job: SyncJob): Promise<void> {
    if (!this.sources.connector(job.sourceConnection.shortName).receivesPushes) return;
    try {
      await this.reconcile(job.sourceConnection.id);
    } catch (error) {
      // The worker's next tick (startDue) reconciles again.
      this.logger.error({ err: error, jobId: job.id }, 'could not start the next pushed batch');
    }
  }

  /** Worker tick: starts the waiting batches of every connection whose previous job has ended. */
  async startDue(): Promise<void> {
    await this.reconcile(null);
  }

  /**
   * Brings the batches of one connection (or all) up to date with their jobs, idempotently: a batch
   * whose worker was lost waits again; finished batches drop their items; the oldest waiting batch
   * of each idle connection gets its job.
   */
  private async reconcile(connectionId: string | null): Promise<void> {
    const connection = this.orm.em.getConnection();
    const scope = `(?::uuid is null or b.source_connection_id = ?::uuid)`;
    // The janitor fails the RUNNING jobs of dead workers with errorDetails.type WorkerLost (sync-upkeep.ts).
    await connection.execute(
      `update push_batches b set job_id = null from sync_jobs j
       where b.job_id = j.id and ${RETRYABLE} and ${scope}`,
      [connectionId, connectionId],
    );
    await connection.execute(
      `update push_batches b set items = null from sync_jobs j
       where b.job_id = j.id and b.items is not null and j.status in ('COMPLETED', 'FAILED', 'CANCELLED') and ${scope}
         and not ${RETRYABLE}`,
      [connectionId, connectionId],
    );
    const idle = await connection.execute<{ source_connection_id: string }[]>(
      `select distinct b.source_connection_id from push_batches b
       where b.job_id is null and ${scope}
         and not exists (select 1 from sync_jobs j where j.source_connection_id = b.source_connection_id and j.status in ('PENDING', 'RUNNING', 'CANCELLING'))`,
      [connectionId, connectionId],
    );
    for (const row of idle) await this.startNext(row.source_connection_id);
  }

  /**
   * Starts a job for the connection's oldest waiting batch, linking the two in the job's transaction.
   * Nothing happens while a job of the connection is active (its end starts the next batch), or when
   * another process took the batch first.
   */
  private async startNext(connectionId: string): Promise<void> {
    const em = this.orm.em.fork();
    // The oldest batch still to sync, including one whose worker was lost after this reconcile's
    // first step looked (the janitor may fail its job at any moment): it goes before younger batches.
    const [oldest] = await em.getConnection().execute<{ id: string; job_id: string | null }[]>(
      `select b.id, b.job_id from push_batches b left join sync_jobs j on j.id = b.job_id
       where b.source_connection_id = ? and b.items is not null and (b.job_id is null or ${RETRYABLE})
       order by b.created_at, b.id limit 1`,
      [connectionId],
    );
    if (!oldest) return;
    const next = await em.findOneOrFail(PushBatch, { id: oldest.id }, { populate: ['sourceConnection'] });
    try {
      await this.sync.start(next.sourceConnection, {
        trigger: 'push',
        forceFullSync: false,
        attach: async (tx, job) => {
          const linked = await tx.nativeUpdate(PushBatch, { id: next.id, job: oldest.job_id, attempts: next.attempts }, { job: job.id, attempts: next.attempts + 1 });
          if (linked === 0) throw new BatchTaken();
        },
      });
    } catch (error) {
      if (error instanceof ConflictError || error instanceof BatchTaken) return;
      throw error;
    }
  }

  private async view(batchId: string): Promise<PushBatchView | null> {
    const batch = await this.orm.em.fork().findOne(PushBatch, { id: batchId }, { populate: ['job'], exclude: ['items'] });
    if (!batch) return null;
    return {
      id: batch.id,
      sourceConnectionId: batch.sourceConnection.id,
      entityCount: batch.entityCount,
      deletionCount: batch.deletionCount,
      createdAt: batch.createdAt,
      job: batch.job ? jobView(batch.job) : null,
    };
  }
}
