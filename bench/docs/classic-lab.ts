/**
 * A workbench for tuning classic search's ranking without a full bench:docs run per trial. It runs the
 * real ClassicSearch (heuristic planner, fusion, second stage) in this process over a Retrieval that
 * answers from instant hybrid searches of a synced Catchment, each asked once through REST and kept
 * on disk: after the first run a trial costs the ranking code alone (seconds). Lists are read
 * `--depth` documents deep and cut to what classic asks; deeper reads may break near-ties at the cut
 * differently from the service, so confirm a choice with bench:docs (dev) and bench:quality (train).
 *
 *   node --import @swc-node/register/esm-register bench/docs/classic-lab.ts <package | directory …> [--split dev] [--work DIR]
 *   node --import @swc-node/register/esm-register bench/docs/classic-lab.ts --beir ../shared/eval/scifact [--split train]
 *
 * Prints, per corpus, recall@10 and MRR@10 (docs) or nDCG@10 (BEIR) of instant hybrid (the original
 * question) and of classic, and how often classic lost instant's first document from its first ten.
 * `--work` (default /tmp/catchment-classic-lab) keeps each corpus's data directory and REST answers.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../../src/platform/logger.js';
import type { FilterGroup } from '../../src/platform/vectors/vector-index.js';
import { ClassicSearch } from '../../src/modules/search/classic/classic-search.js';
import { FIELD_WEIGHTS, type FieldWeights } from '../../src/modules/search/classic/document-fields.js';
import { HeuristicPlanner } from '../../src/modules/search/classic/heuristic-planner.js';
import type { Retrieval, SearchScope } from '../../src/modules/search/retrieval.js';
import type { SearchResultView } from '../../src/modules/search/search-result.js';
import type { TestServer } from '../../test/support/harness.js';
import { copyCorpus, resolveSource, structureOf } from './corpus.js';
import { makeQuestions } from './questions.js';
import { ndcgAt10 } from '../stats.js';
import { WordNet } from './wordnet.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    split: { type: 'string' },
    work: { type: 'string', default: '/tmp/catchment-classic-lab' },
    beir: { type: 'string' },
    depth: { type: 'string' },
    grid: { type: 'string' },
    misses: { type: 'boolean', default: false },
  },
});
/** Documents read per list: what classic reads for the benchmark's limit (50 for 10 results, 200 for bench:quality's 200). */
const depth = Number(values.depth ?? (values.beir ? 200 : 50));
/** Second-stage weights tried one after the other (each over the defaults), or just the defaults. */
const grid: Partial<FieldWeights>[] = values.grid ? JSON.parse(values.grid) : [{}];
const defaults = { ...FIELD_WEIGHTS };

/** A question, the documents that answer it (with their gains) and how it is scored. */
interface Case {
  question: string;
  relevant: Map<string, number>;
  /** The bench:docs kind of question (faq, summary, heading, paraphrase, body), for recall by kind. */
  kind?: string;
}

interface RestResult {
  entity_id: string;
  name: string;
  relevance_score: number;
  textual_representation: string;
  updated_at: string | null;
  service_system_metadata: { source_name: string; entity_type: string; chunk_index: number; sync_id: string | null };
}

/** What the lab keeps of a chunk (once, however many lists hold it) and of a ranked list (chunk keys and scores). */
interface StoredChunk {
  name: string;
  text: string;
  updatedAt: string | null;
  sourceName: string;
  entityType: string;
  syncId: string | null;
}
interface Stored {
  chunks: Record<string, StoredChunk>;
  lists: Record<string, [entityId: string, chunkIndex: number, score: number][]>;
}

function toView(chunks: Stored['chunks'], [entityId, chunkIndex, score]: [string, number, number]): SearchResultView {
  const chunk = chunks[`${entityId}\u0000${chunkIndex}`]!;
  return {
    entityId,
    name: chunk.name,
    relevanceScore: score,
    breadcrumbs: [],
    createdAt: null,
    updatedAt: chunk.updatedAt ? new Date(chunk.updatedAt) : null,
    textualRepresentation: chunk.text,
    serviceSystemMetadata: { sourceName: chunk.sourceName, entityType: chunk.entityType, chunkIndex, originalEntityId: entityId, syncId: chunk.syncId, syncJobId: null },
    access: { viewers: null, isPublic: null },
    webUrl: '',
    url: null,
    rawSourceFields: {},
  };
}

/** A synced corpus in a kept data directory, its REST answers cached on disk, the server started only when an answer is missing. */
class Corpus {
  private server: TestServer | null = null;
  private readonly cacheFile: string;
  private readonly cache: Stored;
  private readonly apiKey = 'ck_classic_lab_0123456789abcdef0123456789';

