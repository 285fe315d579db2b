/**
 * Retrieval quality on a BEIR-format dataset: the corpus is ingested through the service (written as
 * Markdown files, synced by a local_folder connection), then every query of the split runs through
 * REST instant search. Prints nDCG@10 and recall@100 per retrieval strategy.
 *
 *   npm run bench:quality [-- <dataset dir>] [--split test|train] [--strategies keyword,semantic,hybrid]
 * The dataset directory defaults to ../shared/eval/scifact; tune on train, report test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startTestServer } from '../test/support/harness.js';
import { api, waitForJob } from '../test/support/sync-helpers.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { split: { type: 'string', default: 'test' }, strategies: { type: 'string', default: 'keyword,semantic,hybrid' } },
});
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

function ndcgAt10(ranked: string[], relevant: Map<string, number>): number {
  const dcg = ranked.slice(0, 10).reduce((sum, id, i) => sum + ((2 ** (relevant.get(id) ?? 0) - 1) / Math.log2(i + 2)), 0);
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, 10).reduce((sum, gain, i) => sum + ((2 ** gain - 1) / Math.log2(i + 2)), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}
const recallAt100 = (ranked: string[], relevant: Map<string, number>) => ranked.slice(0, 100).filter((id) => relevant.has(id)).length / relevant.size;

const folder = mkdtempSync(path.join(tmpdir(), 'catchment-beir-'));
for (const doc of corpus) writeFileSync(path.join(folder, `${doc._id}.md`), `# ${doc.title}\n\n${doc.text}\n`);
// The service's own settings (embedder, hybrid weight…) come from the environment, as for `npm start`.
const passthrough = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CATCHMENT_EMBEDD') || name === 'CATCHMENT_HYBRID_KEYWORD_WEIGHT')) as Record<string, string>;
const server = await startTestServer({ deployment: 'embedded', env: { ...passthrough, CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_LOCAL_FOLDER_ROOTS: folder, CATCHMENT_LOG_LEVEL: 'warn' } });
try {
  const call = api(server.url, server.apiKey);
  await call('POST', '/collections', { name: 'BEIR dataset', readable_id: 'beir' });
  let t0 = performance.now();
  const connection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'beir', config: { path: folder } })).body;
  const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
  const synced = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'], 3_600_000);
  if (synced.status !== 'COMPLETED') throw new Error(`ingest failed: ${synced.error}`);
  console.log(`\n${path.basename(dataset)}: ${corpus.length} documents ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s (${synced.chunks_written} chunks); ${queries.length} ${values.split} queries`);
  console.log('strategy    nDCG@10  recall@100  p50 ms');
  for (const strategy of values.strategies!.split(',')) {
    let ndcg = 0;
    let recall = 0;
    const latencies: number[] = [];
    for (const query of queries) {
      t0 = performance.now();
      const { body } = await call('POST', '/collections/beir/search/instant', { query: query.text, retrieval_strategy: strategy, limit: 200 });
      latencies.push(performance.now() - t0);
      // One entry per document, at its best chunk's rank.
      const ranked = [...new Set((body.results as { entity_id: string }[]).map((r) => r.entity_id.replace(/\.md$/, '')))];
      ndcg += ndcgAt10(ranked, qrels.get(query._id)!);
      recall += recallAt100(ranked, qrels.get(query._id)!);
    }
    latencies.sort((a, b) => a - b);
    console.log(`${strategy.padEnd(10)}  ${(ndcg / queries.length).toFixed(3).padStart(7)}  ${(recall / queries.length).toFixed(3).padStart(10)}  ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1).padStart(6)}`);
  }
} finally {
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
}
