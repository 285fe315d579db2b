/**
 * Documentation search quality: a folder of real documentation (a directory, or a Debian package's
 * documentation such as postgresql-doc-15), questions generated from its own structure (see
 * bench/docs/questions.ts), each answered by one file. The corpus is copied into a working folder
 * and synced through a `local_folder` connection of an in-process Catchment (embedded deployment);
 * every question is then asked through REST in each tier:
 *   semantic, keyword, hybrid   POST …/search/instant with that retrieval_strategy
 *   classic                     POST …/search/classic
 *   agentic                     POST …/search/agentic (the built-in agent unless CATCHMENT_LLM_URL is set)
 * For dev and test separately it prints recall@10 and MRR@10 of the answering file (a result's
 * document is its entity_id; ranks count distinct documents, first occurrence), the average number of
 * distinct documents among the first ten results, how many responses held a document twice, and the
 * p50 latency of the REST call, then recall@10 by kind of question.
 *
 *   npm run bench:docs -- <directory | package> [more corpora…] [--split dev|test|both] [--tiers semantic,keyword,hybrid,classic,agentic]
 *                         [--kinds faq,summary,heading,paraphrase,body] [--limit 10] [--max-questions N] [--questions 300] [--per-file 3] [--seed 13]
 *                         [--exclude GLOB …] [--print-questions] [--details FILE]
 *
 * --kinds          the kinds of question asked (default all; see bench/docs/questions.ts): faq, summary and heading reuse the
 *                  documents' words, paraphrase and body (WordNet synonyms, another template, sentences from inside sections) do not.
 * --limit          the `limit` of every search (default 10: the page a user sees).
 * --max-questions  at most N questions per split and kind (the first N: a fast, stable subset for iterating).
 * --questions      faq, summary and heading questions generated per corpus, both splits (default 300); --per-file caps one
 *                  file's share; each gets a paraphrase where WordNet finds one, and half as many body questions come on top.
 * --exclude        globs of paths (relative to the corpus directory) left out of the corpus.
 * --print-questions  prints the generated questions as JSON lines and stops (no service started).
 * --details FILE   writes one JSON line per question and tier: the question, its answer and the ranked documents.
 * The service's settings (embedder, hybrid weight, rerank, language model…) come from CATCHMENT_* variables of the environment.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startTestServer } from '../test/support/harness.js';
import { api, waitForJob, type Api } from '../test/support/sync-helpers.js';
import { copyCorpus, resolveSource, structureOf } from './docs/corpus.js';
import { makeQuestions, QUESTION_KINDS, type Question, type QuestionKind, type Split } from './docs/questions.js';
import { WordNet } from './docs/wordnet.js';
import { percentile } from './stats.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    split: { type: 'string', default: 'both' },
    tiers: { type: 'string', default: 'semantic,keyword,hybrid,classic,agentic' },
    kinds: { type: 'string', default: QUESTION_KINDS.join(',') },
    limit: { type: 'string', default: '10' },
    'max-questions': { type: 'string' },
    questions: { type: 'string', default: '300' },
    'per-file': { type: 'string', default: '3' },
    seed: { type: 'string', default: '13' },
    exclude: { type: 'string', multiple: true, default: [] },
    'print-questions': { type: 'boolean', default: false },
    details: { type: 'string' },
  },
});
const TIERS = ['semantic', 'keyword', 'hybrid', 'classic', 'agentic'] as const;
type Tier = (typeof TIERS)[number];
const tiers = values.tiers!.split(',').map((name) => name.trim()).filter(Boolean) as Tier[];
for (const tier of tiers) if (!TIERS.includes(tier)) throw new Error(`Unknown tier ${tier}: one of ${TIERS.join(', ')}`);
const kinds = values.kinds!.split(',').map((name) => name.trim()).filter(Boolean) as QuestionKind[];
for (const kind of kinds) if (!QUESTION_KINDS.includes(kind)) throw new Error(`Unknown kind ${kind}: one of ${QUESTION_KINDS.join(', ')}`);
const splits: Split[] = values.split === 'both' ? ['dev', 'test'] : [values.split as Split];
for (const split of splits) if (split !== 'dev' && split !== 'test') throw new Error(`--split is dev, test or both, not ${values.split}`);
const limit = Number(values.limit);
const maxQuestions = values['max-questions'] ? Number(values['max-questions']) : Infinity;
if (positionals.length === 0) throw new Error('Give a documentation directory or an installed Debian package, e.g. npm run bench:docs -- postgresql-doc-15');

/** One tier's call: the distinct documents of its results in order, whether one came twice, and the REST latency. */
interface Answer {
  documents: string[];
  results: number;
  /** Distinct documents among the first ten results as returned. */
  distinctInTen: number;
  repeated: boolean;
  ms: number;
}

