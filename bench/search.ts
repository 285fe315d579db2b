/**
 * Instant hybrid search over ~100,000 chunks, through REST and straight on the index. The chunks are
 * ingested through the service (a `stub` connection of small entities: one chunk each, no folders),
 * in the embedded deployment (`catchment start`: API and worker in one process) with the default
 * embedder. Prints, for varied queries:
 * - REST p50/p95 latency for one client, and throughput and p50/p95 with `--clients` concurrent ones,
 *   twice: with the client in this process (undici fetch, as the issue's baseline measured: its
 *   request building and JSON then run on the server's main thread), and with the client in a process
 *   of its own (bench/http-load.ts, as wrk or autocannon would), where the CPU figures are the
 *   server's alone;
 * - the raw index query p50 (VectorIndex.search with exactly the query the service sends, from
 *   IndexRetrieval.indexQuery: same vector, text, filter, page and weight) and the embedding p50, and
 *   the ratio REST p50 / raw p50;
 * - the dataset build time and the process memory.
 *
 *   npm run bench:search [-- --entities 100000 --queries 300 --limit 10 --clients 8]
 *                        [--data-dir DIR [--rebuild]] [--breakdown] [--results FILE] [--vocabulary stub|zipf]
 *                        [--env NAME=VALUE ...]
 *
 * --data-dir DIR  keeps the dataset (PGlite database, LanceDB files, encryption key) in DIR. A later
 *                 run with the same DIR and the same --entities reuses it and skips the ingest; a
 *                 dataset of other parameters (or an interrupted build) in DIR is replaced. DIR must
 *                 be empty, missing, or a directory this bench made. Without it, the dataset lives in
 *                 a temporary directory removed at the end.
 * --rebuild       ingests again even when DIR holds a matching dataset.
 * --results FILE  first writes each query's results straight from the index to FILE, for hybrid,
 *                 keyword and semantic search, first and second page: chunk ids and scores, one JSON
 *                 line each. Two trees run on the same DIR write the same file unless a change moved
 *                 a ranking (compare them with cmp).
 * --env NAME=VALUE  a setting of the server (repeatable), e.g. CATCHMENT_LANCEDB_SHARD_ROWS=25000; a
 *                 dataset built with other settings is built again.
 * --breakdown     also times the parts of the raw query (semantic alone, keyword alone, hybrid with
 *                 the sync_id filter searches add while a deleted connection's chunks linger) and the
 *                 REST path's fixed cost (a search of an empty collection: HTTP, auth, facade,
 *                 GraphQL, scope; no index work), the raw query after a pause of 0, 1 and 3 ms
 *                 (whether LanceDB's threads and the host's CPUs, idle between a client's requests,
 *                 cost a query their waking), and where a REST search's time goes in the server
 *                 (bench/rest-spans.ts: HTTP in, the service before and after the index, the index
 *                 search, HTTP out, and the client's share).
 *
 * Also the CPU time per query (steadier than latencies on a shared host), its main thread's share
 * (the rest is LanceDB's own threads), and the recall of the exact scan (the served IVF index
 * against one reading every partition).
 *
 * Targets (issue 18, on a 2-core host): REST p50 ≤ 10 ms, p95 ≤ 25 ms, ≥ 150 req/s with 8 clients,
 * recall of the exact scan ≥ 0.99.
 *
 * The stub's texts draw on a vocabulary of 60 words, so every query word matches a large share of
 * the chunks: a hard case for BM25, whose cost grows with the matches it scores. `--vocabulary zipf`
 * measures the same on texts whose words follow Zipf's law over 20,000 (bench/search-corpus.ts), as
 * natural language does: a dataset of its own (use another --data-dir).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CURRENT_LAYOUT } from '../src/platform/vectors/lancedb/arrow.js';
import { LanceDbVectorIndex } from '../src/platform/vectors/lancedb/lancedb-index.js';
import { vectorIndexPartitions } from '../src/platform/vectors/lancedb/maintenance.js';
import type { ScoredChunk, VectorIndex, VectorQuery } from '../src/platform/vectors/vector-index.js';
import { startTestServer, type TestServer } from '../test/support/harness.js';
import { api, type Api, syncStub } from '../test/support/sync-helpers.js';
import { HttpLoadGenerator, type LoadResult } from './http-load.js';
import { describeRestSpans, measureRestSpans } from './rest-spans.js';
import { datasetTextOf, pushZipfCorpus, searchQueries } from './search-corpus.js';
import { envOption } from './env-option.js';
import { percentile, timeConcurrently } from './stats.js';

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '300' },
    limit: { type: 'string', default: '10' },
    clients: { type: 'string', default: '8' },
    'data-dir': { type: 'string' },
    rebuild: { type: 'boolean', default: false },
    breakdown: { type: 'boolean', default: false },
    results: { type: 'string' },
    vocabulary: { type: 'string', default: 'stub' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
/** Settings of the server (`--env NAME=VALUE`): part of the dataset's parameters, as some shape what it stores. */
const serverEnv = envOption(values.env);
const entityCount = Number(values.entities);
const limit = Number(values.limit);
const clients = Number(values.clients);
const config = { entity_count: entityCount, seed: 11, size_mix: 'small', hierarchy_depth: 0, code_files: false, delay_ms: 0, revision: 0 };
if (values.vocabulary !== 'stub' && values.vocabulary !== 'zipf') throw new Error(`--vocabulary is stub or zipf, not ${values.vocabulary}`);
const zipf = values.vocabulary === 'zipf';
/** What a prepared dataset was built from: the stub's settings (the connection's config), or those and the Zipf corpus. */
const datasetConfig: Record<string, unknown> = {
  ...config,
  ...(zipf ? { vocabulary: 'zipf' } : {}),
  ...(Object.keys(serverEnv).length > 0 ? { env: serverEnv } : {}),
};
const READABLE_ID = 'bench-search';

