import { tokenize } from '../../../platform/embeddings/word-vector-core.js';
import { documentKey, type SearchResultView } from '../search-result.js';

/**
 * The second stage of classic search: the first candidate documents of the fused ranking rescored by
 * the question's words in their fields — the document's name (file name, title), its heading path
 * (the section headings its best passage sits under, and the headings inside it) and the best passage
 * itself. A first-stage score counts every word of a chunk alike; a question usually names the topic
 * a page or section is titled after, and a name or heading holding the question's rarer words is
 * strong evidence the document is about it.
 *
 * Each field scores as BM25 does: a term's occurrences, divided by the field's length against the
 * candidates' average (b: how much a longer passage is discounted), saturated (k1: a term said five
 * times is not five times the evidence), each term weighing by how rare it is among the candidates (a
 * word every candidate holds tells them apart no better than none); the fields' scores, each divided by
 * the most it could be, are weighted and summed. Words match after light stemming, and a name's
 * run-together words ("createtable", "git-subtree") match the question's adjacent words. Question words
 * that stand together in the passage as in the question (a term, a name of a thing: "unique
 * constraint", "remote tracking branch") add the share of such pairs found (phraseShare): words
 * scattered over a passage are weaker evidence than the phrase.
 *
 * Saturated per field rather than summed over the fields and saturated once (BM25F): BM25F lost 0.004 to
 * 0.03 MRR@10 on two of the three bench:docs dev corpora whatever its k1 and weights (a question's
 * term in a heading is separate evidence from the same term in the passage, and BM25F lets one field
 * use up the other's saturation).
 *
 * Only the best passage is read, not the whole document. Reading all chunks of the 40 candidates
 * (Retrieval.list, entity_id in …) and adding evidence from them gave nothing beyond that passage, in
 * classic-lab on the dev splits, recall@10 / MRR@10 against 0.930 / 0.829, 0.939 / 0.874, 0.960 / 0.853
 * (postgresql, django, git), SciFact train nDCG@10 0.7125:
 * - the phrase share over the whole document, weight 0.3: 0.934 / 0.833, 0.939 / 0.877, 0.960 / 0.864.
 *   That is what raising `phrase` from 0.8 to 1.1 gives alone (0.930 / 0.832, 0.939 / 0.877,
 *   0.960 / 0.865), and SciFact lost 0.001. Counting only the pairs the passage lacks moved MRR
 *   by −0.001 to +0.002.
 * - the share of the question's term weight found anywhere in the document, weight 0.3: MRR −0.003
 *   to −0.005, git-doc recall −0.010.
 * - every chunk's heading path as the heading field: MRR postgresql +0.006, django −0.013, git −0.004.
 * Neither did these: stronger suffix stripping (-ation, -ment, -er, -ly…) at −0.007 to 0 MRR;
 * a rank-based first-stage share (31 / (30 + rank)) instead of score / best at −0.006 to +0.002; a
 * bonus for the question's term weight in any of the three fields at −0.007 to +0.001; and 100
 * documents per list with 80 rescored, at +0.001 to +0.002 MRR and recall +0.008 on django only, for
 * twice the candidates.
 */
export interface FieldWeights {
  /** Candidates rescored (the rest keep their order after them). */
  depth: number;
  /** Weight of the fields' score against the first-stage score divided by the best (0 to 1). */
  fields: number;
  /** Weight of each field's score (0 to 1). */
  name: number;
  heading: number;
  passage: number;
  /** Saturation: a term's (length-normalized) count c scores c / (k1 + c) of its weight. */
  k1: number;
  /** Length normalization of each field (0: none, 1: counts divided by length over the average length). */
  bName: number;
  bHeading: number;
  bPassage: number;
  /** Weight of the share of the question's adjacent word pairs standing together in the best passage (see phraseShare). */
  phrase: number;
}

/**
 * Tuned on the dev splits of bench:docs (postgresql-doc-15, python-django-doc, git-doc) and SciFact
 * train, against the unsaturated term share used before (k1 → 0, b = 0, fields 1): mean MRR@10
 * 0.786 → 0.794, recall@10 0.929 → 0.934, SciFact train nDCG@10 0.7057 → 0.7109. See README.
 * The phrase share (weight 0.8), in classic-lab over the same candidates, recall@10 / MRR@10 without → with:
 * git-doc 0.939 / 0.780 → 0.960 / 0.853, python-django-doc 0.939 / 0.818 → 0.939 / 0.874,
 * postgresql-doc-15 0.923 / 0.783 → 0.930 / 0.829; SciFact train nDCG@10 0.7109 → 0.7125 (0.4: 0.7109,
 * 1.2: 0.7096; bench:docs MRR@10 moves by under 0.01 between 0.5 and 1.2).
 */
