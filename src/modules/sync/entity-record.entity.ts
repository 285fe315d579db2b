import { OptionalProps, PrimaryKeyProp } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * What the service knows of each synced entity: its content hash (insert / update / keep decisions),
 * hierarchy and, with the entity-store handler on, its fields. Written in bulk by the pipeline with
 * SQL (see entity-store.ts); the ORM mapping serves reads and migrations.
 *
 * No foreign key to the connection and no index on the collection: both cost every row written. A
 * trigger deletes a deleted connection's rows, and the upsert checks the connection once per batch
 * (see the migration entities_connection_trigger).
 */
@Entity({ tableName: 'entities' })
export class EntityRecord {
  [OptionalProps]?: 'fields' | 'sourceCreatedAt' | 'sourceUpdatedAt';
  [PrimaryKeyProp]?: ['sourceConnectionId', 'entityId'];

  /** The key is the pair (connection, entity id): a surrogate id's index cost every row written (see the migration entities_key). */
  @PrimaryKey({ type: 'uuid' })
  sourceConnectionId!: string;

  @PrimaryKey({ type: 'text' })
  entityId!: string;

  @Property({ type: 'uuid' })
  collectionId!: string;

  @Property({ type: 'string', length: 128 })
  entityType!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'string', length: 64 })
  contentHash!: string;

  @Property({ type: 'integer' })
  chunkCount!: number;

  @Property({ type: 'json' })
  breadcrumbs!: unknown[];

  @Property({ type: 'json', nullable: true })
  fields: Record<string, unknown> | null = null;

  @Property({ type: 'datetime', nullable: true })
  sourceCreatedAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  sourceUpdatedAt: Date | null = null;

  @Property({ type: 'datetime' })
  syncedAt!: Date;

  @Property({ type: 'uuid' })
  lastJobId!: string;
}
