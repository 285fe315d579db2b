/**
 * How many IVF partitions a semantic search should probe: on a dataset bench:search built, recall of
 * the exact scan (every partition read) for each probe count asked, of semantic and of hybrid search
 * (the first page of ten documents, as the service ranks them), and the hybrid search's p50. What
 * `ivfProbesFor` (src/platform/vectors/lancedb/rankings.ts) is chosen from; run it on each corpus the
 * rule should hold for (`--vocabulary zipf` datasets too) and at each size of shard. Opens the
 * dataset's LanceDB directory in this process (no server); every shard of the collection probes the
 * count given. Each pass opens the index anew (its LanceDB caches start empty) and runs each query's
 * semantic search just before its timed hybrid one, so the p50s compare passes with one another, not
 * with bench:search's.
 *
 *   npm run bench:probes -- --data-dir /path/of/bench-search/data [--probes 48,64,80,96] [--queries 200]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { hybridKeywordWeight } from '../src/config.js';
import { LanceDbVectorIndex } from '../src/platform/vectors/lancedb/lancedb-index.js';
import { vectorIndexPartitions } from '../src/platform/vectors/lancedb/maintenance.js';
import { ivfProbesFor } from '../src/platform/vectors/lancedb/rankings.js';
import type { VectorQuery } from '../src/platform/vectors/vector-index.js';
import { datasetOptions, openBenchDataset } from './bench-dataset.js';
import { percentile } from './stats.js';

const { values } = parseArgs({ options: { ...datasetOptions(200), probes: { type: 'string', default: '32,48,64,80,96,112' } } });
const probeCounts = values.probes.split(',').map((value) => {
  const probes = Number(value);
  if (!Number.isInteger(probes) || probes <= 0) throw new Error(`--probes: whole numbers above 0, not ${value}`);
  return probes;
});
const { lancedbDir, collectionId, entities, texts, vectors, dimensions } = await openBenchDataset(values);
const keywordWeight = hybridKeywordWeight({ embedder: 'builtin', hybridKeywordWeight: undefined });
const queryOf = (q: number, strategy: 'semantic' | 'hybrid'): VectorQuery => ({ strategy, vector: vectors[q]!, text: texts[q]!, filter: [], limit: 10, offset: 0, keywordWeight });

/** Each query's first page (chunk ids) per strategy, and the p50 of a hybrid search, with `ivfProbes` asked of every shard. */
async function pages(ivfProbes: (partitions: number) => number) {
  const index = await LanceDbVectorIndex.open(lancedbDir, dimensions, { ivfProbes });
  try {
    const found = { semantic: [] as string[][], hybrid: [] as string[][] };
    const latencies: number[] = [];
    for (let q = 0; q < texts.length; q++) {
      found.semantic.push((await index.search(collectionId, queryOf(q, 'semantic'))).map(({ chunk }) => chunk.chunkId));
      const started = performance.now();
      found.hybrid.push((await index.search(collectionId, queryOf(q, 'hybrid'))).map(({ chunk }) => chunk.chunkId));
      latencies.push(performance.now() - started);
    }
    const stats = await index.stats(collectionId);
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
console.log(`${entities} entities in ${exact.shards} shard(s), the first's vector index ${exact.partitions ?? 'none'} partitions (served rule: ${exact.partitions ? ivfProbesFor(exact.partitions) : '-'} probes); ${texts.length} queries; recall of the exact scan in the first 10 documents, hybrid p50 (one client)`);
console.log(`exact scan (all partitions): hybrid p50 ${exact.p50.toFixed(1)} ms`);
const served = await pages(ivfProbesFor);
console.log(`served rule (ivfProbesFor): semantic ${recall(exact.found.semantic, served.found.semantic).toFixed(3)}  hybrid ${recall(exact.found.hybrid, served.found.hybrid).toFixed(3)}  hybrid p50 ${served.p50.toFixed(1)} ms`);
for (const probes of probeCounts) {
  const run = await pages((partitions) => Math.min(partitions, probes));
  console.log(`${String(probes).padStart(4)} probes a shard: semantic ${recall(exact.found.semantic, run.found.semantic).toFixed(3)}  hybrid ${recall(exact.found.hybrid, run.found.hybrid).toFixed(3)}  hybrid p50 ${run.p50.toFixed(1)} ms`);
}
