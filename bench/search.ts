/**
 * Instant hybrid search over ~100,000 chunks, through REST and straight on the index. The chunks are
 * ingested through the service (a `stub` connection of small entities: one chunk each, no folders),
 * in the embedded deployment with the default embedder. Prints, for varied queries:
 * - REST p50/p95 latency for one client, and throughput and p50/p95 with `--clients` concurrent ones;
 * - the raw index query p50 (VectorIndex.search with the query the service builds: same vector, text,
 *   filter, page and weight) and the embedding p50, and the ratio REST p50 / raw p50.
 *
 *   npm run bench:search [-- --entities 100000 --queries 300 --limit 10 --clients 8]
 * Targets (issue 4): p50 ≤ 30 ms, p95 ≤ 80 ms, REST/raw ≤ 2.
 *
 * The stub's texts draw on a vocabulary of 60 words, so every query word matches a large share of
 * the chunks: a hard case for BM25, whose cost grows with the matches it scores.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { hybridKeywordWeight } from '../src/config.js';
import { stubEntity } from '../src/connectors/stub/index.js';
import { tokenize } from '../src/platform/embeddings/word-vector-core.js';
import { startTestServer } from '../test/support/harness.js';
import { api, waitForJob, type Api } from '../test/support/sync-helpers.js';

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '300' },
    limit: { type: 'string', default: '10' },
    clients: { type: 'string', default: '8' },
  },
});
const entityCount = Number(values.entities);
const limit = Number(values.limit);
const clients = Number(values.clients);
const config = { entity_count: entityCount, seed: 11, size_mix: 'small', hierarchy_depth: 0, code_files: false, delay_ms: 0, revision: 0 };

/** Deterministic, varied queries: 2–4 words of some entity's text; every fourth also names an entity ("document 4821"). */
function makeQueries(count: number): string[] {
  return Array.from({ length: count }, (_, q) => {
    const i = (q * 7919) % entityCount;
    const words = tokenize(stubEntity(i, config as never).text).filter((word) => !/^\d+$/.test(word) && word !== 'document');
    const picked = Array.from({ length: 2 + (q % 3) }, (_, k) => words[(q * 31 + k * 17) % words.length]!);
    return q % 4 === 0 ? `document ${i} ${picked[0]}` : picked.join(' ');
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Runs `run` once per query, `concurrency` at a time; returns sorted latencies and the wall time. */
async function measure(queries: string[], concurrency: number, run: (query: string) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < queries.length) {
        const query = queries[next++]!;
        const t0 = performance.now();
        await run(query);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
}

const server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_SYNC_BATCH_SIZE: '2000', CATCHMENT_LOG_LEVEL: 'warn' } });
try {
  const call: Api = api(server.url, server.apiKey);
  const collection = (await call('POST', '/collections', { name: 'Bench search', readable_id: 'bench-search' })).body;
  const connection = (
    await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'bench-search', authentication: { credentials: { token: 'bench' } }, config, sync_immediately: false })
  ).body;
  let t0 = performance.now();
  const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
  const synced = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'], 3_600_000);
  if (synced.status !== 'COMPLETED') throw new Error(`sync failed: ${synced.error}`);
  const index = await server.running.core.vectors();
  const chunks = await index.count(collection.id);
  console.log(`\n${chunks} chunks ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s; hybrid, limit ${limit}`);

  const queries = makeQueries(Number(values.queries));
  const search = async (query: string) => {
    const response = await call('POST', '/collections/bench-search/search/instant', { query, retrieval_strategy: 'hybrid', limit });
    if (response.status !== 200 || response.body.results.length === 0) throw new Error(`search "${query}" answered ${response.status} with ${JSON.stringify(response.body).slice(0, 200)}`);
  };
  await measure(queries.slice(0, 30), 1, search); // warm-up: table handles, caches, JIT

  const single = await measure(queries, 1, search);
  const concurrent = await measure([...queries, ...queries], clients, search);

  // The same queries on the index, as the service sends them (its filter keeps live connections only).
  const embedder = await server.running.core.embedder();
  const filter = [{ conditions: [{ field: 'service_system_metadata.sync_id' as const, operator: 'in' as const, value: [connection.id] }] }];
  const vectors = new Map<string, Float32Array>();
  const embedding = await measure(queries, 1, async (query) => void vectors.set(query, (await embedder.embed([query]))[0]!));
  const keywordWeight = hybridKeywordWeight(server.config);
  const raw = await measure(queries, 1, async (query) => {
    await index.search(collection.id, { strategy: 'hybrid', vector: vectors.get(query), text: query, filter, limit, offset: 0, keywordWeight });
  });

  const p50 = percentile(single.latencies, 0.5);
  const rawP50 = percentile(raw.latencies, 0.5);
  console.log(`REST, 1 client:         p50 ${ms(p50)}  p95 ${ms(percentile(single.latencies, 0.95))}  (${queries.length} queries)`);
  console.log(
    `REST, ${clients} clients:        ${(concurrent.latencies.length / concurrent.seconds).toFixed(0)} req/s  p50 ${ms(percentile(concurrent.latencies, 0.5))}  p95 ${ms(percentile(concurrent.latencies, 0.95))}`,
  );
  console.log(`raw index query:        p50 ${ms(rawP50)}  p95 ${ms(percentile(raw.latencies, 0.95))}   (query embedding p50 ${ms(percentile(embedding.latencies, 0.5))})`);
  console.log(`REST p50 / raw p50:     ${(p50 / rawP50).toFixed(2)}`);
} finally {
  await server.stop();
}
