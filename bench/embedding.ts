/**
 * The built-in word-vector embedder: one-time conversion of the package JSON (time, peak RSS, cache
 * size), cache load time, and texts/s over synthetic ~1 KB texts on the calling thread and in worker
 * threads, with how busy the calling thread was and its event loop's worst delay while embedding (what HTTP
 * requests and heartbeats feel).
 *
 *   npm run bench:embedding [-- --texts 20000] [--no-convert] [--cache-dir DIR]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { CACHE_FILE_NAME, convertWinkJson, readCache, resolveWinkJson } from '../src/platform/embeddings/word-vector-cache.js';
import { vocabularyWords } from '../src/platform/embeddings/word-vector-core.js';
import { WordVectorEmbedder } from '../src/platform/embeddings/word-vector-embedder.js';

const { values } = parseArgs({
  options: {
    texts: { type: 'string', default: '20000' },
    'cache-dir': { type: 'string', default: process.env.CATCHMENT_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'catchment') },
    'no-convert': { type: 'boolean', default: false },
  },
});
const count = Number(values.texts);
const cacheDir = path.resolve(values['cache-dir']);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

// 1. Conversion, first thing, so the process's peak RSS is the conversion's.
if (!values['no-convert']) {
  const baseline = process.memoryUsage.rss();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'catchment-bench-wordvec-'));
  try {
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    const stats = await convertWinkJson(resolveWinkJson(), path.join(scratch, CACHE_FILE_NAME));
    clearInterval(sampler);
    peak = Math.max(peak, process.resourceUsage().maxRSS * 1024);
    console.log(`conversion:  ${(stats.ms / 1000).toFixed(2)} s, ${stats.words} words, cache ${mb(stats.bytes)}; peak RSS ${mb(peak)} (process before: ${mb(baseline)})`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// 2. Cache load (the shared cache; built here if missing).
await (await WordVectorEmbedder.open({ cacheDir, threads: 0 })).close();
console.log(`cache file:  ${mb(statSync(path.join(cacheDir, CACHE_FILE_NAME)).size)} at ${cacheDir}`);
for (const threads of [0, 1]) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const embedder = await WordVectorEmbedder.open({ cacheDir, threads, preload: true });
    times.push(performance.now() - t0);
    await embedder.close();
  }
  times.sort((a, b) => a - b);
  console.log(`load:        ${times[2]!.toFixed(0)} ms median of 5 (min ${times[0]!.toFixed(0)}) with ${threads ? `${threads} worker thread` : 'no worker'}`);
}

// 3. Throughput.
const vocabulary = await readVocabulary(path.join(cacheDir, CACHE_FILE_NAME));
const texts = syntheticTexts(vocabulary, count, 1024);
const chars = texts.reduce((sum, text) => sum + text.length, 0);
console.log(`texts:       ${count} synthetic, ${(chars / count).toFixed(0)} chars on average`);
for (const threads of [0, 1, 2]) {
  const embedder = await WordVectorEmbedder.open({ cacheDir, threads });
  await embedder.embed(texts.slice(0, 2000)); // warm up the JIT
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const elu = performance.eventLoopUtilization();
  const t0 = performance.now();
  const vectors = await embedder.embed(texts);
  const seconds = (performance.now() - t0) / 1000;
  const busy = performance.eventLoopUtilization(elu).utilization;
  delay.disable();
  if (vectors.length !== count) throw new Error('wrong number of vectors');
  await embedder.close();
  const where = threads === 0 ? 'calling thread ' : `${threads} worker thread${threads > 1 ? 's' : ' '}`;
  console.log(
    `embed:       ${where}  ${(count / seconds).toFixed(0).padStart(6)} texts/s  (${seconds.toFixed(2)} s; this thread busy ${(busy * 100).toFixed(0)} %, event loop delay max ${(delay.max / 1e6).toFixed(0)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms)`,
  );
}

/**
 * Deterministic texts of about `size` characters: words drawn from the model's own vocabulary with
 * Zipf's law (rank r with probability ∝ 1/(r+1), top 200k words), like real prose, plus a few code
 * identifiers, numbers and unknown tokens, and sentence punctuation.
 */
function syntheticTexts(vocabulary: string[], n: number, size: number): string[] {
  const words = vocabulary.slice(0, 200_000).filter((word) => /^[\p{L}\p{N}]/u.test(word));
  const extras = ['getUserById', 'parseHttpRequest', 'max_retry_count', 'onClick', 'XMLHttpRequest', 'userAccountId', 'zxq-77a', 'INV-2024-0001'];
  const cumulative = new Float64Array(words.length);
  for (let r = 0, total = 0; r < words.length; r++) cumulative[r] = total += 1 / (r + 1);
  const total = cumulative[words.length - 1]!;
  let seed = 42;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const pick = () => {
    const target = random() * total;
    let lo = 0;
    let hi = words.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  return Array.from({ length: n }, () => {
    const parts: string[] = [];
    let length = 0;
    while (length < size) {
      const roll = random();
      const word = roll < 0.02 ? extras[Math.floor(random() * extras.length)]! : roll < 0.04 ? String(Math.floor(random() * 10_000)) : pick();
      parts.push(random() < 0.05 ? `${word[0]!.toUpperCase()}${word.slice(1)}` : word);
      length += word.length + 1;
      if (random() < 0.06) parts.push(random() < 0.5 ? '.' : ',');
    }
    return parts.join(' ');
  });
}

async function readVocabulary(file: string): Promise<string[]> {
  return vocabularyWords((await readCache(file))!.layout);
}
