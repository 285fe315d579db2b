import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { randomInt } from 'node:crypto';
import type { Orm } from '../../platform/db/database.js';
import type { EventBus, RecordedEvent } from '../../platform/events/event-bus.js';
import { ConflictError, NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { Organization } from '../organizations/organization.entity.js';
import { uuidv7 } from '../../shared/ids.js';
import type { Principal } from '../organizations/principal.js';
import { Collection } from './collection.entity.js';
import { deriveCollectionStatus, type CollectionStatus, type ConnectionSyncState } from './collection-status.js';
import { normalizeSyncConfig, type SyncConfig, type SyncConfigPatch } from './sync-config.js';

export const READABLE_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const NAME_LENGTH = { min: 4, max: 64 };
export const READABLE_ID_MAX_LENGTH = 64;
export const PAGE_LIMIT = { min: 1, max: 1000, default: 100 };

export interface CollectionView {
  id: string;
  name: string;
  readableId: string;
  syncConfig: SyncConfig | null;
  createdAt: Date;
  modifiedAt: Date;
  organizationId: string;
  createdByEmail: string | null;
  modifiedByEmail: string | null;
  status: CollectionStatus;
  vectorSize: number;
  embeddingModelName: string;
  sourceConnectionSummaries: { shortName: string; name: string }[];
}

/**
 * Why the active embedder cannot write to or query a collection (another model made its vectors, and
 * vectors of two models are not comparable), or null when it can. Search answers it as a 409; a sync
 * fails with it rather than mix two models' vectors in one index.
 */
export function embeddingMismatch(
  collection: { readableId: string; embeddingModelName: string; vectorSize: number },
  embedder: { modelName: string; dimensions: number },
): string | null {
  if (collection.embeddingModelName === embedder.modelName && collection.vectorSize === embedder.dimensions) return null;
  return (
    `Collection "${collection.readableId}" was embedded with ${collection.embeddingModelName} (${collection.vectorSize} dimensions) ` +
    `but the service now embeds with ${embedder.modelName} (${embedder.dimensions}); use the same model again, or re-embed the collection (GraphQL mutation reembedCollection)`
  );
}

export type CollectionEventType = 'collection.created' | 'collection.updated' | 'collection.deleted';
export const COLLECTION_EVENT_TYPES: readonly CollectionEventType[] = ['collection.created', 'collection.updated', 'collection.deleted'];

/** What collections need to know of and do to their source connections (implemented by that feature). */
export interface CollectionConnections {
  describe(collectionIds: string[]): Promise<Map<string, { summaries: { shortName: string; name: string }[]; states: ConnectionSyncState[] }>>;
  /** Cancels the collection's syncs and waits (up to 15 s) for their workers before the records go. */
  stopAll(collectionId: string): Promise<void>;
  /** Stages `source_connection.deleted` for each of the collection's connections in `em` (they go with it). */
  recordDeletion(em: ReturnType<Orm['em']['fork']>, collection: { id: string; readableId: string }): Promise<RecordedEvent[]>;
  /**
   * Records in `em` the index and raw-data cleanup the deletion owes; the function it returns queues
   * it, once `em` is flushed (the record outlives a lost queue message).
   */
  stageCleanup(em: ReturnType<Orm['em']['fork']>, collectionId: string): () => Promise<void>;
}

export interface EmbedderInfo {
  modelName: string;
  dimensions: number;
}

/** Business rules of collections. Every method is scoped to the caller's organization. */
export class CollectionService {
  constructor(
    private readonly orm: Orm,
    private readonly events: EventBus,
    private readonly embedder: EmbedderInfo,
    private readonly connections: CollectionConnections,
  ) {}

  async list(principal: Principal, options: { skip?: number; limit?: number; search?: string | null }): Promise<CollectionView[]> {
    const skip = options.skip ?? 0;
    const limit = options.limit ?? PAGE_LIMIT.default;
    const issues: ValidationIssue[] = [];
    if (!Number.isInteger(skip) || skip < 0) issues.push({ loc: ['skip'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
    if (!Number.isInteger(limit) || limit < PAGE_LIMIT.min || limit > PAGE_LIMIT.max) {
      issues.push({ loc: ['limit'], msg: `Input should be between ${PAGE_LIMIT.min} and ${PAGE_LIMIT.max}`, type: 'range' });
    }
    if (issues.length) throw new ValidationError(issues);

    const where: Record<string, unknown> = { organization: principal.organizationId };
    const search = options.search?.replace(/\0/g, '').trim();
    if (search) {
      const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.$or = [{ name: { $ilike: pattern } }, { readableId: { $ilike: pattern } }];
    }
    const rows = await this.orm.em.fork().find(Collection, where, { orderBy: { createdAt: 'desc', id: 'desc' }, offset: skip, limit });
    return this.views(rows);
  }

  async get(principal: Principal, readableId: string): Promise<CollectionView | null> {
    const row = await this.find(this.orm.em.fork(), principal, readableId);
    return row ? this.view(row) : null;
  }

  async create(principal: Principal, input: { name: string; readableId?: string | null; syncConfig?: SyncConfigPatch | null }): Promise<CollectionView> {
    const issues = [...validateName(input.name)];
    if (input.readableId != null) issues.push(...validateReadableId(input.readableId));
    const syncConfig = input.syncConfig == null ? { value: null, issues: [] } : normalizeSyncConfig(input.syncConfig, ['sync_config']);
    issues.push(...syncConfig.issues);
    if (issues.length) throw new ValidationError(issues);

    const explicitId = input.readableId ?? null;
    // A generated id collides only by bad luck: try a few suffixes before giving up.
    for (let attempt = 0; ; attempt++) {
      const em = this.orm.em.fork();
      const row = em.create(Collection, {
        organization: em.getReference(Organization, principal.organizationId),
        name: input.name,
        readableId: explicitId ?? generateReadableId(input.name),
        syncConfig: syncConfig.value,
        vectorSize: this.embedder.dimensions,
        embeddingModelName: this.embedder.modelName,
        createdByEmail: principal.email,
        modifiedByEmail: principal.email,
      });
      const event = this.record(em, principal, 'collection.created', row);
      try {
        await em.flush();
      } catch (error) {
        if (!(error instanceof UniqueConstraintViolationException)) throw error;
        if (explicitId !== null) throw new ConflictError(`A collection with readable_id "${explicitId}" already exists`);
        if (attempt >= 4) throw new ConflictError('Could not generate a unique readable_id; pass one explicitly');
        continue;
      }
      const view = await this.view(row);
      await this.events.publish({ ...event, subject: view });
      return view;
    }
  }

  /** Only the fields present change; `syncConfig: null` clears it, `name: null` leaves the name. */
  async update(principal: Principal, readableId: string, input: { name?: string | null; syncConfig?: SyncConfigPatch | null }): Promise<CollectionView> {
    const issues = input.name == null ? [] : validateName(input.name);
    const syncConfig = input.syncConfig == null ? null : normalizeSyncConfig(input.syncConfig, ['sync_config']);
    issues.push(...(syncConfig?.issues ?? []));
    if (issues.length) throw new ValidationError(issues);

    const em = this.orm.em.fork();
    const row = await this.find(em, principal, readableId);
    if (!row) throw NotFoundError.of('Collection', readableId);
    const changes = (input.name != null && input.name !== row.name) || input.syncConfig !== undefined;
    if (!changes) return this.view(row); // nothing sent that changes it: no new modified_at, no event
    if (input.name != null) row.name = input.name;
    if (input.syncConfig !== undefined) row.syncConfig = syncConfig?.value ?? null;
    row.modifiedAt = new Date();
    row.modifiedByEmail = principal.email;
    const event = this.record(em, principal, 'collection.updated', row);
    await em.flush();
    const view = await this.view(row);
    await this.events.publish({ ...event, subject: view });
    return view;
  }

  /**
   * Deletes the collection: its syncs are cancelled first, then its records and (through foreign
   * keys) its connections, jobs and entities go; index and raw-data cleanup follow in the worker.
   */
  async delete(principal: Principal, readableId: string): Promise<CollectionView> {
    const em = this.orm.em.fork();
    const row = await this.find(em, principal, readableId);
    if (!row) throw NotFoundError.of('Collection', readableId);
    const view = await this.view(row);
    await this.connections.stopAll(row.id);
    const connectionEvents = await this.connections.recordDeletion(em, row);
    em.remove(row);
    const event = this.record(em, principal, 'collection.deleted', row);
    const queueCleanup = this.connections.stageCleanup(em, row.id);
    await em.flush();
    await queueCleanup();
    for (const connectionEvent of connectionEvents) await this.events.publish({ ...connectionEvent, subject: { id: connectionEvent.payload.source_connection_id } });
    await this.events.publish({ ...event, subject: view });
    return view;
  }

  private async find(em: ReturnType<Orm['em']['fork']>, principal: Principal, readableId: string): Promise<Collection | null> {
    // An id that breaks the rules cannot exist; PostgreSQL would also refuse NUL bytes in a query.
    if (readableId.length > READABLE_ID_MAX_LENGTH || !READABLE_ID_PATTERN.test(readableId)) return null;
    return em.findOne(Collection, { organization: principal.organizationId, readableId });
  }

  /** Stages the event of a change to `collection` in `em`, so that it commits with the change. */
  private record(em: ReturnType<Orm['em']['fork']>, principal: Principal, type: CollectionEventType, collection: Collection): RecordedEvent {
    const timestamp = new Date().toISOString();
    const event: RecordedEvent = {
      id: uuidv7(),
      type,
      organizationId: principal.organizationId,
      occurredAt: timestamp,
      payload: {
        event_type: type,
        organization_id: principal.organizationId,
        timestamp,
        collection_id: collection.id,
        collection_name: collection.name,
        collection_readable_id: collection.readableId,
      },
    };
    this.events.record(em, event);
    return event;
  }

  private async view(row: Collection): Promise<CollectionView> {
    return (await this.views([row]))[0]!;
  }

  private async views(rows: Collection[]): Promise<CollectionView[]> {
    const connections = await this.connections.describe(rows.map((row) => row.id));
    return rows.map((row) => this.toView(row, connections.get(row.id)));
  }

  private toView(row: Collection, connections: { summaries: { shortName: string; name: string }[]; states: ConnectionSyncState[] } | undefined): CollectionView {
    return {
      id: row.id,
      name: row.name,
      readableId: row.readableId,
      syncConfig: row.syncConfig,
      createdAt: row.createdAt,
      modifiedAt: row.modifiedAt,
      organizationId: row.organization.id,
      createdByEmail: row.createdByEmail,
      modifiedByEmail: row.modifiedByEmail,
      status: deriveCollectionStatus(connections?.states ?? []),
      vectorSize: row.vectorSize,
      embeddingModelName: row.embeddingModelName,
      sourceConnectionSummaries: connections?.summaries ?? [],
    };
  }
}

function validateName(name: string): ValidationIssue[] {
  if (/\p{Cc}/u.test(name)) return [{ loc: ['name'], msg: 'String should not contain control characters', type: 'string_pattern_mismatch' }];
  const length = [...name].length;
  if (length < NAME_LENGTH.min || length > NAME_LENGTH.max) {
    return [{ loc: ['name'], msg: `String should have between ${NAME_LENGTH.min} and ${NAME_LENGTH.max} characters`, type: 'string_length' }];
  }
  return [];
}

function validateReadableId(readableId: string): ValidationIssue[] {
  if (readableId.length > READABLE_ID_MAX_LENGTH) {
    return [{ loc: ['readable_id'], msg: `String should have at most ${READABLE_ID_MAX_LENGTH} characters`, type: 'string_too_long' }];
  }
  if (!READABLE_ID_PATTERN.test(readableId)) {
    return [{ loc: ['readable_id'], msg: `String should match pattern '${READABLE_ID_PATTERN.source}'`, type: 'string_pattern_mismatch' }];
  }
  return [];
}

const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** The name lower-cased, non-alphanumerics collapsed to `-`, then `-` and six random letters or digits. */
export function generateReadableId(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{Mn}/gu, '') // accents split off by NFKD: "Ü" → "U"
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, READABLE_ID_MAX_LENGTH - 7)
    .replace(/-+$/, '');
  const suffix = Array.from({ length: 6 }, () => SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)]).join('');
  return slug ? `${slug}-${suffix}` : suffix;
}
