import { OptionalProps } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { uuidv7 } from '../../shared/ids.js';

/**
 * The index and raw-data cleanup a deletion still owes: written in the deletion's own transaction and
 * removed once the worker has done it. The queue's message is only a nudge: a message lost (an
 * in-process queue gone with its process, a Redis restarted without persistence, a process stopped
 * between the commit and the enqueue) is queued again from here, so a deleted connection's chunks and
 * raw records do not stay on disk for good. No foreign keys: what it names is gone.
 */
@Entity({ tableName: 'pending_cleanups' })
export class PendingCleanup {
  [OptionalProps]?: 'id' | 'sourceConnectionId' | 'requestedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'uuid' })
  collectionId!: string;

  /** Null: the whole collection. */
  @Property({ type: 'uuid', nullable: true })
  sourceConnectionId: string | null = null;

  @Property({ type: 'datetime' })
  requestedAt: Date = new Date();
}
