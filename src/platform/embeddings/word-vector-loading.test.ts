import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { linkSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
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

describe('word-vector model loading', () => {
  const dirs: string[] = [];
  beforeAll(async () => {
    await (await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE })).close(); // builds the machine's cache if missing
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('open reads no model and starts no thread; the first embed does; close stops them', async () => {
    const embedder = await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE, threads: 2 });
    try {
      expect(embeddingThreads()).toBe(0);
      const [vector] = await embedder.embed(['the cat sat on the mat']);
      expect(vector).toHaveLength(100);
      expect(embeddingThreads()).toBe(2);
    } finally {
      await embedder.close();
    }
    expect(embeddingThreads()).toBe(0);
  });

  test('a failed load is tried again by the next embed', async () => {
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'catchment-vectors-'));
    dirs.push(cacheDir);
    const cache = path.join(cacheDir, CACHE_FILE_NAME);
    linkSync(path.join(MACHINE_CACHE, CACHE_FILE_NAME), cache); // the same bytes without copying 140 MB
    const embedder = await WordVectorEmbedder.open({ cacheDir });
    try {
      renameSync(cache, `${cache}.away`);
      await expect(embedder.embed(['first try'])).rejects.toThrow(/disappeared/);
      expect(embeddingThreads()).toBe(0);
      renameSync(`${cache}.away`, cache);
      const [vector] = await embedder.embed(['second try']);
      expect(vector).toHaveLength(100);
    } finally {
      await embedder.close();
    }
  });

  test('close() while the model loads: the embed fails as closed and no thread outlives close()', async () => {
    const embedder = await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE, threads: 2 });
    const texts = Array.from({ length: 20_000 }, (_, i) => `document ${i} about clinical trials and revenue`);
    const embedding = embedder.embed(texts);
    const outcome = embedding.then(
      () => 'embedded',
      (error: Error) => error.message,
    );
    // Wait until the load starts its threads (or, on a fast machine, is done and embedding), then close.
    while (embeddingThreads() === 0) await nextTurn();
    await embedder.close();
    expect(await outcome).toMatch(/closed/);
    expect(embeddingThreads()).toBe(0);
  });
});
