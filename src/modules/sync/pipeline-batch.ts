import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { SourceEntity, SourceItem } from '../../connectors/connector.js';
import { chunkIdOf, type ChunkRecord } from '../../platform/vectors/vector-index.js';
import { chunkText } from './chunker.js';
import { type HashedEntity, hashedContent } from './content-hash.js';
import type { EntityGuardrail } from './entity-guardrail.js';
import type { EntityIdSet } from './entity-id-set.js';
import type { EntityRow } from './entity-store.js';
import type { PipelineDependencies, PipelineRun } from './pipeline-inputs.js';
import type { RawStore } from './raw-store.js';
import type { EffectiveSyncConfig } from './sync-config-layers.js';
import { BatchOutcomes, type SyncCounts } from './sync-counts.js';

/** The id by which `target_destinations` / `exclude_destinations` name the built-in vector index. */
export const NATIVE_VECTOR_DESTINATION_ID = '00000000-0000-4000-8000-000000000001';

interface ChangedEntity extends HashedEntity {
  hash: string;
  isNew: boolean;
}

/** The entity ids a run met so far: yielded (or kept), and deleted by the source's items. */
export interface RunIds {
  seen: EntityIdSet;
  deleted: EntityIdSet;
  /**
   * Every id in `seen` is stored once the run's batches are: the source yielded only entities (each one
   * written, or matched by its stored hash), no `keep` (an id the run trusts to be stored) and no deletion.
   */
  seenAllStored: boolean;
  /**
   * The connection held no entity when the run began. A connection runs one job at a time, so a row
   * it stores is then one this run wrote, of an id in `seen`: the stored hashes of ids not met before
   * need not be read (a probe of the table's index for each, ~3 µs an entity in PGlite).
   */
  startedEmpty: boolean;
}

/** A batch between the stages: what changed, its chunk records (embedded), and what to delete. */
export interface PreparedBatch {
  changed: ChangedEntity[];
  records: ChunkRecord[];
  perEntity: Map<string, number>;
  deletions: string[];
  /** What each of the batch's items came to (counted as the batch commits). */
  outcomes: BatchOutcomes;
  /** The source's items read up to the end of this batch, from the first. */
  itemsThrough: number;
}

/** Entities hashed between which the event loop turns: a query's messages are sent and answered meanwhile. */
const HASHED_BETWEEN_TURNS = 200;

/**
 * The entities whose content hash differs from the stored one (every one with `compareAll`), and the
 * stored hashes. They are read (`reading`, started before) while this thread hashes: the event loop
 * turns every HASHED_BETWEEN_TURNS entities, so the query's round trips (its transaction's begin, the
 * query, the commit; the embedded database runs in a thread of its own) go on meanwhile. An entity
 * hashed once they are in is compared at once, and the JSON of an unchanged one let go.
 */
async function changedEntities(entities: Iterable<SourceEntity>, reading: Promise<Map<string, string>>, compareAll: boolean): Promise<{ changed: ChangedEntity[]; known: Map<string, string> }> {
  let known: Map<string, string> | null = null;
  void reading.then(
    (hashes) => {
      known = hashes;
    },
    () => undefined, // awaited below
  );
  const changed: ChangedEntity[] = [];
  const compare = (hashed: ChangedEntity, stored: Map<string, string>) => {
    const previous = stored.get(hashed.entity.entityId);
    hashed.isNew = previous === undefined;
    if (previous !== hashed.hash || compareAll) changed.push(hashed);
  };
  /** Hashed before the stored hashes came, in the entities' order (`changed` keeps it). */
  let waiting: ChangedEntity[] = [];
  const compareWaiting = (stored: Map<string, string>) => {
    for (const hashed of waiting) compare(hashed, stored);
    waiting = [];
  };
  let count = 0;
  try {
    for (const entity of entities) {
      if (++count % HASHED_BETWEEN_TURNS === 0) await yieldToEventLoop();
      const hashed = { entity, ...hashedContent(entity), isNew: false };
      if (known) {
        compareWaiting(known);
        compare(hashed, known);
      } else {
        waiting.push(hashed);
      }
    }
  } catch (error) {
    await reading.catch(() => undefined); // the run ends with no query of its own still going
    throw error;
  }
  const stored = await reading;
  compareWaiting(stored);
  return { changed, known: stored };
}

export function vectorsEnabled(config: EffectiveSyncConfig): boolean {
  const { destinations, handlers } = config;
  if (destinations.skipVectorDb || !handlers.enableVectorHandlers) return false;
  if (destinations.targetDestinations && !destinations.targetDestinations.includes(NATIVE_VECTOR_DESTINATION_ID)) return false;
  return !destinations.excludeDestinations?.includes(NATIVE_VECTOR_DESTINATION_ID);
}

/**
 * The three stages a batch goes through, in this order (see SyncPipeline.run): prepared, stored (the
 * index and the raw data store), committed (the entity table).
 */
export class BatchStages {
  constructor(private readonly deps: Pick<PipelineDependencies, 'entities' | 'vectors' | 'embedder'>) {}

