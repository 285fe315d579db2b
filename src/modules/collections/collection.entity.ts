import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Organization } from '../organizations/organization.entity.js';
import { uuidv7 } from '../../shared/ids.js';
import type { SyncConfig } from './sync-config.js';

/** A collection groups the data of its source connections; `readableId` is unique per organization. */
@Entity({ tableName: 'collections' })
@Unique({ name: 'collections_organization_readable_id_unique', properties: ['organization', 'readableId'] })
@Index({ name: 'collections_organization_created_idx', properties: ['organization', 'createdAt'] })
export class Collection {
  [OptionalProps]?: 'id' | 'createdAt' | 'modifiedAt' | 'syncConfig' | 'createdByEmail' | 'modifiedByEmail';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Property({ type: 'string', length: 64 })
  name!: string;

  @Property({ type: 'string', length: 64 })
  readableId!: string;

  @Property({ type: 'json', nullable: true })
  syncConfig: SyncConfig | null = null;

  /** Fixed at creation from the embedder configured then, so a later change cannot mix vector spaces. */
  @Property({ type: 'integer' })
  vectorSize!: number;

  @Property({ type: 'string', length: 256 })
  embeddingModelName!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime' })
  modifiedAt: Date = new Date();

  @Property({ type: 'string', length: 320, nullable: true })
  createdByEmail: string | null = null;

  @Property({ type: 'string', length: 320, nullable: true })
  modifiedByEmail: string | null = null;
}
