/**
 * How many IVF partitions a semantic search should probe: on a dataset bench:search built, recall of
 * the exact scan (every partition read) and latency of VectorIndex.search for each probe count asked,
 * semantic and hybrid, the first page of ten documents, as the service ranks them. What `ivfProbesFor`
 * (src/platform/vectors/lancedb/rankings.ts) is chosen from; run it on each corpus the rule should
 * hold for (`--vocabulary zipf` datasets too) and at each size of shard. Opens the dataset's LanceDB
 * directory in this process (no server); every shard of the collection probes the count given.
 *
 *   npm run bench:probes -- --data-dir /path/of/bench-search/data [--probes 48,64,80,96] [--queries 200]
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { hybridKeywordWeight } from '../src/config.js';
import { WordVectorEmbedder } from '../src/platform/embeddings/word-vector-embedder.js';
import { LanceDbVectorIndex } from '../src/platform/vectors/lancedb/lancedb-index.js';
import { vectorIndexPartitions } from '../src/platform/vectors/lancedb/maintenance.js';
import { ivfProbesFor } from '../src/platform/vectors/lancedb/rankings.js';
import type { VectorQuery } from '../src/platform/vectors/vector-index.js';
import { datasetTextOf, searchQueries } from './search-corpus.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    probes: { type: 'string', default: '32,48,64,80,96,112' },
    queries: { type: 'string', default: '200' },
    'cache-dir': { type: 'string', default: path.join(os.homedir(), '.cache', 'catchment') },
  },
});
if (!values['data-dir']) throw new Error('--data-dir: a directory bench:search built (npm run bench:search -- --data-dir DIR)');
const lancedbDir = path.join(path.resolve(values['data-dir']), 'lancedb');
const prepared = JSON.parse(readFileSync(path.join(path.resolve(values['data-dir']), 'bench-search.json'), 'utf8')) as { collectionId: string; config: Record<string, unknown>; entities: number };
const probeCounts = values.probes.split(',').map((value) => {
  const probes = Number(value);
  if (!Number.isInteger(probes) || probes <= 0) throw new Error(`--probes: whole numbers above 0, not ${value}`);
  return probes;
});

const texts = searchQueries(Number(values.queries), prepared.entities, datasetTextOf(prepared.config));
const embedder = await WordVectorEmbedder.open({ cacheDir: values['cache-dir'] });
const vectors = await embedder.embed(texts);
await embedder.close();
const keywordWeight = hybridKeywordWeight({ embedder: 'builtin', hybridKeywordWeight: undefined });
const queryOf = (q: number, strategy: 'semantic' | 'hybrid'): VectorQuery => ({ strategy, vector: vectors[q]!, text: texts[q]!, filter: [], limit: 10, offset: 0, keywordWeight });

/** Each query's first page (chunk ids) per strategy, and the p50 of a hybrid search, with `ivfProbes` asked of every shard. */
async function pages(ivfProbes: (partitions: number) => number) {
  const index = await LanceDbVectorIndex.open(lancedbDir, embedder.dimensions, { ivfProbes });
  try {
    const found = { semantic: [] as string[][], hybrid: [] as string[][] };
    const latencies: number[] = [];
    for (let q = 0; q < texts.length; q++) {
      found.semantic.push((await index.search(prepared.collectionId, queryOf(q, 'semantic'))).map(({ chunk }) => chunk.chunkId));
      const started = performance.now();
      found.hybrid.push((await index.search(prepared.collectionId, queryOf(q, 'hybrid'))).map(({ chunk }) => chunk.chunkId));
      latencies.push(performance.now() - started);
    }
    const stats = await index.stats(prepared.collectionId);
    return { found, p50: percentile(latencies.sort((a, b) => a - b), 50), shards: stats?.shards ?? 0, partitions: stats ? vectorIndexPartitions(stats.indices) : null };
  } finally {
    await index.close();
  }
}

/** The share of the exact scan's documents a page found too, averaged over the queries. */
function recall(exact: string[][], served: string[][]): number {
  let sum = 0;
  exact.forEach((wanted, q) => {
    const found = new Set(served[q]);
    sum += wanted.length === 0 ? 1 : wanted.filter((id) => found.has(id)).length / wanted.length;
  });
  return sum / exact.length;
}

const exact = await pages((partitions) => partitions);
console.log(`${prepared.entities} entities in ${exact.shards} shard(s), the first's vector index ${exact.partitions ?? 'none'} partitions (served rule: ${exact.partitions ? ivfProbesFor(exact.partitions) : '-'} probes); ${texts.length} queries; recall of the exact scan in the first 10 documents, hybrid p50 (one client, after the exact pass warmed the caches)`);
console.log(`exact scan (all partitions): hybrid p50 ${exact.p50.toFixed(1)} ms`);
const served = await pages(ivfProbesFor);
console.log(`served rule (ivfProbesFor): semantic ${recall(exact.found.semantic, served.found.semantic).toFixed(3)}  hybrid ${recall(exact.found.hybrid, served.found.hybrid).toFixed(3)}  hybrid p50 ${served.p50.toFixed(1)} ms`);
for (const probes of probeCounts) {
  const run = await pages((partitions) => Math.min(partitions, probes));
  console.log(`${String(probes).padStart(4)} probes a shard: semantic ${recall(exact.found.semantic, run.found.semantic).toFixed(3)}  hybrid ${recall(exact.found.hybrid, run.found.hybrid).toFixed(3)}  hybrid p50 ${run.p50.toFixed(1)} ms`);
}