  /**
   * Stage one: what changed in the batch, chunked and embedded. `writing` is the earlier batches'
   * writes, still in flight: an entity met again (or deleted before) waits for them, so its stored hash is current.
   */
  async prepareBatch(
    run: PipelineRun,
    items: SourceItem[],
    ids: RunIds,
    guardrail: EntityGuardrail,
    writing: Promise<void> | null,
  ): Promise<Omit<PreparedBatch, 'itemsThrough'>> {
    run.signal.throwIfAborted();
    const entities: SourceEntity[] = [];
    const deletions: string[] = [];
    const outcomes = new BatchOutcomes();
    /** Where in the batch each entity (the last of an id) came. */
    const entityAt = new Map<string, number>();
    for (const item of items) {
      if ('keep' in item) {
        ids.seen.add(item.keep);
        ids.seenAllStored = false;
        outcomes.add('skipped');
      } else if ('delete' in item) {
        ids.seenAllStored = false;
        deletions.push(item.delete);
        outcomes.addDeletion(item.delete);
      } else {
        const earlier = entityAt.get(item.entityId);
        if (earlier !== undefined) outcomes.set(earlier, 'superseded');
        entityAt.set(item.entityId, outcomes.size);
        entities.push(item);
        outcomes.add('skipped'); // until its hash says otherwise (below)
      }
    }
    // The same id twice in one batch: the later version wins.
    const latest = new Map(entities.map((entity) => [entity.entityId, entity]));
    const metBefore = [...latest.keys()].filter((id) => ids.seen.has(id));
    if (writing && (metBefore.length > 0 || [...latest.keys()].some((id) => ids.deleted.has(id)))) await writing;
    for (const id of latest.keys()) ids.seen.add(id);

    const reading = this.deps.entities.hashes(run.sourceConnectionId, ids.startedEmpty ? metBefore : [...latest.keys()]);
    const { changed, known } = await changedEntities(latest.values(), reading, run.config.behavior.skipHashComparison);
    // A deletion of an id the batch also yields is not one: the entity wins.
    outcomes.supersedeDeletions(latest);
    const deleting = deletions.filter((id) => !latest.has(id));
    for (const id of deleting) ids.deleted.add(id);
    await guardrail.check(ids.seen.size, latest.size - known.size, deleting);
    const chunks = vectorsEnabled(run.config) ? await this.embedChunks(run, changed) : { records: [], perEntity: new Map<string, number>() };
    for (const { entity, isNew } of changed) outcomes.set(entityAt.get(entity.entityId)!, isNew ? 'inserted' : 'updated', chunks.perEntity.get(entity.entityId) ?? 0);
    return { changed, deletions: deleting, outcomes, ...chunks };
  }

  /**
   * Stage two: the index and the raw data store write the batch (independent: the raw store's writes
   * overlap the index's). Settles once both have: when one fails, the other's write still ends before
   * the run does (a next run must not meet this one's index write still going).
   */
  async storeBatch(run: PipelineRun, raw: RawStore, index: { written: boolean }, batch: PreparedBatch): Promise<void> {
    run.signal.throwIfAborted();
    const { changed, records, deletions } = batch;
    const writes = await Promise.allSettled([
      (async () => {
        await this.writeChunks(run, index, changed, records);
        await this.deleteChunks(run, index, deletions);
      })(),
      raw.write(run.config.handlers.enableRawDataHandler ? changed : [], deletions),
    ]);
    for (const write of writes) if (write.status === 'rejected') throw write.reason;
  }

  /**
   * Stage three: the entity table, after the batch's chunks, so a crash never records unwritten chunks
   * (progress follows). Adds the batch to `counts`, and returns the counts as of any of its items.
   */
  async commitBatch(run: PipelineRun, batch: PreparedBatch, counts: SyncCounts): Promise<(item: number) => SyncCounts> {
    const { changed, perEntity, outcomes, itemsThrough } = batch;
    await this.deps.entities.upsert(
      run.sourceConnectionId,
      run.collectionId,
      run.jobId,
      changed.map(({ entity, hash, isNew }): EntityRow => ({
        entityId: entity.entityId,
        entityType: entity.entityType,
        name: entity.name,
        contentHash: hash,
        chunkCount: perEntity.get(entity.entityId) ?? 0,
        breadcrumbs: entity.breadcrumbs,
        fields: run.config.handlers.enableEntityDbHandler ? entity.fields : null,
        sourceCreatedAt: entity.createdAt,
        sourceUpdatedAt: entity.updatedAt,
        isNew,
      })),
    );
    outcomes.settleDeletions(new Set(await this.deps.entities.delete(run.sourceConnectionId, batch.deletions)));
    const before = { ...counts };
    Object.assign(counts, outcomes.countsThrough(before, outcomes.size));
    const firstItem = itemsThrough - outcomes.size;
    return (item) => outcomes.countsThrough(before, item - firstItem);
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

  private async writeChunks(run: PipelineRun, index: { written: boolean }, changed: ChangedEntity[], records: ChunkRecord[]): Promise<void> {
    if (!vectorsEnabled(run.config) || changed.length === 0) return;
    // Updated entities' old chunks go; new entities may have orphan chunks only after an interrupted run.
    const stale = changed.filter((c) => !c.isNew || run.orphansPossible).map((c) => c.entity.entityId);
    await this.deleteChunks(run, index, stale);
    if (records.length) await this.deps.vectors.add(run.collectionId, records);
    index.written = true;
  }

  async deleteChunks(run: PipelineRun, index: { written: boolean }, entityIds: string[]): Promise<void> {
    if (entityIds.length === 0 || !vectorsEnabled(run.config)) return;
    await this.deps.vectors.deleteEntities(run.collectionId, run.sourceConnectionId, entityIds);
    index.written = true;
  }
}
