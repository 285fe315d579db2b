import type { SourceItem } from '../../connectors/connector.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import { MAX_JSON_DEPTH } from '../../shared/json-depth.js';
import { EntityGuardrail } from './entity-guardrail.js';
import { EntityIdSet } from './entity-id-set.js';
import { BatchStages, type PreparedBatch, type RunIds, vectorsEnabled } from './pipeline-batch.js';
import type { PipelineDependencies, PipelineRun } from './pipeline-inputs.js';
import { RawStore } from './raw-store.js';
import { NO_COUNTS, type SyncCounts } from './sync-counts.js';

/**
 * Prepared batches (read, hashed, chunked and embedded) that may wait for the index and the entity
 * table, in bytes of text, fields, vectors and files held (see heldBytes): an index write that stalls
 * for seconds (a compaction) does not stop reading and embedding, and large entities do not pile up
 * behind a slow index or a slow database. A batch of 2,000 small stub entities counts 6.1 MiB (3.7
 * before the JSON its hashes read was held for the raw data store; its objects take several times
 * that in the heap): two are held at most, and the next one read, as many
 * as the stages held before there was a bound, while one more is read from the source (not counted:
 * the source's entities, before hashing and embedding); smaller batches (a slow source's part-filled ones) go
 * further ahead. Peak RSS of bench:memory's 100,000-entity sync while searching, compiled server,
 * two runs each, one sitting (base: 4c79d99, before read-ahead): base 659 / 681 MiB; 6 MiB 727 / 657; 8 MiB
 * 692 / 652; 12 MiB 751 / 751 (past the 700). The sync's rate did not move with the bound
 * (6,531-6,632 entities/s, base 6,477 / 6,551).
 */
export const READ_AHEAD_BYTES = 8 * 2 ** 20;

/** What a prepared batch holds until it is committed, roughly: its entities (text, fields and the rest) and files, its chunks' text and vectors (UTF-16 strings). */
function heldBytes(batch: Omit<PreparedBatch, 'itemsThrough'>): number {
  let bytes = 0;
  // The JSON its hash read: the entity's text, fields and the rest, roughly, without its file (held too, for the raw data store).
  for (const { entity, content } of batch.changed) bytes += content.length * 4 + (entity.file?.bytes.byteLength ?? 0);
  for (const record of batch.records) bytes += record.text.length * 2 + record.vector.byteLength;
  return bytes;
}

/** The longest a read batch waits for more items before it is written and its progress published. */
export const PROGRESS_INTERVAL_MS = 250;

/**
 * Text, fields and file bytes (text as UTF-16) at which a batch being read ends before its count
 * (CATCHMENT_SYNC_BATCH_SIZE): the text of 2,000 entities of ~1,000 characters. A batch of small entities ends at
 * its count; one of large ones (documents of tens of KB, files) at this, so that a larger count does
 * not multiply what one batch holds through its stages.
 */
export const BATCH_BYTES = 4 * 2 ** 20;

/** What an item adds to its batch against BATCH_BYTES: its text and fields (UTF-16) and its file. */
function itemBytes(item: SourceItem): number {
  return 'entityId' in item ? (item.text.length + valueChars(item.fields, 0)) * 2 + (item.file?.bytes.byteLength ?? 0) : 0;
}

/**
 * The characters of a value's strings and keys, and one for any other scalar and for each array or
 * object besides its contents: what a source's fields (a row's columns, an API's properties:
 * sometimes large text or JSON) weigh, roughly, without serializing them at read. Binary values count
 * their bytes. Walked to MAX_JSON_DEPTH levels; what nests deeper (no source's fields do) counts as one.
 */
function valueChars(value: unknown, depth: number): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object' || depth >= MAX_JSON_DEPTH) return 1;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value.byteLength / 2;
  let chars = 1;
  if (Array.isArray(value)) for (const element of value) chars += valueChars(element, depth + 1);
  else for (const [key, property] of Object.entries(value)) chars += key.length + valueChars(property, depth + 1);
  return chars;
}

/**
 * Pulls a source run through hashing, chunking, embedding and the enabled handlers (vector index,
 * raw data store, entity table), batch by batch, in order. Later batches are read and embedded while
 * earlier ones are written (see run); a cancelled or killed run keeps the batches it committed.
 */
export class SyncPipeline {
  private readonly stages: BatchStages;

  constructor(private readonly deps: PipelineDependencies) {
    this.stages = new BatchStages(deps);
  }

  /** The model and vector size the pipeline writes with (the embedder's). */
  get embedding(): Pick<Embedder, 'modelName' | 'dimensions'> {
    return this.deps.embedder;
  }