  constructor(
    private readonly dir: string,
    private readonly writeFiles: (folder: string) => void,
  ) {
    mkdirSync(dir, { recursive: true });
    this.cacheFile = path.join(dir, 'answers.json');
    this.cache = existsSync(this.cacheFile) ? JSON.parse(readFileSync(this.cacheFile, 'utf8')) : { chunks: {}, lists: {} };
  }

  async hybrid(text: string, filter: FilterGroup[]): Promise<SearchResultView[]> {
    const key = JSON.stringify([text, filter, depth]);
    if (!this.cache.lists[key]) {
      const { api } = await import('../../test/support/sync-helpers.js');
      const call = api((await this.start()).url, this.apiKey);
      const response = await call('POST', '/collections/classiclab/search/instant', { query: text, retrieval_strategy: 'hybrid', limit: depth, filter });
      if (response.status !== 200) throw new Error(`instant search answered ${response.status}: ${JSON.stringify(response.body)}`);
      this.cache.lists[key] = (response.body.results as RestResult[]).map((r) => {
        const metadata = r.service_system_metadata;
        this.cache.chunks[`${r.entity_id}\u0000${metadata.chunk_index}`] ??= {
          name: r.name,
          text: r.textual_representation,
          updatedAt: r.updated_at,
          sourceName: metadata.source_name,
          entityType: metadata.entity_type,
          syncId: metadata.sync_id,
        };
        return [r.entity_id, metadata.chunk_index, r.relevance_score];
      });
    }
    return this.cache.lists[key]!.map((entry) => toView(this.cache.chunks, entry));
  }

  private async start(): Promise<TestServer> {
    if (this.server) return this.server;
    const folder = path.join(this.dir, 'corpus');
    const synced = existsSync(path.join(this.dir, 'synced'));
    if (!synced) this.writeFiles(folder);
    const passthrough = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CATCHMENT_'))) as Record<string, string>;
    // Loaded only when an answer is missing: a trial over cached answers needs no server code.
    const [{ startTestServer }, { api, waitForJob }] = await Promise.all([import('../../test/support/harness.js'), import('../../test/support/sync-helpers.js')]);
    this.server = await startTestServer({
      deployment: 'embedded',
      dataDir: path.join(this.dir, 'data'),
      env: { CATCHMENT_LOG_LEVEL: 'warn', ...passthrough, CATCHMENT_BOOTSTRAP_API_KEY: this.apiKey, CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_LOCAL_FOLDER_ROOTS: folder },
    });
    if (!synced) {
      const call = api(this.server.url, this.apiKey);
      const collection = await call('POST', '/collections', { name: 'Classic lab', readable_id: 'classiclab' });
      if (collection.status !== 200 && collection.status !== 201) throw new Error(`collection answered ${collection.status}: ${JSON.stringify(collection.body)}`);
      const created = await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'classiclab', config: { path: folder } });
      if (created.status !== 200 && created.status !== 201) throw new Error(`connection answered ${created.status}: ${JSON.stringify(created.body)}`);
      const connection = created.body;
      const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
      const done = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'], 3_600_000);
      if (done.status !== 'COMPLETED') throw new Error(`sync failed: ${done.error}`);
      writeFileSync(path.join(this.dir, 'synced'), '');
    }
    return this.server;
  }

  async close(): Promise<void> {
    writeFileSync(this.cacheFile, JSON.stringify(this.cache));
    await this.server?.running.stop();
  }
}

async function evaluate(name: string, corpus: Corpus, cases: Case[], limit: number, idOf: (entityId: string) => string): Promise<void> {
  for (const weights of grid) {
    Object.assign(FIELD_WEIGHTS, defaults, weights);
    await evaluateOnce(`${name} ${JSON.stringify(weights)}`, corpus, cases, limit, idOf);
  }
}

