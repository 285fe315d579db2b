import { createHash } from 'node:crypto';
import type { SourceEntity, SourceItem, SourceRun } from '../../connectors/connector.js';
import type { BlobStore } from '../../platform/blobs/blob-store.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import { chunkIdOf, type ChunkRecord, type VectorIndex } from '../../platform/vectors/vector-index.js';
import { chunkText } from './chunker.js';
import type { EntityRow, EntityStore } from './entity-store.js';
import type { EffectiveSyncConfig } from './sync-config-layers.js';

/** The id by which `target_destinations` / `exclude_destinations` name the built-in vector index. */
export const NATIVE_VECTOR_DESTINATION_ID = '00000000-0000-4000-8000-000000000001';

export interface SyncCounts {
  inserted: number;
  updated: number;
  deleted: number;
  skipped: number;
  failed: number;
  chunks: number;
}

export class GuardrailError extends Error {}

/**
 * The entity-count guardrail of one run, per connection. A complete run sees everything the source
 * holds, so what it saw is the count. A run that sees only changes (push batches, change feeds) counts
 * what the connection already stores, plus the entities it adds, minus the stored ones it deletes:
 * otherwise many small batches would grow a connection past the limit.
 */
class EntityGuardrail {
  private stored: number | null = null;
  private added = 0;
  private removed = 0;

  constructor(
    private readonly run: PipelineRun,
    private readonly deps: PipelineDependencies,
  ) {}

  /** Before a batch is written: its new entities and its deletions of stored ones. */
  async check(seen: number, added: number, deletions: string[]): Promise<void> {
    const { run, deps } = this;
    if (run.config.behavior.skipGuardrails) return;
    if (run.source.complete) {
      if (seen > deps.maxEntities) this.refuse(`The source holds more than ${deps.maxEntities} entities`);
      return;
    }
    this.stored ??= (await deps.entities.stats([run.sourceConnectionId])).get(run.sourceConnectionId)?.total ?? 0;
    this.added += added;
    if (deletions.length) this.removed += (await deps.entities.hashes(run.sourceConnectionId, deletions)).size;
    if (this.stored + this.added - this.removed > deps.maxEntities) this.refuse(`The connection would hold more than ${deps.maxEntities} entities`);
  }

  private refuse(what: string): never {
    throw new GuardrailError(`${what} (the guardrail); run with behavior.skip_guardrails to sync anyway`);
  }
}

export interface PipelineDependencies {
  entities: EntityStore;
  vectors: VectorIndex;
  embedder: Embedder;
  blobs: BlobStore;
  /** Entity-count guardrail per connection (bypassed by behavior.skip_guardrails). */
  maxEntities: number;
  batchSize: number;
}

export interface PipelineRun {
  jobId: string;
  /** The connection's sync id (one sync per connection: its id). */
  syncId: string;
  collectionId: string;
  sourceConnectionId: string;
  sourceName: string;
  config: EffectiveSyncConfig;
  source: SourceRun;
  /**
   * The previous run of the connection did not complete: it may have left chunks of entities the
   * entity table does not know (killed between the index write and the table write).
   */
  orphansPossible: boolean;
  signal: AbortSignal;
  /** After each committed batch: the counts so far, and how many of the source's items (from the first) are committed. */
  onProgress(counts: SyncCounts, committedItems: number): Promise<void>;
}

interface ChangedEntity {
  entity: SourceEntity;
  hash: string;
  isNew: boolean;
}