  async run(run: PipelineRun): Promise<SyncCounts> {
    const counts: SyncCounts = { ...(run.startCounts ?? NO_COUNTS) };
    const ids: RunIds = { seen: new EntityIdSet(), deleted: new EntityIdSet(), seenAllStored: true, startedEmpty: !(await this.deps.entities.holdsAny(run.sourceConnectionId)) };
    const guardrail = new EntityGuardrail({
      skip: run.config.behavior.skipGuardrails,
      complete: run.source.complete,
      sourceConnectionId: run.sourceConnectionId,
      maxEntities: this.deps.maxEntities,
      entities: this.deps.entities,
    });
    const raw = new RawStore(this.deps.blobs, run.collectionId, run.sourceConnectionId);
    const index = { written: false };
    // Three stages, each in batch order: batches are written to the entity table (the database) one
    // at a time; each goes to the index and the raw data store before that, one at a time too; and the
    // batches after them are read, hashed, chunked and embedded (on the embedder's threads), as many as
    // READ_AHEAD_BYTES holds. A batch's rows follow its chunks, so the index may be several batches
    // ahead of the table (a run that fails leaves orphansPossible to the next one).
    const readAheadBytes = this.deps.readAheadBytes ?? READ_AHEAD_BYTES;
    /** The batches not yet committed (the oldest first), with the bytes each holds; `stored` settles once its index write has. */
    const held: { stored: Promise<void>; committed: Promise<void>; bytes: number }[] = [];
    let committing: Promise<void> | null = null;
    // The first failure of a store or a commit, recorded as it happens: no batch starts its index write after it.
    let failure: { error: unknown } | null = null;
    let itemsRead = 0;
    const storeAfter = async (previous: Promise<void> | undefined, batch: PreparedBatch) => {
      // Once the batch before it has settled: a failure it met is recorded by then (its own handler below ran first).
      await previous?.catch(() => undefined);
      if (failure) throw failure.error;
      await this.stages.storeBatch(run, raw, index, batch);
    };
    /** The batch read before: prepared, and its store and commit queued (see `queue`). */
    let preparing: Promise<void> | null = null;
    // A batch is prepared while the next one is read from the source: its database reads and embedding
    // run off this thread, and the source's work fills that wait.
    const flush = async (items: SourceItem[]) => {
      await preparing;
      // A cancelled or failed run reads no further batch (the one before may have settled meanwhile).
      run.signal.throwIfAborted();
      if (failure) throw failure.error;
      preparing = queue(items);
      preparing.catch(() => undefined); // awaited by the next flush, or at the end
    };
    const queue = async (items: SourceItem[]) => {
      itemsRead += items.length;
      const prepared = { ...(await this.stages.prepareBatch(run, items, ids, guardrail, committing)), itemsThrough: itemsRead };
      const bytes = heldBytes(prepared);
      // One batch may always wait behind the one being written (as without read-ahead); more while they fit.
      while (held.length > 1 && held.reduce((sum, batch) => sum + batch.bytes, bytes) > readAheadBytes) await held[0]!.committed.catch(() => undefined);
      if (failure) throw failure.error;
      const stored = storeAfter(held.at(-1)?.stored, prepared);
      stored.catch((error: unknown) => {
        failure ??= { error };
      });
      // Settles only after the previous batch's commit has: a failed or cancelled run ends once none is running.
      committing = Promise.allSettled([committing, stored]).then(async ([previous, store]) => {
        if (previous.status === 'rejected') throw previous.reason;
        if (store.status === 'rejected') throw store.reason;
        const countsThrough = await this.stages.commitBatch(run, prepared, counts);
        await run.onProgress(counts, prepared.itemsThrough, countsThrough);
      });
      const waiting = { stored, committed: committing, bytes };
      held.push(waiting);
      // Awaited at the end; a failure stops the run at its next batch.
      committing.then(
        () => void held.splice(held.indexOf(waiting), 1),
        (error: unknown) => {
          failure ??= { error };
          held.splice(held.indexOf(waiting), 1);
        },
      );
    };
    try {
      let batch: SourceItem[] = [];
      let batchBytes = 0;
      let batchStarted = Date.now();
      for await (const item of run.source.items) {
        if (batch.length === 0) batchStarted = Date.now();
        batch.push(item);
        batchBytes += itemBytes(item);
        // A slow source flushes a part-filled batch, so progress shows while it is read, not once per batch.
        if (batch.length >= this.deps.batchSize || batchBytes >= BATCH_BYTES || Date.now() - batchStarted >= PROGRESS_INTERVAL_MS) {
          await flush(batch);
          batch = [];
          batchBytes = 0;
        }
      }
      if (batch.length) await flush(batch);
      await preparing;
      if (committing) await committing;
    } catch (error) {
      // A failed or cancelled run returns only once nothing of it is still writing.
      await (preparing as Promise<void> | null)?.catch(() => undefined);
      await (committing as Promise<void> | null)?.catch(() => undefined);
      // A failed run's rows are in the index but not in its full-text index, which a table nobody
      // searches only gets at its next compaction (by growth: up to 255 writes later): every keyword
      // search would scan them until then. A cancelled one (or a worker shutting down) is not
      // optimized: the keyword searches that scan its rows queue their compaction once they have cost
      // as much (SCANNED_ROWS_PER_TABLE_ROW), and the connection's next run optimizes at its end.
      if (!run.signal.aborted && index.written && vectorsEnabled(run.config)) this.optimizeInBackground(run.collectionId, run.onIndexOptimized);
      throw error;
    }
    // A run that began with none stored and stored every id it met holds exactly those: the count
    // (a scan of the connection's rows, ~80 ms at 111,000 in PGlite) would say the same.
    let stored = ids.startedEmpty && ids.seenAllStored ? ids.seen.size : await this.deps.entities.count(run.sourceConnectionId);
    if (run.source.complete) {
      run.signal.throwIfAborted();
      // When every id met is stored, as many stored rows as ids met leaves none the source no longer
      // has: the pages of stored ids are not read (~0.5 s at 111,000 entities on the embedded database).
      if (!ids.seenAllStored || stored !== ids.seen.size) stored -= await this.deleteUnseen(run, raw, index, ids, counts);
      await run.onProgress(counts, itemsRead, () => counts);
    }
    await raw.compactIfWasteful(stored);
    // A run that left the index as the previous, complete, run had optimized it has nothing to optimize.
    if (vectorsEnabled(run.config) && (index.written || run.orphansPossible || run.optimizeOwed)) this.optimizeInBackground(run.collectionId, run.onIndexOptimized);
    else await run.onIndexOptimized();
    return counts;
  }