async function evaluateOnce(name: string, corpus: Corpus, cases: Case[], limit: number, idOf: (entityId: string) => string): Promise<void> {
  const retrieval = { retrieve: (_scope: SearchScope, request: { text: string; filter: FilterGroup[]; limit: number }) => corpus.hybrid(request.text, request.filter).then((r) => r.slice(0, request.limit)) } as unknown as Retrieval;
  const classic = new ClassicSearch(retrieval, new HeuristicPlanner(), null, createLogger('silent'));
  const scope = { sourceNames: ['local_folder'], collection: { readableId: 'lab' } } as unknown as SearchScope;
  const sums = { hybrid: { recall: 0, mrr: 0, ndcg: 0 }, classic: { recall: 0, mrr: 0, ndcg: 0 } };
  let lostFirst = 0;
  /** Questions classic misses whose answer the question's own hybrid list (`depth` deep) holds: what a better second stage could still find. */
  let missedWithin = 0;
  const byKind = new Map<string, { n: number; hybrid: number; classic: number }>();
  for (const { question, relevant, kind } of cases) {
    const candidates = (await corpus.hybrid(question, [])).map((r) => idOf(r.entityId));
    const hybrid = candidates.slice(0, limit);
    const { results } = await classic.run(scope, { query: question, filter: [], limit, offset: 0 });
    const ranked = results.map((r) => idOf(r.entityId));
    if (hybrid[0] && !ranked.slice(0, 10).includes(hybrid[0])) lostFirst++;
    if (!ranked.slice(0, 10).some((id) => relevant.has(id)) && candidates.some((id) => relevant.has(id))) missedWithin++;
    if (values.misses) {
      const [h, c] = [hybrid, ranked].map((list) => list.slice(0, 10).findIndex((id) => relevant.has(id)) + 1);
      if (h !== c || c === 0) console.log(`  ${h === 0 ? '-' : h} → ${c === 0 ? '-' : c}  ${question}  [${[...relevant.keys()].join(' ')}]  classic: ${ranked.slice(0, 3).join(', ')}`);
    }
    for (const [tier, list] of [['hybrid', hybrid], ['classic', ranked]] as const) {
      const rank = list.slice(0, 10).findIndex((id) => relevant.has(id));
      sums[tier].recall += rank >= 0 ? 1 : 0;
      sums[tier].mrr += rank >= 0 ? 1 / (rank + 1) : 0;
      sums[tier].ndcg += ndcgAt10(list, relevant);
      if (kind) {
        const counts = byKind.get(kind) ?? { n: 0, hybrid: 0, classic: 0 };
        if (tier === 'hybrid') counts.n++;
        counts[tier] += rank >= 0 ? 1 : 0;
        byKind.set(kind, counts);
      }
    }
  }
  const n = cases.length;
  const figures = (tier: 'hybrid' | 'classic') => `recall@10 ${(sums[tier].recall / n).toFixed(3)} MRR@10 ${(sums[tier].mrr / n).toFixed(3)} nDCG@10 ${(sums[tier].ndcg / n).toFixed(4)}`;
  console.log(`${name} (${n}): hybrid ${figures('hybrid')} | classic ${figures('classic')} | instant's first lost ${lostFirst} | missed within the first ${depth} ${missedWithin}`);
  if (byKind.size > 0) console.log(`  recall@10 by kind, hybrid → classic: ${[...byKind].map(([kind, c]) => `${kind} ${(c.hybrid / c.n).toFixed(2)} → ${(c.classic / c.n).toFixed(2)}`).join('  ')}`);
}

const work = path.resolve(values.work!);
if (values.beir) {
  const dataset = path.resolve(values.beir);
  const split = values.split ?? 'train';
  const readJsonl = <T>(file: string): T[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(path.join(dataset, 'qrels', `${split}.tsv`), 'utf8').split('\n').slice(1).filter(Boolean)) {
    const [queryId, docId, score] = line.split('\t');
    if (!qrels.has(queryId!)) qrels.set(queryId!, new Map());
    qrels.get(queryId!)!.set(docId!, Number(score));
  }
  const queriesFile = [`queries.${split}.jsonl`, 'queries.jsonl'].map((name) => path.join(dataset, name)).find(existsSync)!;
  const cases = readJsonl<{ _id: string; text: string }>(queriesFile)
    .filter((query) => qrels.has(query._id))
    .map((query) => ({ question: query.text, relevant: qrels.get(query._id)! }));
  const corpus = new Corpus(path.join(work, path.basename(dataset)), (folder) => {
    mkdirSync(folder, { recursive: true });
    for (const doc of readJsonl<{ _id: string; title: string; text: string }>(path.join(dataset, 'corpus.jsonl'))) writeFileSync(path.join(folder, `${doc._id}.md`), `# ${doc.title}\n\n${doc.text}\n`);
  });
  try {
    await evaluate(`${path.basename(dataset)} ${split}`, corpus, cases, 200, (id) => id.replace(/\.md$/, ''));
  } finally {
    await corpus.close();
  }
} else {
  const split = values.split ?? 'dev';
  const wordnet = new WordNet();
  for (const source of positionals) {
    const directory = resolveSource(source);
    const dir = path.join(work, path.basename(source));
    const staging = path.join(dir, 'staging');
    // The same files and questions as bench:docs with its defaults (seed 13, 300 questions, 3 per file).
    rmSync(staging, { recursive: true, force: true });
    const files = copyCorpus(directory, existsSync(path.join(dir, 'synced')) ? staging : path.join(dir, 'corpus'));
    const questions = makeQuestions(files.map(structureOf), { seed: 13, perFile: 3, total: 300, wordnet }).filter((question) => question.split === split);
    const corpus = new Corpus(dir, () => {});
    try {
      await evaluate(`${source} ${split}`, corpus, questions.map((q) => ({ question: q.question, relevant: new Map([[q.answer, 1]]), kind: q.kind })), 10, (id) => id);
    } finally {
      await corpus.close();
    }
  }
}