export const FIELD_WEIGHTS: FieldWeights = { depth: 40, fields: 1.25, name: 0.1, heading: 0.5, passage: 1, k1: 0.8, bName: 0, bHeading: 0, bPassage: 0.75, phrase: 0.8 };

/** Plural, gerund and past forms folded together ("tables", "tabling", "tabled" → "tabl"). Crude, but the same on both sides. */
export function stem(token: string): string {
  if (token.length <= 3 || /\d/.test(token)) return token;
  if (token.endsWith('ies') && token.length > 4) return `${token.slice(0, -3)}y`;
  if (token.endsWith('ing') && token.length > 5) return token.slice(0, -3);
  if (token.endsWith('ed') && token.length > 4) return token.slice(0, -2);
  if (token.endsWith('es') && /(?:ss|x|ch|sh)es$/.test(token)) return token.slice(0, -2);
  if (token.endsWith('s') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

const termsOf = (text: string) => tokenize(text).map(stem);

/** How often each term occurs in a field, and the field's length in terms. */
interface FieldCounts {
  counts: Map<string, number>;
  length: number;
}

function countsOf(terms: string[]): FieldCounts {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { counts, length: terms.length };
}

/** The heading path a chunk starts with (`A › B › C`) and the Markdown headings inside it. */
export function headingsOf(text: string): string {
  const lines = text.split('\n');
  const path = lines[0]?.includes(' › ') ? [lines[0]] : [];
  return [...path, ...lines.filter((line) => /^#{1,6}\s/.test(line))].join('\n');
}

/**
 * A document name's terms, each of the question's adjacent word pairs written together in it counted
 * as its two terms ("createtable" from "sql-createtable.html" for "create table").
 */
function nameCounts(result: SearchResultView, pairs: { run: string; terms: string[] }[]): FieldCounts {
  const name = result.name.replace(/\.[a-z0-9]{1,5}$/i, '');
  const runs = new Set(name.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean));
  const terms = termsOf(name);
  return countsOf([...terms, ...pairs.filter(({ run }) => runs.has(run)).flatMap(({ terms }) => terms)]);
}

/**
 * The share of the question's adjacent term pairs (each weighing as its rarer term) that stand next to
 * each other, in either order, in a passage's terms (stop words left out on both sides: "branches and their
 * commits" holds "branch commit"). bench:docs dev MRR@10, phrase weight 0.8, pairs counted within one
 * term against within two, three, five: git-doc 0.853 / 0.838 / 0.830 / 0.824, python-django-doc 0.874 /
 * 0.868 / 0.860 / 0.849, postgresql-doc-15 0.829 / 0.813 / 0.807 / 0.795.
 */
function phraseShare(terms: string[], pairs: (readonly [string, string])[], weightOf: Map<string, number>): number {
  const adjacent = new Set<string>();
  for (let i = 1; i < terms.length; i++) adjacent.add(`${terms[i - 1]} ${terms[i]}`);
  let found = 0;
  let all = 0;
  for (const [a, b] of pairs) {
    const weight = Math.min(weightOf.get(a) ?? 0, weightOf.get(b) ?? 0);
    all += weight;
    if (adjacent.has(`${a} ${b}`) || adjacent.has(`${b} ${a}`)) found += weight;
  }
  return all > 0 ? found / all : 0;
}

/**
 * Where the ranking's first document may fall at worst: the first stage's best guess (classic fusion
 * keeps the primary query's best document first) stays on the first page whatever the fields say.
 * bench:docs dev, MRR@10 over the three corpora: 0.711 kept first, 0.781 within two, 0.783 within
 * three, 0.784 anywhere; recall@10 the same.
 */
export const FIRST_KEPT_WITHIN = 3;

/**
 * The first `weights.depth` results rescored: each one's score divided by the best, plus `fields` ×
 * the weighted sum of its name's, headings' and passage's scores, each divided by the most it could be
 * (every term of the question there, saturated); the rest follow in their order, below them. The first result stays within the
 * first FIRST_KEPT_WITHIN. Scores are rewritten so they still order the list.
 */
export function rescoreByFields(question: string, results: SearchResultView[], weights: FieldWeights = FIELD_WEIGHTS): SearchResultView[] {
  const head = results.slice(0, weights.depth);
  const words = tokenize(question);
  const query = [...new Set(words.map(stem))];
  if (head.length < 2 || query.length === 0) return results;
  const best = Math.max(...head.map((r) => r.relevanceScore));
  if (!(best > 0)) return results;
  // Adjacent question words run together, as names write them ("create table" → "createtable").
  const pairs = words.slice(1).map((word, i) => ({ run: `${words[i]}${word}`, terms: [stem(words[i]!), stem(word)] }));
  const documents = head.map((result) => {
    const passage = termsOf(result.textualRepresentation);
    return {
      result,
      passage,
      fields: [
        { counts: nameCounts(result, pairs), weight: weights.name, b: weights.bName },
        { counts: countsOf(termsOf(headingsOf(result.textualRepresentation))), weight: weights.heading, b: weights.bHeading },
        { counts: countsOf(passage), weight: weights.passage, b: weights.bPassage },
      ],
    };
  });
  const averageLength = [0, 1, 2].map((f) => Math.max(1, documents.reduce((sum, { fields }) => sum + fields[f]!.counts.length, 0) / documents.length));
  // Rarity among the candidates: a term in every candidate's name or passage weighs little.
  const weightOf = new Map(
    query.map((term) => {
      const holding = documents.filter(({ fields }) => fields[0]!.counts.counts.has(term) || fields[2]!.counts.counts.has(term)).length;
      return [term, Math.log(1 + head.length / (1 + holding))];
    }),
  );
  const total = [...weightOf.values()].reduce((sum, w) => sum + w, 0);
  const stems = words.map(stem);
  const phrasePairs = stems.slice(1).map((term, i) => [stems[i]!, term] as const).filter(([a, b]) => a !== b);
  const rescored = documents.map(({ result, passage, fields }) => {
    let score = 0;
    for (const term of query) {
      for (const [f, { counts, weight, b }] of fields.entries()) {
        const occurrences = counts.counts.get(term) ?? 0;
        if (occurrences === 0 || weight === 0) continue;
        const count = occurrences / (1 - b + (b * counts.length) / averageLength[f]!);
        score += (weight * weightOf.get(term)! * count) / (weights.k1 + count);
      }
    }
    const phrase = weights.phrase > 0 && phrasePairs.length > 0 ? phraseShare(passage, phrasePairs, weightOf) : 0;
    return { result, value: Math.max(0, result.relevanceScore) / best + (weights.fields * score) / total + weights.phrase * phrase };
  });
  rescored.sort((a, b) => b.value - a.value);
  const first = rescored.findIndex(({ result }) => result === results[0]);
  if (first >= FIRST_KEPT_WITHIN) {
    const [kept] = rescored.splice(first, 1);
    rescored.splice(FIRST_KEPT_WITHIN - 1, 0, { ...kept!, value: rescored[FIRST_KEPT_WITHIN - 1]!.value });
  }
  // Scores keep ordering the list: the head's on the first stage's scale (its top value = the best score), the tail's below.
  const scale = best / rescored[0]!.value;
  const floor = results[weights.depth]?.relevanceScore ?? 0;
  return [...rescored.map(({ result, value }) => ({ ...result, relevanceScore: Math.max(floor, value * scale) })), ...results.slice(weights.depth)];
}

/**
 * The ranking with `document` (by its document key) moved up to position `within` when it fell below,
 * or put there when the ranking misses it, its score raised to its new neighbour's so scores still
 * order the list.
 */
export function keptWithin(results: SearchResultView[], document: SearchResultView, within: number): SearchResultView[] {
  const key = documentKey(document);
  const at = results.findIndex((result) => documentKey(result) === key);
  if (at >= 0 && at < within) return results;
  if (results.length < within) return at >= 0 ? results : [...results, { ...document, relevanceScore: Math.min(document.relevanceScore, results.at(-1)?.relevanceScore ?? Infinity) }];
  const moved = { ...(at >= 0 ? results[at]! : document), relevanceScore: results[within - 1]!.relevanceScore };
  return [...results.slice(0, within - 1), moved, ...results.slice(within - 1).filter((_, i) => i + within - 1 !== at)];
}