async function ask(call: Api, collection: string, tier: Tier, question: string): Promise<Answer> {
  const [route, body] =
    tier === 'classic' || tier === 'agentic' ? [tier, { query: question, limit }] : ['instant', { query: question, retrieval_strategy: tier, limit }];
  const t0 = performance.now();
  const response = await call('POST', `/collections/${collection}/search/${route}`, body);
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`${tier} search answered ${response.status}: ${JSON.stringify(response.body)}`);
  const ids = (response.body.results as { entity_id: string }[]).map((result) => result.entity_id);
  const documents = [...new Set(ids)];
  return { documents, results: ids.length, distinctInTen: new Set(ids.slice(0, 10)).size, repeated: documents.length < ids.length, ms };
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/** The row of one tier over the questions of one split. */
function row(tier: string, questions: Question[], answers: Answer[]): string {
  const ranks = answers.map((answer, i) => answer.documents.slice(0, 10).indexOf(questions[i]!.answer));
  const recall = mean(ranks.map((rank) => (rank >= 0 ? 1 : 0)));
  const mrr = mean(ranks.map((rank) => (rank >= 0 ? 1 / (rank + 1) : 0)));
  const distinct = mean(answers.map((answer) => answer.distinctInTen));
  const repeated = answers.filter((answer) => answer.repeated).length;
  const results = mean(answers.map((answer) => answer.results));
  // Recall@10 of each kind of question: the documents' own words (faq, summary, heading) and the harder paraphrase and body behave differently.
  const byKind = kinds
    .map((kind) => [kind, ranks.filter((_, i) => questions[i]!.kind === kind)] as const)
    .filter(([, kindRanks]) => kindRanks.length > 0)
    .map(([kind, kindRanks]) => `${kind} ${mean(kindRanks.map((rank) => (rank >= 0 ? 1 : 0))).toFixed(2)}`);
  return `${tier.padEnd(9)} ${recall.toFixed(3).padStart(9)} ${mrr.toFixed(3).padStart(6)} ${distinct.toFixed(1).padStart(8)} ${results.toFixed(1).padStart(7)} ${`${repeated}/${answers.length}`.padStart(8)} ${percentile(answers.map((a) => a.ms).sort((a, b) => a - b), 50).toFixed(1).padStart(7)}   ${byKind.join('  ')}`;
}

const seed = Number(values.seed);
const wordnet = kinds.includes('paraphrase') || kinds.includes('body') ? new WordNet() : undefined;
const root = mkdtempSync(path.join(tmpdir(), 'catchment-bench-docs-'));
const details: string[] = [];
try {
  for (const [index, source] of positionals.entries()) {
    const started = performance.now();
    const directory = resolveSource(source);
    const folder = path.join(root, `corpus-${index}`);
    const files = copyCorpus(directory, folder, values.exclude);
    const questions = makeQuestions(files.map(structureOf), { seed, perFile: Number(values['per-file']), total: Number(values.questions), wordnet }).filter((question) =>
      kinds.includes(question.kind),
    );
    if (values['print-questions']) {
      for (const question of questions) console.log(JSON.stringify(question));
      continue;
    }
    const bySplit = new Map(
      splits.map((split) => [split, kinds.flatMap((kind) => questions.filter((question) => question.split === split && question.kind === kind).slice(0, maxQuestions))]),
    );
    const counts = kinds.map((kind) => `${questions.filter((question) => question.kind === kind).length} ${kind}`).join(', ');
    console.log(`\n${source} (${directory}): ${files.length} files; ${questions.length} questions (${counts}); ${splits.map((split) => `${bySplit.get(split)!.length} ${split}`).join(', ')} asked`);

    const dataDir = path.join(root, `data-${index}`);
    const apiKey = `ck_bench_docs_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
    const passthrough = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CATCHMENT_'))) as Record<string, string>;
    const server = await startTestServer({
      deployment: 'embedded',
      dataDir,
      env: { CATCHMENT_LOG_LEVEL: 'warn', ...passthrough, CATCHMENT_BOOTSTRAP_API_KEY: apiKey, CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_LOCAL_FOLDER_ROOTS: folder },
    });
    try {
      const call = api(server.url, apiKey);
      const t0 = performance.now();
      const collectionId: string = (await call('POST', '/collections', { name: 'Documentation', readable_id: 'docs' })).body.id;
      const connection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'docs', config: { path: folder } })).body;
      const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
      const synced = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'], 3_600_000);
      if (synced.status !== 'COMPLETED') throw new Error(`sync failed: ${synced.error}`);
      // The index optimize the sync's end leaves running after COMPLETED: measured after it, as before it moved there.
      await (await server.running.core.vectors()).settled(collectionId);
      console.log(`synced in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${synced.entities_inserted ?? '?'} entities, ${synced.chunks_written} chunks; limit ${limit}`);
      for (const split of splits) {
        const asked = bySplit.get(split)!;
        console.log(`\n${split} (${asked.length} questions)\ntier      recall@10 MRR@10 docs@10 results repeated  p50 ms   recall@10 by kind`);
        for (const tier of tiers) {
          const answers: Answer[] = [];
          for (const question of asked) {
            answers.push(await ask(call, 'docs', tier, question.question));
            if (values.details) details.push(JSON.stringify({ corpus: source, tier, ...question, documents: answers.at(-1)!.documents.slice(0, 10) }));
          }
          console.log(row(tier, asked, answers));
        }
      }
    } finally {
      await server.stop();
    }
    console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  if (values.details) writeFileSync(values.details, details.join('\n') + '\n');
} finally {
  rmSync(root, { recursive: true, force: true });
}