  /**
   * The optimize running in the background (see optimizeInBackground) and those queued behind it, or
   * null: one at a time, as a compaction's memory grows with its table and several at once add theirs
   * up (runs of several collections ending together, a worker starting with optimizes owed for several).
   */
  private optimizing: Promise<void> | null = null;

  /**
   * Optimizes the collection's index (compaction, the full-text and vector indexes brought up to its
   * rows) once the run has ended, without holding the run up: its rows are searchable as soon as they
   * are written, searches read those not yet indexed one by one until the optimize ends (nothing
   * missed, only slower), and the collection's next writes wait behind it (the index's per-table lock). It
   * took 1.6–2.6 s of a 100,000-entity sync's 8 s and tens of seconds at 1,000,000, which its job's
   * COMPLETED, its `sync.completed` webhook and the worker's slot waited for. `onOptimized` records it
   * done (SyncJob.indexOptimizedAt); one not done (failed, skipped as the index closes, or its process
   * stopped) is owed: the connection's next run and the worker's next start do it. One runs at a time
   * (see `optimizing`); a queued one has not asked the index for anything yet.
   */
  optimizeInBackground(collectionId: string, onOptimized: () => Promise<void>): void {
    const optimize = () =>
      this.deps.vectors
        .optimize(collectionId)
        .then(onOptimized)
        .catch((error: unknown) => this.deps.logger.warn({ collectionId, err: error }, "the collection's index optimize after a sync was not done; the connection's next run or the worker's next start does it"));
    const next = this.optimizing ? this.optimizing.then(optimize) : optimize();
    this.optimizing = next;
    void next.then(() => {
      if (this.optimizing === next) this.optimizing = null;
    });
  }

  /** The end of a complete run: what the connection stores and the run did not meet goes. How many rows went. */
  private async deleteUnseen(run: PipelineRun, raw: RawStore, index: { written: boolean }, ids: RunIds, counts: SyncCounts): Promise<number> {
    let deleted = 0;
    for await (const stored of this.deps.entities.ids(run.sourceConnectionId, this.deps.batchSize)) {
      const deletions = stored.filter((id) => !ids.seen.has(id));
      if (deletions.length === 0) continue;
      await this.stages.deleteChunks(run, index, deletions);
      await raw.write([], deletions);
      deleted += (await this.deps.entities.delete(run.sourceConnectionId, deletions)).length;
    }
    counts.deleted += deleted;
    return deleted;
  }
}
