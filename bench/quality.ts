/**
 * Retrieval quality on a BEIR-format dataset: the corpus is ingested through the service (written as
 * Markdown files, synced by a local_folder connection), then every query of the split runs through
 * REST: instant search for the retrieval strategies keyword, semantic and hybrid, and classic search
 * (`POST …/search/classic`, its planner included) for `classic`. Prints nDCG@10 and recall@100 of each,
 * from a search for the first 200 results, and nDCG@10 of the first page alone (a search with limit
 * 10, as users ask: the index reads fewer candidates for it than for 200).
 *
 *   npm run bench:quality [-- <dataset dir>] [--split test|train] [--strategies keyword,semantic,hybrid,classic] [--cache <dir>]
 * The dataset directory defaults to ../shared/eval/scifact; the split's queries are
 * `queries.<split>.jsonl` (or `queries.jsonl`) and its judgements `qrels/<split>.tsv`. Tune on train,
 * report test. `--cache <dir>` keeps the service's data directory (and the corpus files it synced)
 * there: a later run with the same dataset and embedder settings searches it without ingesting again.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startTestServer } from '../test/support/harness.js';
import { api, waitForJob } from '../test/support/sync-helpers.js';
import { ndcgAt10 } from './stats.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    split: { type: 'string', default: 'test' },
    strategies: { type: 'string', default: 'keyword,semantic,hybrid,classic' },
    cache: { type: 'string' },
  },
});
const STRATEGIES = ['keyword', 'semantic', 'hybrid', 'classic'];
const strategies = values.strategies!.split(',').map((name) => name.trim()).filter(Boolean);
for (const name of strategies) if (!STRATEGIES.includes(name)) throw new Error(`Unknown strategy ${name}: one of ${STRATEGIES.join(', ')}`);
const dataset = path.resolve(positionals[0] ?? new URL('../../shared/eval/scifact', import.meta.url).pathname);
if (!existsSync(path.join(dataset, 'corpus.jsonl'))) throw new Error(`${dataset} is not a BEIR dataset directory (no corpus.jsonl)`);

const readJsonl = <T>(file: string): T[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);
const corpus = readJsonl<{ _id: string; title: string; text: string }>(path.join(dataset, 'corpus.jsonl'));
const queriesFile = [`queries.${values.split}.jsonl`, 'queries.jsonl'].map((name) => path.join(dataset, name)).find(existsSync)!;
const qrels = new Map<string, Map<string, number>>();
for (const line of readFileSync(path.join(dataset, 'qrels', `${values.split}.tsv`), 'utf8').split('\n').slice(1).filter(Boolean)) {
  const [queryId, docId, score] = line.split('\t');
  if (!qrels.has(queryId!)) qrels.set(queryId!, new Map());
  qrels.get(queryId!)!.set(docId!, Number(score));
}
const queries = readJsonl<{ _id: string; text: string }>(queriesFile).filter((query) => qrels.has(query._id));

const recallAt100 = (ranked: string[], relevant: Map<string, number>) => ranked.slice(0, 100).filter((id) => relevant.has(id)).length / relevant.size;

// The service's own settings (embedder, hybrid weight…) come from the environment, as for `npm start`.
const passthrough = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CATCHMENT_EMBEDD') || name === 'CATCHMENT_HYBRID_KEYWORD_WEIGHT')) as Record<string, string>;
// What the ingested collection depends on: a cache made from anything else is not reused.
const fingerprint = createHash('sha256')
  .update(readFileSync(path.join(dataset, 'corpus.jsonl')))
  .update(JSON.stringify(Object.entries(passthrough).filter(([name]) => name.startsWith('CATCHMENT_EMBEDD')).sort()))
  .digest('hex');
const cache = values.cache ? path.resolve(values.cache) : null;
const root = cache ?? mkdtempSync(path.join(tmpdir(), 'catchment-beir-'));
const stamp = path.join(root, 'ingested.json');
const cached = cache !== null && existsSync(stamp) && (JSON.parse(readFileSync(stamp, 'utf8')) as { fingerprint: string }).fingerprint === fingerprint;
const folder = path.join(root, 'corpus');
const dataDir = path.join(root, 'data');
if (cache !== null && !cached) {
  // Only a directory this benchmark made (or an empty one) is emptied for a new ingest.
  if (existsSync(cache) && readdirSync(cache).length > 0 && !existsSync(stamp)) throw new Error(`--cache ${cache} is not empty and was not made by this benchmark`);
  for (const made of [stamp, folder, dataDir]) rmSync(made, { recursive: true, force: true });
}
mkdirSync(dataDir, { recursive: true });
if (!cached) {
  mkdirSync(folder, { recursive: true });
  for (const doc of corpus) writeFileSync(path.join(folder, `${doc._id}.md`), `# ${doc.title}\n\n${doc.text}\n`);
}
// A fixed key: the one of the default organization made at the first start, valid on the cached data directory too.
const apiKey = `ck_bench_quality_${fingerprint.slice(0, 32)}`;
const started = performance.now();
const server = await startTestServer({
  deployment: 'embedded',
  dataDir,
  env: { ...passthrough, CATCHMENT_BOOTSTRAP_API_KEY: apiKey, CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_LOCAL_FOLDER_ROOTS: folder, CATCHMENT_LOG_LEVEL: 'warn' },
});
try {
  const call = api(server.url, apiKey);
  let t0 = performance.now();
  if (cached) {
    console.log(`\n${path.basename(dataset)}: ${corpus.length} documents, ingested earlier (cache ${cache}); ${queries.length} ${values.split} queries`);
  } else {
    const collectionId: string = (await call('POST', '/collections', { name: 'BEIR dataset', readable_id: 'beir' })).body.id;
    const connection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'beir', config: { path: folder } })).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    const synced = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'], 3_600_000);
    if (synced.status !== 'COMPLETED') throw new Error(`ingest failed: ${synced.error}`);
    // The index optimize the sync's end leaves running after COMPLETED: measured after it, as before it moved there.
    await (await server.running.core.vectors()).settled(collectionId);
    if (cache !== null) writeFileSync(stamp, JSON.stringify({ fingerprint, dataset, documents: corpus.length }));
    console.log(`\n${path.basename(dataset)}: ${corpus.length} documents ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s (${synced.chunks_written} chunks); ${queries.length} ${values.split} queries`);
  }
  console.log('strategy    nDCG@10  recall@100  p50 ms  page nDCG@10');
  const perQuery = new Map<string, number[]>();
  for (const strategy of strategies) {
    let ndcg = 0;
    let recall = 0;
    const latencies: number[] = [];
    const gains: number[] = [];
    perQuery.set(strategy, gains);
    let pageNdcg = 0;
    /** The documents of one search (one entry per document, at its best chunk's rank). */
    const search = async (text: string, limit: number) => {
      const { status, body } =
        strategy === 'classic'
          ? await call('POST', '/collections/beir/search/classic', { query: text, limit })
          : await call('POST', '/collections/beir/search/instant', { query: text, retrieval_strategy: strategy, limit });
      if (status !== 200) throw new Error(`${strategy} search answered ${status}: ${JSON.stringify(body)}`);
      return [...new Set((body.results as { entity_id: string }[]).map((r) => r.entity_id.replace(/\.md$/, '')))];
    };
    for (const query of queries) {
      t0 = performance.now();
      const ranked = await search(query.text, 200);
      latencies.push(performance.now() - t0);
      gains.push(ndcgAt10(ranked, qrels.get(query._id)!));
      ndcg += gains.at(-1)!;
      recall += recallAt100(ranked, qrels.get(query._id)!);
      pageNdcg += ndcgAt10(await search(query.text, 10), qrels.get(query._id)!);
    }
    latencies.sort((a, b) => a - b);
    const mean = (sum: number) => (sum / queries.length).toFixed(4);
    console.log(`${strategy.padEnd(10)}  ${mean(ndcg).padStart(7)}  ${mean(recall).padStart(10)}  ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1).padStart(6)}  ${mean(pageNdcg).padStart(12)}`);
  }
  // The targets compare strategies: their paired nDCG@10 differences, with a 95 % interval (normal approximation).
  for (const [a, b] of [['hybrid', 'keyword'], ['classic', 'hybrid']] as const) {
    const [x, y] = [perQuery.get(a), perQuery.get(b)];
    if (!x || !y) continue;
    const diffs = x.map((value, i) => value - y[i]!);
    const mean = diffs.reduce((sum, d) => sum + d, 0) / diffs.length;
    const sd = Math.sqrt(diffs.reduce((sum, d) => sum + (d - mean) ** 2, 0) / Math.max(1, diffs.length - 1));
    const better = diffs.filter((d) => d > 1e-9).length;
    const worse = diffs.filter((d) => d < -1e-9).length;
    console.log(`${a} − ${b}: ${mean >= 0 ? '+' : '−'}${Math.abs(mean).toFixed(4)} ± ${((1.96 * sd) / Math.sqrt(diffs.length)).toFixed(4)} nDCG@10 (${better} queries better, ${worse} worse)`);
  }
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await server.stop();
  if (cache === null) rmSync(root, { recursive: true, force: true });
}