/** A batch between the two stages: what changed, its chunk records (embedded), and what to delete. */
interface PreparedBatch {
  changed: ChangedEntity[];
  records: ChunkRecord[];
  perEntity: Map<string, number>;
  deletions: string[];
  /** The source's items read up to the end of this batch, from the first. */
  itemsThrough: number;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Stable content hash: every field a reader sees, plus the file's bytes. */
export function contentHash(entity: SourceEntity): string {
  return sha256(
    JSON.stringify([
      entity.entityType,
      entity.name,
      entity.breadcrumbs,
      entity.text,
      entity.fields,
      entity.webUrl,
      entity.createdAt?.toISOString() ?? null,
      entity.updatedAt?.toISOString() ?? null,
      entity.language ?? null,
      entity.access ?? null,
      entity.file ? sha256(entity.file.bytes) : null,
    ]),
  );
}

export const rawPrefix = (collectionId: string, sourceConnectionId: string) => `raw/${collectionId}/${sourceConnectionId}`;
const rawEntityKey = (prefix: string, entityId: string) => `${prefix}/entities/${sha256(entityId)}.json`;
const rawFileKey = (prefix: string, entityId: string) => `${prefix}/files/${sha256(entityId)}`;

/** The longest a read batch waits for more items before it is written and its progress published. */
export const PROGRESS_INTERVAL_MS = 250;

/**
 * Pulls a source run through hashing, chunking, embedding and the enabled handlers (vector index,
 * raw data store, entity table), batch by batch. Each batch is committed before the next starts,
 * so a cancelled or killed run keeps what it finished.
 */
export class SyncPipeline {
  constructor(private readonly deps: PipelineDependencies) {}

  /** The model and vector size the pipeline writes with (the embedder's). */
  get embedding(): Pick<Embedder, 'modelName' | 'dimensions'> {
    return this.deps.embedder;
  }

  async run(run: PipelineRun): Promise<SyncCounts> {
    const counts: SyncCounts = { inserted: 0, updated: 0, deleted: 0, skipped: 0, failed: 0, chunks: 0 };
    const seen = new Set<string>();
    const guardrail = new EntityGuardrail(run, this.deps);
    // Two stages: while batch N is written (index, raw store, entity table), batch N+1 is read,
    // hashed, chunked and embedded (on the embedder's threads). Writes stay in batch order, one at a time.
    let writing: Promise<void> | null = null;
    let itemsRead = 0;
    const flush = async (items: SourceItem[]) => {
      itemsRead += items.length;
      const prepared = { ...(await this.prepareBatch(run, items, counts, seen, guardrail, writing)), itemsThrough: itemsRead };
      if (writing) await writing;
      writing = this.writeBatch(run, prepared, counts);
      writing.catch(() => undefined); // awaited before the next write or at the end; not unhandled meanwhile
    };
    try {
      let batch: SourceItem[] = [];
      let batchStarted = Date.now();
      for await (const item of run.source.items) {
        if (batch.length === 0) batchStarted = Date.now();
        batch.push(item);
        // A slow source flushes a part-filled batch, so progress shows while it is read, not once per batch.
        if (batch.length >= this.deps.batchSize || Date.now() - batchStarted >= PROGRESS_INTERVAL_MS) {
          await flush(batch);
          batch = [];
        }
      }
      if (batch.length) await flush(batch);
    } catch (error) {
      // A failed or cancelled run returns only once nothing of it is still writing.
      await (writing as Promise<void> | null)?.catch(() => undefined);
      throw error;
    }
    if (writing) await writing;
    if (run.source.complete) {
      run.signal.throwIfAborted();
      const gone = (await this.deps.entities.allIds(run.sourceConnectionId)).filter((id) => !seen.has(id));
      for (let start = 0; start < gone.length; start += this.deps.batchSize) {
        await this.deleteEntities(run, gone.slice(start, start + this.deps.batchSize), counts);
      }
      await run.onProgress(counts, itemsRead);
    }
    if (this.vectorsEnabled(run.config)) await this.deps.vectors.optimize(run.collectionId);
    return counts;
  }

  private vectorsEnabled(config: EffectiveSyncConfig): boolean {
    const { destinations, handlers } = config;
    if (destinations.skipVectorDb || !handlers.enableVectorHandlers) return false;
    if (destinations.targetDestinations && !destinations.targetDestinations.includes(NATIVE_VECTOR_DESTINATION_ID)) return false;
    return !destinations.excludeDestinations?.includes(NATIVE_VECTOR_DESTINATION_ID);
  }

