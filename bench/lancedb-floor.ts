/**
 * What a hybrid search costs inside LanceDB, query by query, on a dataset bench:search built: how much
 * of bench:search's raw index time is LanceDB's own floor and how much the service's work around it.
 * Opens the dataset's LanceDB directory read-only in this process (no server), embeds bench:search's
 * queries with the built-in embedder, and times, on the collection's first table (shard), each query's
 * rows read as the service reads them (queryRows):
 * - a take of one row's one column: what any LanceDB query costs before it reads anything;
 * - the vector search (all candidates' row ids and distances, no other column) probing one partition,
 *   and the partitions searches probe;
 * - the keyword search (BM25 on the keywords column, row ids and scores);
 * - both together, as a hybrid search runs them;
 * - the page's take: the result columns of ten rows the vector search found;
 * - VectorIndex.search, hybrid, as the service asks it (everything above, the fusion into documents
 *   and the entity keys);
 * each as p50 and CPU a query (all of LanceDB's threads). Run it on a quiet host.
 *
 *   npm run bench:lancedb -- --data-dir /path/of/bench-search/data [--queries 300]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import { hybridKeywordWeight } from '../src/config.js';
import { KEYWORDS_COLUMN } from '../src/platform/vectors/lancedb/arrow.js';
import { DEFAULT_INDEX_CACHE_BYTES, DEFAULT_METADATA_CACHE_BYTES } from '../src/platform/vectors/lancedb/connection.js';
import { LanceDbVectorIndex } from '../src/platform/vectors/lancedb/lancedb-index.js';
import { vectorIndexPartitions } from '../src/platform/vectors/lancedb/maintenance.js';
import { ivfProbesFor } from '../src/platform/vectors/lancedb/rankings.js';
import { KEYWORDS_DETAILS_RESULT, queryRows } from '../src/platform/vectors/lancedb/rows.js';
import { datasetOptions, openBenchDataset } from './bench-dataset.js';
import { percentile } from './stats.js';

const { values } = parseArgs({ options: datasetOptions(300) });
const { lancedbDir, collectionId, entities, texts, vectors, dimensions } = await openBenchDataset(values);
/** Candidates a ranking reads for the first page of ten (candidateDepth in document-ranking.ts). */
const DEPTH = 200;

const session = new lancedb.Session(BigInt(DEFAULT_INDEX_CACHE_BYTES), BigInt(DEFAULT_METADATA_CACHE_BYTES));
const db = await lancedb.connect({ uri: lancedbDir, readConsistencyInterval: 0, session });
const table = await db.openTable(LanceDbVectorIndex.tableName(collectionId));
const partitions = vectorIndexPartitions(await table.listIndices());
const index = await LanceDbVectorIndex.open(lancedbDir, dimensions);

/** Reads a query's rows as the service does (queryRows, to the stream's end); how many. */
async function drain(query: Parameters<typeof queryRows>[0]): Promise<number> {
  return (await queryRows(query)).length;
}
const semantic = (q: number, probes: number) =>
  table.vectorSearch(vectors[q]!).distanceType('cosine').select(['_distance']).withRowId().limit(DEPTH).nprobes(probes);
const keyword = (q: number) => table.query().fullTextSearch(texts[q]!, { columns: KEYWORDS_COLUMN }).select(['_score']).withRowId().limit(DEPTH);
/** Ten rows each vector search found: the page's take reads rows a search returns. */
const pageRowIds: bigint[][] = [];
for (let q = 0; q < texts.length; q++) {
  const found = await semantic(q, 1).limit(10).toArrow();
  pageRowIds.push([...found.getChild('_rowid')!].map((id) => BigInt(id as bigint)));
}

/** p50 latency and CPU a query (the whole process: LanceDB's threads do most of it), after a warm-up pass. */
async function timed(label: string, run: (q: number) => Promise<unknown>): Promise<number> {
  for (let q = 0; q < texts.length; q++) await run(q);
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  for (let q = 0; q < texts.length; q++) {
    const started = performance.now();
    await run(q);
    latencies.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  console.log(`${label.padEnd(52)} p50 ${p50.toFixed(2)} ms  CPU ${((used.user + used.system) / 1000 / texts.length).toFixed(2)} ms a query`);
  return p50;
}

const probes = partitions ? Math.min(partitions, Math.max(1, Math.floor(ivfProbesFor(partitions)))) : null;
console.log(`${entities} entities, ${await table.countRows()} rows in the first table; vector index: ${partitions ? `${partitions} partitions, searches probe ${probes}` : 'none (exact scan)'}; ${texts.length} queries`);
const fixed = await timed('take of one row, one column (a query’s fixed cost)', (q) => drain(table.takeRowIds(pageRowIds[q]!.slice(0, 1)).select(['name'])));
if (probes) await timed('vector search, 1 partition', (q) => drain(semantic(q, 1)));
const vector = await timed(`vector search${probes ? `, ${probes} partitions` : ', exact'}`, (q) => drain(probes ? semantic(q, probes) : semantic(q, 1).bypassVectorIndex()));
const fullText = await timed('keyword search', (q) => drain(keyword(q)));
const both = await timed('both together', (q) => Promise.all([drain(probes ? semantic(q, probes) : semantic(q, 1).bypassVectorIndex()), drain(keyword(q))]));
const page = await timed('the page’s take (10 rows, result columns)', (q) => drain(table.takeRowIds(pageRowIds[q]!).select([...KEYWORDS_DETAILS_RESULT.columns]).withRowId()));
const search = await timed('VectorIndex.search, hybrid, first page of 10', (q) =>
  index.search(collectionId, { strategy: 'hybrid', vector: vectors[q]!, text: texts[q]!, filter: [], limit: 10, offset: 0, keywordWeight: hybridKeywordWeight({ embedder: 'builtin', hybridKeywordWeight: undefined }) }),
);
console.log(
  `LanceDB's three queries, as a search runs them (both searches, then the take): ${(both + page).toFixed(2)} ms of the search's ${search.toFixed(2)} ms p50; ` +
    `apart ${(vector + fullText + page).toFixed(2)} ms; a query's fixed cost ${fixed.toFixed(2)} ms`,
);
await index.close();

