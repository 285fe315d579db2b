import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { linkSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { CACHE_FILE_NAME } from './word-vector-cache.js';
import { WordVectorEmbedder } from './word-vector-embedder.js';

/** The machine-wide cache the service uses (the conversion runs at most once per machine). */
const MACHINE_CACHE = path.join(os.homedir(), '.cache', 'catchment');

/** This process's embedding threads, by the name the operating system shows (15 characters of the worker's). */
function embeddingThreads(): number {
  return readdirSync('/proc/self/task').filter((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() === 'catchment-word-';
    } catch {
      return false; // the thread ended while we looked
    }
  }).length;
}

/**
 * The count once it has stopped changing: jest runs other test files in this process before this one, and an
 * embedder they closed may still have a thread the operating system has not reaped. Counts are compared with it.
 */
async function settledEmbeddingThreads(): Promise<number> {
  let count = embeddingThreads();
  for (let stable = 0; stable < 5; ) {
    await sleep(20);
    const now = embeddingThreads();
    stable = now === count ? stable + 1 : 0;
    count = now;
  }
  return count;
}

describe('word-vector model loading', () => {
  const dirs: string[] = [];
  beforeAll(async () => {
    await (await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE })).close(); // builds the machine's cache if missing
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('open reads no model and starts no thread; the first embed does; close stops them', async () => {
    const before = await settledEmbeddingThreads();
    const embedder = await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE, threads: 2 });
    try {
      expect(embeddingThreads()).toBe(before);
      const [vector] = await embedder.embed(['the cat sat on the mat']);
      expect(vector).toHaveLength(100);
      expect(embeddingThreads()).toBe(before + 2);
    } finally {
      await embedder.close();
    }
    expect(await settledEmbeddingThreads()).toBe(before);
  });

  test('a failed load is tried again by the next embed', async () => {
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'catchment-vectors-'));
    dirs.push(cacheDir);
    const cache = path.join(cacheDir, CACHE_FILE_NAME);
    linkSync(path.join(MACHINE_CACHE, CACHE_FILE_NAME), cache); // the same bytes without copying 46 MB
    const before = await settledEmbeddingThreads();
    const embedder = await WordVectorEmbedder.open({ cacheDir });
    try {
      renameSync(cache, `${cache}.away`);
      await expect(embedder.embed(['first try'])).rejects.toThrow(/disappeared/);
      expect(await settledEmbeddingThreads()).toBe(before);
      renameSync(`${cache}.away`, cache);
      const [vector] = await embedder.embed(['second try']);
      expect(vector).toHaveLength(100);
    } finally {
      await embedder.close();
    }
  });

  test('close() while the model loads: the embed fails as closed and no thread outlives close()', async () => {
    const before = await settledEmbeddingThreads();
    const embedder = await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE, threads: 2 });
    const texts = Array.from({ length: 20_000 }, (_, i) => `document ${i} about clinical trials and revenue`);
    const embedding = embedder.embed(texts);
    const outcome = embedding.then(
      () => 'embedded',
      (error: Error) => error.message,
    );
    // Wait until the load starts its threads (or, on a fast machine, is done and embedding), then close.
    while (embeddingThreads() <= before) await nextTurn();
    await embedder.close();
    expect(await outcome).toMatch(/closed/);
    expect(await settledEmbeddingThreads()).toBe(before);
  });
});