  /**
   * Stage one: what changed in the batch, chunked and embedded. `writing` is the previous batch's
   * write, still in flight: an entity met again in this batch waits for it, so its stored hash is current.
   */
  private async prepareBatch(
    run: PipelineRun,
    items: SourceItem[],
    counts: SyncCounts,
    seen: Set<string>,
    guardrail: EntityGuardrail,
    writing: Promise<void> | null,
  ): Promise<Omit<PreparedBatch, 'itemsThrough'>> {
    run.signal.throwIfAborted();
    const entities: SourceEntity[] = [];
    const deletions: string[] = [];
    for (const item of items) {
      if ('keep' in item) {
        seen.add(item.keep);
        counts.skipped++;
      } else if ('delete' in item) {
        deletions.push(item.delete);
      } else {
        entities.push(item);
      }
    }
    // The same id twice in one batch: the later version wins.
    const latest = new Map(entities.map((entity) => [entity.entityId, entity]));
    if (writing && [...latest.keys()].some((id) => seen.has(id))) await writing;
    for (const id of latest.keys()) seen.add(id);

    const known = await this.deps.entities.hashes(run.sourceConnectionId, [...latest.keys()]);
    const changed: ChangedEntity[] = [];
    for (const entity of latest.values()) {
      const hash = contentHash(entity);
      const previous = known.get(entity.entityId);
      if (previous === hash && !run.config.behavior.skipHashComparison) counts.skipped++;
      else changed.push({ entity, hash, isNew: previous === undefined });
    }
    const deleting = deletions.filter((id) => !latest.has(id));
    await guardrail.check(seen.size, latest.size - known.size, deleting);
    const chunks = this.vectorsEnabled(run.config) ? await this.embedChunks(run, changed) : { records: [], perEntity: new Map<string, number>() };
    return { changed, deletions: deleting, ...chunks };
  }

  /** Stage two: the handlers write the batch; the entity table last, so a crash never records unwritten chunks. */
  private async writeBatch(run: PipelineRun, batch: PreparedBatch, counts: SyncCounts): Promise<void> {
    run.signal.throwIfAborted();
    const { changed, records, perEntity } = batch;
    // The handlers are independent: the raw store's file writes overlap the index write.
    await Promise.all([
      this.writeChunks(run, changed, records),
      run.config.handlers.enableRawDataHandler ? this.writeRaw(run, changed.map((c) => c.entity)) : undefined,
    ]);
    counts.chunks += records.length;
    await this.deps.entities.upsert(
      run.sourceConnectionId,
      run.collectionId,
      run.jobId,
      changed.map(({ entity, hash }): EntityRow => ({
        entityId: entity.entityId,
        entityType: entity.entityType,
        name: entity.name,
        contentHash: hash,
        chunkCount: perEntity.get(entity.entityId) ?? 0,
        breadcrumbs: entity.breadcrumbs,
        fields: run.config.handlers.enableEntityDbHandler ? entity.fields : null,
        sourceCreatedAt: entity.createdAt,
        sourceUpdatedAt: entity.updatedAt,
      })),
    );
    for (const { isNew } of changed) {
      if (isNew) counts.inserted++;
      else counts.updated++;
    }
    await this.deleteEntities(run, batch.deletions, counts);
    await run.onProgress(counts, batch.itemsThrough);
  }

  private async embedChunks(run: PipelineRun, changed: ChangedEntity[]): Promise<{ records: ChunkRecord[]; perEntity: Map<string, number> }> {
    const perEntity = new Map<string, number>();
    const pending: { entity: SourceEntity; index: number; text: string }[] = [];
    for (const { entity } of changed) {
      const pieces = chunkText(entity.text, entity.language);
      const texts = pieces.length ? pieces : [entity.name];
      texts.forEach((text, index) => pending.push({ entity, index, text }));
      perEntity.set(entity.entityId, texts.length);
    }
    if (pending.length === 0) return { records: [], perEntity };
    // The name and location give each chunk its context in the embedding.
    const vectors = await this.deps.embedder.embed(
      pending.map(({ entity, text }) => `${entity.name}\n${entity.breadcrumbs.map((b) => b.name).join(' / ')}\n${text}`),
      run.signal,
    );
    const records: ChunkRecord[] = pending.map(({ entity, index, text }, i) => ({
      chunkId: chunkIdOf(run.sourceConnectionId, entity.entityId, index),
      sourceConnectionId: run.sourceConnectionId,
      entityId: entity.entityId,
      chunkIndex: index,
      name: entity.name,
      text,
      vector: vectors[i]!,
      entityType: entity.entityType,
      sourceName: run.sourceName,
      breadcrumbs: entity.breadcrumbs.map((b) => ({ entity_id: b.entityId, name: b.name, entity_type: b.entityType })),
      createdAt: entity.createdAt,
      updatedAt: entity.updatedAt,
      webUrl: entity.webUrl,
      // Files are downloadable where the source serves them; the raw data store keeps a copy for replays.
      url: entity.file ? entity.webUrl : null,
      syncId: run.syncId,
      syncJobId: run.jobId,
      rawSourceFields: entity.fields,
      access: entity.access ?? { viewers: null, isPublic: null },
    }));
    return { records, perEntity };
  }

