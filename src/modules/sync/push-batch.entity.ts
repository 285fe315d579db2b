import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { uuidv7 } from '../../shared/ids.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import { SyncJob } from './sync-job.entity.js';

/** A pushed entity as stored until its job has run (dates as ISO strings). */
export interface StoredPushEntity {
  entityId: string;
  entityType: string;
  name: string;
  text: string;
  breadcrumbs: { entityId: string; name: string; entityType: string }[];
  fields: Record<string, unknown>;
  webUrl: string;
  createdAt: string | null;
  updatedAt: string | null;
}

export interface StoredPushItems {
  entities: StoredPushEntity[];
  deletions: string[];
}

/**
 * One accepted request of entities sent to a push connection. It waits (no job) while an earlier
 * batch of the connection is syncing, then gets a sync job of its own; the worker's run of that job
 * reads `items`, which are dropped once the job has finished. Stored in the database, so an accepted
 * batch survives restarts of API and worker processes.
 */
@Entity({ tableName: 'push_batches' })
@Index({ name: 'push_batches_connection_created_idx', properties: ['sourceConnection', 'createdAt'] })
@Index({ name: 'push_batches_waiting_idx', expression: `create index "push_batches_waiting_idx" on "push_batches" ("source_connection_id", "created_at") where "job_id" is null` })
@Index({ name: 'push_batches_unfinished_idx', expression: `create index "push_batches_unfinished_idx" on "push_batches" ("job_id") where "items" is not null` })
export class PushBatch {
  [OptionalProps]?: 'id' | 'createdAt' | 'job' | 'attempts';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => SourceConnection, { deleteRule: 'cascade' })
  sourceConnection!: SourceConnection;

  @Property({ type: 'uuid' })
  organizationId!: string;

  /** The job syncing the batch; null while it waits for the connection's previous batch. */
  @ManyToOne(() => SyncJob, { nullable: true, deleteRule: 'cascade' })
  @Unique({ name: 'push_batches_job_unique' })
  job: SyncJob | null = null;

  /** Jobs started for the batch: more than one when a worker died while running it. */
  @Property({ type: 'integer' })
  attempts = 0;

  @Property({ type: 'integer' })
  entityCount!: number;

  @Property({ type: 'integer' })
  deletionCount!: number;

  /** The entities and deletions; null once the batch's job has finished. */
  @Property({ type: 'json', nullable: true })
  items!: StoredPushItems | null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