/** What a prepared data directory holds, written once its ingest completed. */
interface Prepared {
  entities: number;
  config: Record<string, unknown>;
  apiKey: string;
  collectionId: string;
  connectionId: string;
  chunks: number;
  buildSeconds: number;
  builtAt: string;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const summary = (latencies: number[]) => `p50 ${ms(percentile(latencies, 50))}  p95 ${ms(percentile(latencies, 95))}`;

/** The prepared dataset in `dir`, when it matches this run's parameters. */
function preparedIn(dir: string | undefined): Prepared | null {
  if (!dir || values.rebuild) return null;
  const file = path.join(dir, 'bench-search.json');
  if (!existsSync(file)) return null;
  const prepared = JSON.parse(readFileSync(file, 'utf8')) as Prepared | { building: true };
  return 'config' in prepared && JSON.stringify(prepared.config) === JSON.stringify(datasetConfig) ? prepared : null;
}

/** Ingests the dataset through the service (REST calls, sync jobs on the worker). */
async function build(server: TestServer, dataDir: string | undefined): Promise<Prepared> {
  const call: Api = api(server.url, server.apiKey);
  const t0 = performance.now();
  const collection = (await call('POST', '/collections', { name: 'Bench search', readable_id: READABLE_ID })).body;
  const connectionId = zipf ? await pushZipfCorpus(call, READABLE_ID, entityCount) : (await syncStub(call, READABLE_ID, config, 3_600_000)).connectionId;
  const vectors = await server.running.core.vectors();
  // The index optimize the sync's end leaves running after COMPLETED: measured after it, as before it moved there.
  await vectors.settled(collection.id);
  const chunks = await vectors.count(collection.id);
  const prepared: Prepared = {
    entities: entityCount,
    config: datasetConfig,
    apiKey: server.apiKey,
    collectionId: collection.id,
    connectionId,
    chunks,
    buildSeconds: (performance.now() - t0) / 1000,
    builtAt: new Date().toISOString(),
  };
  if (dataDir) writeFileSync(path.join(dataDir, 'bench-search.json'), JSON.stringify(prepared, null, 2));
  return prepared;
}

/**
 * Recall of the exact scan: per query, the share of the top `limit` documents of the index as served
 * (IVF, some partitions probed) that a search reading every partition finds too, for hybrid (what the
 * service answers) and semantic alone (where the approximation shows undiluted). LanceDB only (null
 * for another index).
 */
async function recallOfExactScan(served: VectorIndex, dir: string, collectionId: string, queries: VectorQuery[]) {
  if (!(served instanceof LanceDbVectorIndex)) return null;
  const exact = await LanceDbVectorIndex.open(path.join(dir, 'lancedb'), queries[0]!.vector!.length, { ivfProbes: (partitions) => partitions });
  try {
    const ids = (hits: ScoredChunk[]) => hits.map((hit) => hit.chunk.chunkId);
    const shares = { hybrid: 0, semantic: 0 };
    for (const query of queries) {
      for (const strategy of ['hybrid', 'semantic'] as const) {
        const wanted = ids(await exact.search(collectionId, { ...query, strategy }));
        const found = new Set(ids(await served.search(collectionId, { ...query, strategy })));
        shares[strategy] += wanted.length === 0 ? 1 : wanted.filter((id) => found.has(id)).length / wanted.length;
      }
    }
    return { queries: queries.length, hybrid: shares.hybrid / queries.length, semantic: shares.semantic / queries.length };
  } finally {
    await exact.close();
  }
}

/** Each query's first two pages straight from the index, per strategy: chunk ids and scores, one JSON line each (--results). */
async function writeResults(file: string, index: VectorIndex, collectionId: string, queries: VectorQuery[]) {
  const lines: string[] = [];
  for (const query of queries) {
    for (const strategy of ['hybrid', 'keyword', 'semantic'] as const) {
      for (const offset of [0, query.limit]) {
        const hits = await index.search(collectionId, { ...query, strategy, offset });
        lines.push(JSON.stringify({ query: query.text, strategy, offset, hits: hits.map(({ chunk, score }) => [chunk.chunkId, score]) }));
      }
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  console.log(`results of ${queries.length} queries (3 strategies, 2 pages) written to ${file}`);
}

/**
 * The raw index query timed after each pause of `pausesMs` (0: the next turn of the event loop):
 * every query under every pause, which pause comes first rotating from query to query, so that each
 * pause times the same queries under the same background load. (Timing each query after one pause
 * in turn measured the queries instead: searchQueries gives them 2, 3 and 4 words in turn.)
 */
async function rawAfterPauses(queries: string[], pausesMs: number[], rawQuery: (query: string) => Promise<void>) {
  const latencies = pausesMs.map(() => [] as number[]);
  for (const [i, query] of queries.entries()) {
    for (let turn = 0; turn < pausesMs.length; turn++) {
      const pause = (i + turn) % pausesMs.length;
      await (pausesMs[pause] === 0 ? nextTurn() : sleep(pausesMs[pause]));
      const started = performance.now();
      await rawQuery(query);
      latencies[pause]!.push(performance.now() - started);
    }
  }
  return pausesMs.map((pauseMs, i) => ({ pauseMs, latencies: latencies[i]!.sort((a, b) => a - b) }));
}

/** Instant hybrid searches of the dataset's collection from a load generator: each body once, `concurrency` at a time. */
type SearchLoad = (bodies: string[], concurrency: number) => Promise<LoadResult>;

/**
 * Runs `measure` with searches sent from a load generator of its own (HttpLoadGenerator), warmed up
 * first (the generator's JIT and connection), and stops the generator after.
 */
async function withSearchLoad<T>(url: string, apiKey: string, bodies: string[], measure: (restLoad: SearchLoad) => Promise<T>): Promise<T> {
  const loadGenerator = await HttpLoadGenerator.start();
  try {
    const restLoad: SearchLoad = (sent, concurrency) =>
      loadGenerator.run({ url: `${url}/collections/${READABLE_ID}/search/instant`, headers: { 'x-api-key': apiKey }, bodies: sent, concurrency, nonEmpty: 'results' });
    await restLoad(bodies.slice(0, 30), 1);
    return await measure(restLoad);
  } finally {
    await loadGenerator.stop();
  }
}

/** The request body of a query's first page of hybrid search. */
function searchBody(query: string) {
  return { query, retrieval_strategy: 'hybrid', limit };
}

/** Each query's searchBody as JSON, for the load generator. */
function searchBodies(queries: string[]): string[] {
  return queries.map((query) => JSON.stringify(searchBody(query)));
}

/**
 * REST with the client in a process of its own (HttpLoadGenerator), against the raw index: blocks of
 * BLOCK queries through REST alternate with the same queries on the raw index (and which goes first),
 * so that both see the same background load. Within a block no message crosses to the load
 * generator (one each way per block, a few µs a query), so the CPU this process spends in a REST
 * block is the server's. Then the concurrent clients.
 */
async function measureOutOfProcess(queries: string[], rawQuery: (query: string) => Promise<void>, url: string, apiKey: string) {
  const BLOCK = 20;
  const bodies = searchBodies(queries);
  return withSearchLoad(url, apiKey, bodies, async (restLoad) => {
    const latencies = { rest: [] as number[], raw: [] as number[] };
    const cpuMs = { rest: 0, raw: 0 };
    const mainThreadCpuMs = { rest: 0, raw: 0 };
    const timed = async (path: 'rest' | 'raw', start: number) => {
      const cpu = process.cpuUsage();
      const mainThreadCpu = process.threadCpuUsage();
      const block =
        path === 'rest' ? await restLoad(bodies.slice(start, start + BLOCK), 1) : await timeConcurrently(queries.slice(start, start + BLOCK), 1, rawQuery);
      const used = process.cpuUsage(cpu);
      const usedOnMainThread = process.threadCpuUsage(mainThreadCpu);
      latencies[path].push(...block.latencies);
      cpuMs[path] += (used.user + used.system) / 1000 / queries.length;
      mainThreadCpuMs[path] += (usedOnMainThread.user + usedOnMainThread.system) / 1000 / queries.length;
    };
    for (let start = 0; start < queries.length; start += BLOCK) {
      if ((start / BLOCK) % 2 === 0) await timed('rest', start).then(() => timed('raw', start));
      else await timed('raw', start).then(() => timed('rest', start));
    }
    const concurrent = await restLoad([...bodies, ...bodies], clients);
    return { rest: latencies.rest.sort((a, b) => a - b), raw: latencies.raw.sort((a, b) => a - b), cpuMs, mainThreadCpuMs, concurrent, block: BLOCK };
  });
}

const dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : undefined;
let prepared = preparedIn(dataDir);
const reused = prepared !== null;
if (dataDir && !prepared) {
  // A stale dataset (other parameters, or an interrupted build): start from an empty directory. Only
  // a directory this bench made is emptied, never one that merely exists.
  const names = existsSync(dataDir) ? readdirSync(dataDir) : [];
  if (names.length > 0 && !names.includes('bench-search.json')) throw new Error(`${dataDir} is not empty and holds no bench-search dataset: pick another --data-dir`);
  if (names.length > 0) console.log(`${dataDir}: ${values.rebuild ? '--rebuild' : 'its dataset has other parameters or is incomplete'}; building a new one`);
  for (const name of names) rmSync(path.join(dataDir, name), { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path.join(dataDir, 'bench-search.json'), JSON.stringify({ building: true }));
}

let t0 = performance.now();
const server = await startTestServer({
  deployment: 'embedded',
  dataDir,
  env: {
    CATCHMENT_RATE_LIMIT_REQUESTS: '0',
    CATCHMENT_LOG_LEVEL: 'warn',
    ...serverEnv,
    // A reused dataset keeps the key of the run that built it (bootstrap only runs on an empty database).
    ...(prepared ? { CATCHMENT_BOOTSTRAP_API_KEY: prepared.apiKey } : {}),
  },
});
console.log(`server started in ${elapsed(t0)}${dataDir ? ` (data dir ${dataDir})` : ''}`);
try {
  if (prepared) {
    console.log(`dataset reused: ${prepared.chunks} chunks, built in ${prepared.buildSeconds.toFixed(1)} s on ${prepared.builtAt} (--rebuild to ingest again)`);
  } else {
    prepared = await build(server, dataDir);
    console.log(`dataset built: ${prepared.chunks} chunks ingested through the service in ${prepared.buildSeconds.toFixed(1)} s (${(prepared.chunks / prepared.buildSeconds).toFixed(0)} chunks/s)`);
  }
  const { collectionId, connectionId } = prepared;
  const call: Api = api(server.url, prepared.apiKey);
  const index = await server.running.core.vectors();
  const embedder = await server.running.core.embedder();
  const chunks = await index.count(collectionId);
  if (chunks !== prepared.chunks) throw new Error(`the index holds ${chunks} chunks, the dataset ${prepared.chunks}: run with --rebuild`);
  const stats = index instanceof LanceDbVectorIndex ? await index.stats(collectionId) : null;
  const memoryAfterBuild = process.memoryUsage();

  const queries = searchQueries(Number(values.queries), entityCount, datasetTextOf(datasetConfig));
  const search = async (query: string) => {
    const response = await call('POST', `/collections/${READABLE_ID}/search/instant`, searchBody(query));
    if (response.status !== 200 || response.body.results.length === 0) throw new Error(`search "${query}" answered ${response.status} with ${JSON.stringify(response.body).slice(0, 200)}`);
  };
  // The same queries on the index, exactly as the service sends them (IndexRetrieval.indexQuery: the
  // embedded query, and the sync_id filter when deleted connections' chunks may linger).
  const principal = await server.running.core.services.auth.authenticateApiKey(prepared.apiKey);
  const retrieval = server.running.core.services.search.retrieval;
  const scope = await retrieval.scope(principal, READABLE_ID);
  const indexQueries = new Map<string, VectorQuery>();
  for (const query of queries) indexQueries.set(query, (await retrieval.indexQuery(scope, { text: query, strategy: 'hybrid', filter: [], limit, offset: 0 }))!);
  const rawQuery = (query: string, overrides: Partial<VectorQuery> = {}) => index.search(collectionId, { ...indexQueries.get(query)!, ...overrides }).then(() => undefined);
  if (values.results) await writeResults(values.results, index, collectionId, [...indexQueries.values()]);

  t0 = performance.now();
  // Warm-up: every query once on the index (its caches, the page cache), a few through REST (JIT).
  await timeConcurrently(queries, 1, rawQuery);
  await timeConcurrently(queries.slice(0, 30), 1, search);
  // One client: REST and raw alternate query by query (and which goes first), so that both see the
  // same caches and the same background load; their ratio is then a fair one.
  const single: number[] = [];
  const rawSingle: number[] = [];
  // CPU time of the whole process (JS and LanceDB's threads) per query: steadier than latency on a
  // shared host, whose other load stretches latencies but not the work done.
  // The main thread's share of it (JS, and the synchronous part of LanceDB's native calls); the rest
  // runs on LanceDB's threads (and, through REST, the embedder's and the embedded database's threads).
  const cpuMs = { rest: 0, raw: 0 };
  const mainThreadCpuMs = { rest: 0, raw: 0 };
  for (const [i, query] of queries.entries()) {
    const timed = async (run: (query: string) => Promise<void>, into: number[]) => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const mainThreadCpu = process.threadCpuUsage();
      await run(query);
      into.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      const usedOnMainThread = process.threadCpuUsage(mainThreadCpu);
      const path = into === single ? 'rest' : 'raw';
      cpuMs[path] += (used.user + used.system) / 1000;
      mainThreadCpuMs[path] += (usedOnMainThread.user + usedOnMainThread.system) / 1000;
    };
    if (i % 2 === 0) await timed(search, single).then(() => timed(rawQuery, rawSingle));
    else await timed(rawQuery, rawSingle).then(() => timed(search, single));
  }
  single.sort((a, b) => a - b);
  rawSingle.sort((a, b) => a - b);
  const concurrent = await timeConcurrently([...queries, ...queries], clients, search);
  const rawConcurrent = await timeConcurrently([...queries, ...queries], clients, (query) => rawQuery(query));
  const outOfProcess = await measureOutOfProcess(queries, rawQuery, server.url, prepared.apiKey);
  const embedding = await timeConcurrently(queries, 1, async (query) => void (await embedder.embed([query])));
  const recall = await recallOfExactScan(index, dataDir ?? server.dataDir, collectionId, queries.map((query) => indexQueries.get(query)!));
  const memoryAfterQueries = process.memoryUsage();

  const p50 = percentile(single, 50);
  const p95 = percentile(single, 95);
  const rawP50 = percentile(rawSingle, 50);
  const throughput = concurrent.latencies.length / concurrent.seconds;
  const check = (ok: boolean) => (ok ? 'ok' : 'MISSED');
  console.log(`\nInstant hybrid search, limit ${limit}, ${chunks} chunks (${stats?.fragmentStats?.numFragments ?? '?'} fragments, ${stats?.versions ?? '?'} versions${stats && JSON.stringify(stats.layout) !== JSON.stringify(CURRENT_LAYOUT) ? `, a table of an older layout (${JSON.stringify(stats.layout)}): slower or larger on disk (--rebuild)` : ''}), ${queries.length} queries${zipf ? ', Zipfian vocabulary (--vocabulary zipf)' : ''}; measured in ${elapsed(t0)}`);
  console.log(`REST, 1 client:          ${summary(single)}`);
  console.log(`REST, ${clients} clients:         ${throughput.toFixed(1)} req/s  ${summary(concurrent.latencies)}`);
  console.log(`raw index, 1 client:     ${summary(rawSingle)}   (query embedding p50 ${ms(percentile(embedding.latencies, 50))}, not in raw)`);
  console.log(`raw index, ${clients} clients:    ${(rawConcurrent.latencies.length / rawConcurrent.seconds).toFixed(1)} queries/s  ${summary(rawConcurrent.latencies)}`);
  console.log(`REST p50 / raw p50:      ${(p50 / rawP50).toFixed(2)}   (REST overhead p50 ≈ ${ms(p50 - rawP50)})`);
  console.log(`CPU per query, 1 client: REST ${ms(cpuMs.rest / queries.length)}, raw ${ms(cpuMs.raw / queries.length)} (process CPU: JS and LanceDB threads)`);
  console.log(
    `  on the main thread:     REST ${ms(mainThreadCpuMs.rest / queries.length)}, raw ${ms(mainThreadCpuMs.raw / queries.length)} (JS and native calls' synchronous part; the rest is LanceDB's threads, and through REST the embedder's and the database's)`,
  );
  const outP50 = percentile(outOfProcess.rest, 50);
  const outThroughput = outOfProcess.concurrent.latencies.length / outOfProcess.concurrent.seconds;
  console.log(`REST, the client out of process (its own process, node:http keep-alive, as wrk or autocannon; REST and raw in alternate blocks of ${outOfProcess.block} queries):`);
  console.log(`  1 client:              ${summary(outOfProcess.rest)}   raw index in the blocks between: ${summary(outOfProcess.raw)}   (REST overhead p50 ≈ ${ms(outP50 - percentile(outOfProcess.raw, 50))})`);
  console.log(`  ${clients} clients:             ${outThroughput.toFixed(1)} req/s  ${summary(outOfProcess.concurrent.latencies)}`);
  console.log(
    `  CPU per query:         REST ${ms(outOfProcess.cpuMs.rest)}, raw ${ms(outOfProcess.cpuMs.raw)}; on the main thread REST ${ms(outOfProcess.mainThreadCpuMs.rest)}, raw ${ms(outOfProcess.mainThreadCpuMs.raw)} (the server's process alone: the client's CPU is not in it)`,
  );
  if (recall) {
    console.log(
      `recall of the exact scan (${recall.queries} queries, top ${limit} documents): hybrid ${recall.hybrid.toFixed(3)}, semantic ${recall.semantic.toFixed(3)}  (the IVF index as served, against all ${stats ? vectorIndexPartitions(stats.indices) : '?'} partitions read)`,
    );
  }
  console.log(
    `memory (process RSS, API + worker + embedder threads + LanceDB): ${mib(memoryAfterBuild.rss)} after the dataset was ready, ${mib(memoryAfterQueries.rss)} after the queries (JS heap ${mib(memoryAfterQueries.heapUsed)})`,
  );
  console.log(
    `targets (issue 18, on its 2-core host): p50 ≤ 10 ms ${check(p50 <= 10)}, p95 ≤ 25 ms ${check(p95 <= 25)}, ${clients} clients ≥ 150 req/s ${check(throughput >= 150)}, recall ≥ 0.99 ${recall ? check(recall.hybrid >= 0.99) : 'not measured (not LanceDB)'}`,
  );
  const outP95 = percentile(outOfProcess.rest, 95);
  console.log(`  the same, the client out of process: p50 ≤ 10 ms ${check(outP50 <= 10)}, p95 ≤ 25 ms ${check(outP95 <= 25)}, ${clients} clients ≥ 150 req/s ${check(outThroughput >= 150)}`);

  if (values.breakdown) {
    console.log('\nbreakdown (1 client):');
    const semantic = await timeConcurrently(queries, 1, (query) => rawQuery(query, { strategy: 'semantic' }));
    const keyword = await timeConcurrently(queries, 1, (query) => rawQuery(query, { strategy: 'keyword' }));
    const liveFilter = [{ conditions: [{ field: 'service_system_metadata.sync_id' as const, operator: 'in' as const, value: [connectionId] }] }];
    const filtered = await timeConcurrently(queries, 1, (query) => rawQuery(query, { filter: liveFilter }));
    console.log(`raw semantic alone:      ${summary(semantic.latencies)}`);
    console.log(`raw keyword alone:       ${summary(keyword.latencies)}`);
    console.log(`raw hybrid + sync_id filter (what searches send while a deleted connection's chunks linger): ${summary(filtered.latencies)}`);
    // Queries one after another keep LanceDB's threads (and the host's CPUs) awake; a pause before
    // each, as between a client's requests, lets them sleep: does the query pay their waking?
    const afterPause = await rawAfterPauses(queries, [0, 1, 3], rawQuery);
    console.log(`raw hybrid after a pause: ${afterPause.map(({ pauseMs, latencies }) => `${pauseMs} ms before each: ${summary(latencies)}`).join(';  ')}  (every query after each pause)`);
    // An empty collection: everything of the REST path but the index query and the result shaping.
    await call('DELETE', '/collections/bench-empty'); // left by an interrupted run
    await call('POST', '/collections', { name: 'Bench empty', readable_id: 'bench-empty' });
    const empty = await timeConcurrently(queries, 1, async (query) => {
      const response = await call('POST', '/collections/bench-empty/search/instant', { query, retrieval_strategy: 'hybrid', limit });
      if (response.status !== 200) throw new Error(`empty search answered ${response.status}`);
    });
    await call('DELETE', '/collections/bench-empty');
    console.log(`REST fixed cost (empty collection): ${summary(empty.latencies)}`);
    // Where a search's time goes in the server: the client out of process, one request at a time.
    const bodies = searchBodies(queries);
    await withSearchLoad(server.url, prepared.apiKey, bodies, async (restLoad) => {
      const spans = measureRestSpans(server.running.server!, server.running.core.services.search, index);
      const measured = await restLoad(bodies, 1).catch((error: unknown) => {
        spans.stop(); // the wrapped methods restored before the error goes on
        throw error;
      });
      console.log('REST search, the client out of process, p50 of each span:');
      for (const line of describeRestSpans(spans.stop(), measured.latencies)) console.log(line);
    });
  }
} catch (error) {
  // A dataset made by an older version may no longer fit what the service expects (index columns, model).
  if (reused) console.error('\nThe dataset was reused from an earlier run: if the service changed how it indexes or embeds, run again with --rebuild.');
  throw error;
} finally {
  t0 = performance.now();
  await server.running.stop();
  console.log(`\nserver stopped in ${elapsed(t0)}`);
  if (!dataDir) {
    t0 = performance.now();
    await server.discard();
    console.log(`temporary data directory removed in ${elapsed(t0)}`);
  }
  // Anything still holding the event loop after stop() is a shutdown bug: name it rather than hang.
  setTimeout(() => {
    console.error('still running 10 s after stop; active resources:', process.getActiveResourcesInfo());
    process.exit(1);
  }, 10_000).unref();
}