  private async writeChunks(run: PipelineRun, changed: ChangedEntity[], records: ChunkRecord[]): Promise<void> {
    if (!this.vectorsEnabled(run.config) || changed.length === 0) return;
    // Updated entities' old chunks go; new entities may have orphan chunks only after an interrupted run.
    const stale = changed.filter((c) => !c.isNew || run.orphansPossible).map((c) => c.entity.entityId);
    if (stale.length) await this.deps.vectors.deleteEntities(run.collectionId, run.sourceConnectionId, stale);
    if (records.length) await this.deps.vectors.add(run.collectionId, records);
  }

  private async writeRaw(run: PipelineRun, entities: SourceEntity[]): Promise<void> {
    const prefix = rawPrefix(run.collectionId, run.sourceConnectionId);
    await Promise.all(
      entities.map(async (entity) => {
        const { file, ...rest } = entity;
        if (file) await this.deps.blobs.put(rawFileKey(prefix, entity.entityId), file.bytes);
        const record = { ...rest, file: file ? { name: file.name, mimeType: file.mimeType, size: file.size } : null };
        await this.deps.blobs.put(rawEntityKey(prefix, entity.entityId), JSON.stringify(record));
      }),
    );
  }

  private async deleteEntities(run: PipelineRun, entityIds: string[], counts: SyncCounts): Promise<void> {
    if (entityIds.length === 0) return;
    if (this.vectorsEnabled(run.config)) await this.deps.vectors.deleteEntities(run.collectionId, run.sourceConnectionId, entityIds);
    const prefix = rawPrefix(run.collectionId, run.sourceConnectionId);
    await Promise.all(entityIds.flatMap((id) => [this.deps.blobs.delete(rawEntityKey(prefix, id)), this.deps.blobs.delete(rawFileKey(prefix, id))]));
    counts.deleted += await this.deps.entities.delete(run.sourceConnectionId, entityIds);
  }
}

/** A run that replays the raw data store instead of calling the source (behavior.replay_from_arf). */
export function replayFromRawStore(blobs: BlobStore, collectionId: string, sourceConnectionId: string): SourceRun {
  const prefix = `${rawPrefix(collectionId, sourceConnectionId)}/entities`;
  return {
    complete: true,
    nextCursor: () => null,
    items: (async function* () {
      for await (const key of blobs.list(prefix)) {
        const stored = await blobs.get(key);
        if (!stored) continue;
        const record = JSON.parse(stored.toString('utf8')) as Omit<SourceEntity, 'file' | 'createdAt' | 'updatedAt'> & {
          createdAt: string | null;
          updatedAt: string | null;
          file: { name: string; mimeType: string; size: number } | null;
        };
        const bytes = record.file ? await blobs.get(rawFileKey(rawPrefix(collectionId, sourceConnectionId), record.entityId)) : null;
        const { file, createdAt, updatedAt, ...rest } = record;
        yield {
          ...rest,
          createdAt: createdAt ? new Date(createdAt) : null,
          updatedAt: updatedAt ? new Date(updatedAt) : null,
          ...(file && bytes ? { file: { ...file, bytes } } : {}),
        } satisfies SourceEntity;
      }
    })(),
  };
}
