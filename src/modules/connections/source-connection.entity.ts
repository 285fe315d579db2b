import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { AuthMethod } from '../../connectors/connector.js';
import { uuidv7 } from '../../shared/ids.js';
import { Collection } from '../collections/collection.entity.js';
import type { SyncConfig } from '../collections/sync-config.js';
import { Organization } from '../organizations/organization.entity.js';

/** A collection's link to one source type, with its (sealed) credentials, config and schedule. */
@Entity({ tableName: 'source_connections' })
@Index({ name: 'source_connections_organization_created_idx', properties: ['organization', 'createdAt'] })
@Index({ name: 'source_connections_next_run_idx', properties: ['nextRunAt'] })
export class SourceConnection {
  [OptionalProps]?:
    | 'id'
    | 'createdAt'
    | 'modifiedAt'
    | 'description'
    | 'sealedCredentials'
    | 'authenticatedAt'
    | 'cron'
    | 'nextRunAt'
    | 'cursor'
    | 'resumeCursor'
    | 'syncConfig'
    | 'createdByEmail'
    | 'modifiedByEmail';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Collection, { deleteRule: 'cascade' })
  @Index()
  collection!: Collection;

  @Property({ type: 'string', length: 256 })
  name!: string;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'string', length: 64 })
  shortName!: string;

  @Property({ type: 'json' })
  config!: Record<string, unknown>;

  /** Credentials as one SecretBox envelope; never returned or logged. */
  @Property({ type: 'text', nullable: true })
  sealedCredentials: string | null = null;

  @Property({ type: 'string', length: 32 })
  authMethod!: AuthMethod;

  @Property({ type: 'boolean' })
  authenticated!: boolean;

  @Property({ type: 'datetime', nullable: true })
  authenticatedAt: Date | null = null;

  @Property({ type: 'string', length: 128, nullable: true })
  cron: string | null = null;

  @Property({ type: 'datetime', nullable: true })
  nextRunAt: Date | null = null;

  /** Where the last successful incremental sync stopped. */
  @Property({ type: 'json', nullable: true })
  cursor: Record<string, unknown> | null = null;

  /** The last checkpoint of a run that failed or was cancelled: the next run resumes from it. */
  @Property({ type: 'json', nullable: true })
  resumeCursor: unknown = null;

  /** Connection-level layer of the sync configuration (over the collection's, under the job's). */
  @Property({ type: 'json', nullable: true })
  syncConfig: SyncConfig | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime' })
  modifiedAt: Date = new Date();

  @Property({ type: 'string', length: 320, nullable: true })
  createdByEmail: string | null = null;

  @Property({ type: 'string', length: 320, nullable: true })
  modifiedByEmail: string | null = null;
}
