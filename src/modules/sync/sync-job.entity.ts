import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { uuidv7 } from '../../shared/ids.js';
import type { SyncConfig } from '../collections/sync-config.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { SkippedRecord } from './skipped-items.js';
import type { SyncCounts } from './sync-counts.js';

export const JOB_STATUSES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLING', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** Statuses during which a connection counts as syncing: a second run is refused (409). */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['PENDING', 'RUNNING', 'CANCELLING'];
/** Statuses a job ends in. */
export const FINISHED_JOB_STATUSES: readonly JobStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** One run of a connection's sync. The partial unique index allows one active run per connection. */
@Entity({ tableName: 'sync_jobs' })
@Index({ name: 'sync_jobs_connection_created_idx', properties: ['sourceConnection', 'createdAt'] })
@Index({
  name: 'sync_jobs_one_active_per_connection',
  expression: `create unique index "sync_jobs_one_active_per_connection" on "sync_jobs" ("source_connection_id") where "status" in ('PENDING', 'RUNNING', 'CANCELLING')`,
})
export class SyncJob {
  [OptionalProps]?:
    | 'id'
    | 'createdAt'
    | 'startedAt'
    | 'completedAt'
    | 'heartbeatAt'
    | 'indexOptimizedAt'
    | 'cancelRequestedAt'
    | 'entitiesInserted'
    | 'entitiesUpdated'
    | 'entitiesDeleted'
    | 'entitiesSkipped'
    | 'entitiesFailed'
    | 'chunksWritten'
    | 'entitiesTotal'
    | 'skipped'
    | 'countsAtCheckpoint'
    | 'error'
    | 'errorDetails'
    | 'credentialsRejected';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => SourceConnection, { deleteRule: 'cascade' })
  sourceConnection!: SourceConnection;

  @Property({ type: 'uuid' })
  @Index()
  organizationId!: string;

  @Property({ type: 'string', length: 16 })
  status!: JobStatus;

  /** manual, schedule, create or push (a batch sent to a push connection). */
  @Property({ type: 'string', length: 16 })
  trigger!: string;

  @Property({ type: 'boolean' })
  forceFullSync!: boolean;

  /** The job-level layer of the sync configuration, as requested. */
  @Property({ type: 'json', nullable: true })
  syncConfig!: SyncConfig | null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  startedAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  completedAt: Date | null = null;

  /** Refreshed by the worker while it runs the job; the janitor watches it. */
  @Property({ type: 'datetime', nullable: true })
  heartbeatAt: Date | null = null;

  /**
   * When the index optimize the run left running after it ended was done, or found nothing to do. A
   * completed job without it owes one (its process stopped during it): the connection's next run and
   * the worker's start do it (see SyncPipeline.optimizeInBackground).
   */
  @Property({ type: 'datetime', nullable: true })
  indexOptimizedAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  cancelRequestedAt: Date | null = null;

  @Property({ type: 'integer' }) entitiesInserted = 0;
  @Property({ type: 'integer' }) entitiesUpdated = 0;
  @Property({ type: 'integer' }) entitiesDeleted = 0;
  @Property({ type: 'integer' }) entitiesSkipped = 0;
  @Property({ type: 'integer' }) entitiesFailed = 0;
  @Property({ type: 'integer' }) chunksWritten = 0;

  /** The entities the source said the run would yield (SyncContext.expectTotal); null when it did not know. */
  @Property({ type: 'integer', nullable: true })
  entitiesTotal: number | null = null;

  /**
   * What the source left out (SyncContext.reportSkipped): counted by reason, the first ones listed.
   * Lazy: read only when asked for (up to SKIPPED_ITEMS_LISTED items).
   */
  @Property({ type: 'json', nullable: true, lazy: true })
  skipped: SkippedRecord | null = null;

  /**
   * The job's counts and skips as of the latest checkpoint it stored (its connection's resumeCursor):
   * a run of the job resumed from that checkpoint continues from them, since its source yields again
   * only what came after it. Null before the first. Lazy: read only by the run that resumes.
   */
  @Property({ type: 'json', nullable: true, lazy: true })
  countsAtCheckpoint: CountsAtCheckpoint | null = null;

  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Property({ type: 'json', nullable: true })
  errorDetails: Record<string, unknown> | null = null;

  /** The source refused the credentials: the connection needs re-authentication. */
  @Property({ type: 'boolean' })
  credentialsRejected = false;
}

/** SyncJob.countsAtCheckpoint: the pipeline's counts and the source's skips. */
export interface CountsAtCheckpoint {
  counts: SyncCounts;
  skipped: SkippedRecord;
}
