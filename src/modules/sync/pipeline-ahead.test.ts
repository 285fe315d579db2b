import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SourceEntity } from '../../connectors/connector.js';
import { stubEntity } from '../../connectors/stub/index.js';
import { type BlobStore, FileBlobStore } from '../../platform/blobs/blob-store.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { VectorIndex } from '../../platform/vectors/vector-index.js';
import type { EntityRow, EntityStore } from './entity-store.js';
import { BATCH_BYTES, SyncPipeline } from './pipeline.js';
import { MemoryEntities, ScriptedIndex } from './pipeline-testing.js';
import { waitFor } from '../../../test/support/wait.js';
import { layerSyncConfigs } from './sync-config-layers.js';

const batchSize = 10;
const settings = { seed: 1, size_mix: 'small', hierarchy_depth: 0, code_files: false, revision: 0 } as const;
const firstOfEachBatch = (batches: number) => Array.from({ length: batches }, (_, batch) => `stub-${batch * batchSize}`);

describe('the sync pipeline reads and embeds ahead of the index', () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-pipeline-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  function start(options: {
    entities: MemoryEntities;
    index: ScriptedIndex;
    readAheadBytes: number;
    batches: number;
    entity?: (i: number) => SourceEntity;
    blobs?: BlobStore;
    warnings?: unknown[];
    optimizeOwed?: boolean;
    /** Counts the run's onIndexOptimized calls. */
    marks?: { count: number };
    batchSize?: number;
    /** Counts the entities the source has yielded. */
    read?: { count: number };
    signal?: AbortSignal;
  }) {
    let embedded = 0;
    const embedder: Embedder = {
      modelName: 'test',
      dimensions: 4,
      embed: async (texts) => {
        embedded++;
        return texts.map(() => new Float32Array([1, 0, 0, 0]));
      },
      close: async () => undefined,
    };
    const pipeline = new SyncPipeline({
      entities: options.entities as unknown as EntityStore,
      vectors: options.index as unknown as VectorIndex,
      embedder,
      blobs: options.blobs ?? new FileBlobStore(directory),
      maxEntities: 10_000,
      batchSize: options.batchSize ?? batchSize,
      readAheadBytes: options.readAheadBytes,
      logger: { warn: (fields: unknown) => options.warnings?.push(fields) },
    });
    const entity = options.entity ?? ((i: number) => stubEntity(i, settings));
    const running = pipeline.run({
      jobId: 'job',
      syncId: 'connection',
      collectionId: 'collection',
      sourceConnectionId: 'connection',
      sourceName: 'stub',
      config: layerSyncConfigs(),
      source: {
        complete: true,
        nextCursor: () => null,
        items: (async function* () {
          for (let i = 0; i < options.batches * (options.batchSize ?? batchSize); i++) {
            if (options.read) options.read.count++;
            yield entity(i);
          }
        })(),
      },
      orphansPossible: false,
      optimizeOwed: options.optimizeOwed ?? false,
      onIndexOptimized: async () => {
        if (options.marks) options.marks.count++;
      },
      signal: options.signal ?? new AbortController().signal,
      onProgress: async () => undefined,
    });
    running.catch(() => undefined);
    return { running, embeddedBatches: () => embedded };
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
  /**
   * Waits until `count()` reaches `expected` (a loaded machine reads and embeds slower), then a while
   * longer, so a count that would go past it has the time to.
   */
  const settleAt = async (count: () => number, expected: number) => {
    await waitFor(() => count() >= expected);
    await settle();
  };

  test('while the first index write stalls, later batches are read and embedded; then all are written in order', async () => {
    const entities = new MemoryEntities();
    const index = new ScriptedIndex({ hold: true });
    const run = start({ entities, index, readAheadBytes: 64 * 2 ** 20, batches: 8 });
    await settleAt(run.embeddedBatches, 8);
    // All eight: the bound is far above eight small batches. Before read-ahead, two (the one written and the next).
    expect(run.embeddedBatches()).toBe(8);
    expect(index.added).toEqual([]);
    expect(entities.upserted).toEqual([]);

    index.open();
    expect(await run.running).toMatchObject({ inserted: 80, chunks: 80 });
    expect(index.added).toEqual(firstOfEachBatch(8));
    expect(entities.upserted).toEqual(firstOfEachBatch(8));
  });

  test('what waits for the index is bounded in bytes: large entities are not read ahead past the bound', async () => {
    const index = new ScriptedIndex({ hold: true });
    // 10 entities of ~200 KB of text a batch: ~4 MB a batch (text twice, as UTF-16 and its chunks), with a 6 MB bound.
    const large = (i: number): SourceEntity => ({ ...stubEntity(i, settings), text: `word${i} `.repeat(20_000).slice(0, 200_000) });
    const run = start({ entities: new MemoryEntities(), index, readAheadBytes: 6 * 2 ** 20, batches: 6, entity: large });
    await settleAt(run.embeddedBatches, 3);
    // The batch being written, one waiting (always allowed), and the one read and held at the bound.
    expect(run.embeddedBatches()).toBe(3);
    index.open();
    await run.running;
    expect(index.added).toEqual(firstOfEachBatch(6));
  });

  test('batches waiting for a slow database count against the bound too', async () => {
    // ~8 MB a batch as counted (its text in the entity and in its chunks), a 6 MB bound, and a
    // database that takes 1 s a write while the index writes at once.
    const large = (i: number): SourceEntity => ({ ...stubEntity(i, settings), text: `word${i} `.repeat(20_000).slice(0, 200_000) });
    const entities = new MemoryEntities(1000);
    const run = start({ entities, index: new ScriptedIndex({}), readAheadBytes: 6 * 2 ** 20, batches: 6, entity: large });
    await settleAt(run.embeddedBatches, 3);
    // The batch being committed, one more held (always allowed), and the one read and held at the bound.
    // Counted until their index writes only, all six were read while the first commit ran.
    expect(run.embeddedBatches()).toBe(3);
    expect(entities.upserted).toEqual([]);
    await run.running;
    expect(entities.upserted).toEqual(firstOfEachBatch(6));
  });

  test("a failed raw data store write: the run ends only once the same batch's index write has", async () => {
    const files = new FileBlobStore(directory);
    const failing: BlobStore = Object.assign(Object.create(files) as BlobStore, {
      put: async () => {
        throw new Error('disk full');
      },
    });
    const index = new ScriptedIndex({ writeMs: 500 });
    const run = start({ entities: new MemoryEntities(), index, readAheadBytes: 64 * 2 ** 20, batches: 2, blobs: failing });
    await expect(run.running).rejects.toThrow('disk full');
    // A next run (orphansPossible) must not meet this one's index write still going.
    expect(index.running).toBe(0);
    expect(index.added).toEqual(firstOfEachBatch(1));
  });

  test('after a failed index write, no later batch reaches the index, however slow the database', async () => {
    const entities = new MemoryEntities(300);
    const index = new ScriptedIndex({ failAt: 2 });
    const run = start({ entities, index, readAheadBytes: 64 * 2 ** 20, batches: 8 });
    await expect(run.running).rejects.toThrow('index write failed');
    expect(index.added).toEqual(firstOfEachBatch(1));
    // The first batch's rows are written (its chunks were); none after it.
    expect(entities.upserted).toEqual(firstOfEachBatch(1));
    // What reached the index is optimized as the run ends: its full-text index must not wait for the next write.
    expect(index.optimized).toBe(1);
  });

  test('a run ends without waiting for the optimize it leaves running; a failed optimize is logged and not recorded done', async () => {
    let failOptimize!: (error: Error) => void;
    const optimizeUntil = new Promise<void>((_, reject) => {
      failOptimize = reject;
    });
    const warnings: unknown[] = [];
    const marks = { count: 0 };
    const index = new ScriptedIndex({ optimizeUntil });
    const run = start({ entities: new MemoryEntities(), index, readAheadBytes: 64 * 2 ** 20, batches: 3, warnings, marks });
    expect((await run.running).inserted).toBe(3 * batchSize);
    expect([index.optimized, index.optimizing, marks.count]).toEqual([1, 1, 0]);
    expect(warnings).toEqual([]);
    const failure = new Error('compaction failed');
    failOptimize(failure);
    await new Promise((resolve) => setImmediate(resolve));
    expect([index.optimizing, marks.count]).toEqual([0, 0]);
    expect(warnings).toEqual([{ collectionId: 'collection', err: failure }]);
  });

  test('an optimize that ends is recorded done then; a run with nothing to optimize records it at its end, unless the one before still owes one', async () => {
    let endOptimize!: () => void;
    const optimizeUntil = new Promise<void>((resolve) => {
      endOptimize = resolve;
    });
    const marks = { count: 0 };
    const writing = new ScriptedIndex({ optimizeUntil });
    await start({ entities: new MemoryEntities(), index: writing, readAheadBytes: 64 * 2 ** 20, batches: 2, marks }).running;
    expect(marks.count).toBe(0);
    endOptimize();
    await new Promise((resolve) => setImmediate(resolve));
    expect(marks.count).toBe(1);

    // Nothing read, nothing written.
    const idle = new ScriptedIndex({});
    const quiet = { count: 0 };
    await start({ entities: new MemoryEntities(), index: idle, readAheadBytes: 64 * 2 ** 20, batches: 0, marks: quiet }).running;
    expect([idle.optimized, quiet.count]).toEqual([0, 1]);
    const owing = new ScriptedIndex({});
    const paid = { count: 0 };
    await start({ entities: new MemoryEntities(), index: owing, readAheadBytes: 64 * 2 ** 20, batches: 0, marks: paid, optimizeOwed: true }).running;
    await new Promise((resolve) => setImmediate(resolve));
    expect([owing.optimized, paid.count]).toEqual([1, 1]);
  });

  test("optimizes left running run one at a time, in the order asked: the next one asks the index only once the one before has ended", async () => {
    const ends: (() => void)[] = [];
    const asked: string[] = [];
    const index = {
      optimize: (collectionId: string) => {
        asked.push(collectionId);
        return new Promise<void>((resolve) => ends.push(resolve));
      },
    };
    const pipeline = new SyncPipeline({ vectors: index as unknown as VectorIndex, logger: { warn: () => undefined } } as unknown as ConstructorParameters<typeof SyncPipeline>[0]);
    const marked: string[] = [];
    for (const collectionId of ['a', 'b', 'c']) pipeline.optimizeInBackground(collectionId, async () => void marked.push(collectionId));
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    expect([asked, marked]).toEqual([['a'], []]);
    ends[0]!();
    await turn();
    expect([asked, marked]).toEqual([['a', 'b'], ['a']]);
    ends[1]!();
    await turn();
    expect([asked, marked]).toEqual([['a', 'b', 'c'], ['a', 'b']]);
    ends[2]!();
    await turn();
    expect([asked, marked]).toEqual([['a', 'b', 'c'], ['a', 'b', 'c']]);
    // Once idle, the next one starts at once.
    pipeline.optimizeInBackground('d', async () => void marked.push('d'));
    expect(asked).toEqual(['a', 'b', 'c', 'd']);
  });

  test('a failure before anything reached the index leaves it alone', async () => {
    const index = new ScriptedIndex({ failAt: 1 });
    const run = start({ entities: new MemoryEntities(), index, readAheadBytes: 64 * 2 ** 20, batches: 3 });
    await expect(run.running).rejects.toThrow('index write failed');
    expect(index.added).toEqual([]);
    expect(index.optimized).toBe(0);
  });

  test("a batch is prepared while the next one is read from the source, and no further; a failed preparation ends the run with its error", async () => {
    const entities = new MemoryEntities();
    for (let i = 0; i < 40; i++) entities.rows.set(`stub-${i}`, { entityId: `stub-${i}`, contentHash: 'stale' } as EntityRow);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    entities.readHashes = (read) => (read === 1 ? answered : Promise.resolve());
    const read = { count: 0 };
    const run = start({ entities, index: new ScriptedIndex({}), readAheadBytes: 64 * 2 ** 20, batches: 4, read });
    await settleAt(() => read.count, 2 * batchSize);
    // The first batch's stored hashes are being read: the second batch is read meanwhile, not the third.
    expect([entities.hashReads, read.count]).toEqual([1, 2 * batchSize]);
    answer();
    expect(await run.running).toMatchObject({ updated: 40 });
    expect(entities.upserted).toEqual(firstOfEachBatch(4));

    const failing = new MemoryEntities();
    failing.readHashes = (attempt) => (attempt === 2 ? Promise.reject(new Error('database gone')) : Promise.resolve());
    const failingRead = { count: 0 };
    const failed = start({ entities: failing, index: new ScriptedIndex({}), readAheadBytes: 64 * 2 ** 20, batches: 8, read: failingRead });
    await expect(failed.running).rejects.toThrow('database gone');
    // The second batch failed as the third was read: the source is read no further.
    expect(failingRead.count).toBeLessThanOrEqual(3 * batchSize);
    expect(failing.upserted).toEqual(firstOfEachBatch(1));
  });

  test('a batch of large entities ends at BATCH_BYTES of text, before its count', async () => {
    const index = new ScriptedIndex({});
    // 1 MiB of text each (as UTF-16): four make a batch, whatever the count allows.
    const large = (i: number): SourceEntity => ({ ...stubEntity(i, settings), text: `word${i} `.repeat(100_000).slice(0, BATCH_BYTES / 8) });
    const run = start({ entities: new MemoryEntities(), index, readAheadBytes: 64 * 2 ** 20, batches: 1, batchSize: 12, entity: large });
    expect(await run.running).toMatchObject({ inserted: 12 });
    expect(index.added).toEqual(['stub-0', 'stub-4', 'stub-8']);
  });

  test('a batch of entities with large fields ends at BATCH_BYTES of fields, before its count', async () => {
    const index = new ScriptedIndex({});
    // Short text, 1 MiB of fields each (nested, as a row's JSON column would be): four make a batch.
    const half = 'x'.repeat(BATCH_BYTES / 16);
    const large = (i: number): SourceEntity => ({ ...stubEntity(i, settings), fields: { index: i, body: { parts: [half, half] } } });
    const run = start({ entities: new MemoryEntities(), index, readAheadBytes: 64 * 2 ** 20, batches: 1, batchSize: 12, entity: large });
    expect(await run.running).toMatchObject({ inserted: 12 });
    expect(index.added).toEqual(['stub-0', 'stub-4', 'stub-8']);
  });

  test('a run cancelled while a batch is prepared reads no further batch from the source', async () => {
    const entities = new MemoryEntities();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    entities.readHashes = (read) => (read === 1 ? released : Promise.resolve()); // the first batch's preparation waits
    const cancel = new AbortController();
    const read = { count: 0 };
    const run = start({ entities, index: new ScriptedIndex({}), readAheadBytes: 64 * 2 ** 20, batches: 8, read, signal: cancel.signal });
    // The second batch is read while the first is prepared; its flush waits for that.
    await settleAt(() => read.count, 2 * batchSize);
    cancel.abort();
    release();
    await expect(run.running).rejects.toThrow(/aborted/i);
    expect(read.count).toBeLessThanOrEqual(2 * batchSize + 1);
  });

  test('a batch whose hashing fails ends the run with its error once its stored hashes have been read, not before', async () => {
    const entities = new MemoryEntities();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let readDone = false;
    entities.readHashes = () => released.then(() => void (readDone = true));
    // JSON.stringify cannot write a BigInt: the content hash throws.
    const unhashable = (i: number): SourceEntity => ({ ...stubEntity(i, settings), fields: { size: BigInt(i) } });
    const run = start({ entities, index: new ScriptedIndex({}), readAheadBytes: 64 * 2 ** 20, batches: 1, entity: unhashable });
    let settled = false;
    run.running.then(
      () => (settled = true),
      () => (settled = true),
    );
    await settle();
    expect(settled).toBe(false); // hashing has failed, but the read it started is still going
    release();
    await expect(run.running).rejects.toThrow(/BigInt/);
    expect(readDone).toBe(true);
  });

  test('stored hashes that come while a large batch is hashed leave its changed entities in the source order', async () => {
    const entities = new MemoryEntities();
    for (let i = 0; i < 1000; i++) entities.rows.set(`stub-${i}`, { entityId: `stub-${i}`, contentHash: 'stale' } as EntityRow);
    // Answered at the first turn of the event loop the hashing gives: after a part of the batch is hashed.
    const run = start({ entities, index: new ScriptedIndex({}), readAheadBytes: 64 * 2 ** 20, batches: 1, batchSize: 1000 });
    expect(await run.running).toMatchObject({ updated: 1000 });
    expect(entities.written).toEqual(Array.from({ length: 1000 }, (_, i) => `stub-${i}`));
  });
});
