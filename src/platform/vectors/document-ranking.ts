import { compare } from './filter-conditions.js';
import { entityKeyOfChunkId } from './vector-index.js';

/**
 * Searches answer with documents (entities), not chunks: the rankings of an index rank chunks, and
 * this turns them into one ranking of documents, each shown by its best chunk. Both adapters use it,
 * so a document is scored the same way whatever the index.
 */

/** One chunk of one ranking: its key, its score, and what the adapter keeps of it. */
export interface ChunkCandidate<T> {
  /**
   * Unique per chunk, and its part up to the last colon names the chunk's entity (`entityKeyOfChunkId`):
   * the chunk id (`chunkIdOf`), or an adapter's own compact key of that form. Equal scores break on it.
   */
  chunkKey: string;
  score: number;
  item: T;
}

/** One ranking of chunks (keyword, semantic, or an index's own fusion), best first. */
export interface ChunkRanking<T> {
  candidates: ChunkCandidate<T>[];
  /** Share of this ranking in the document's score. */
  weight: number;
  /** A chunk's score on a scale comparable across rankings and queries (e.g. BM25 divided by the query's best). */
  value: (score: number) => number;
  /**
   * Whether the ranking was cut at its depth: a document it misses then scored at most its last
   * value, and gets that; from a ranking that holds every match, a missing document gets 0.
   */
  cut: boolean;
}

export interface RankedDocument<T> {
  /** `entityKeyOfChunkId` of its chunks' keys: what names its entity. */
  entityKey: string;
  /** The chunk that matched best (its values in every ranking, weighted): what the result shows. */
  best: ChunkCandidate<T>;
  score: number;
}

/**
 * Weight of a container's score (folders, directories, repositories, tables, feeds): the entities
 * that hold others. Their text is little more than their name, which keyword search matches twice
 * (name and text) and in a short text (BM25 favours short texts), and whose vector is the name's
 * alone: a name repeating the question's words scores several times the document that answers it.
 * At this weight a container ranks after documents matching a tenth as well: it stays findable by
 * its name (first when nothing else matches) without pushing answering documents off the page.
 */
export const CONTAINER_WEIGHT = 0.1;
const CONTAINER_TYPE = /(^|_)(folder|directory|dir|repository|repo|schema|table|feed|space|drive|bucket)$/i;

/** Whether entities of this type hold other entities (the connectors' hierarchy nodes). */
export function isContainerType(entityType: string): boolean {
  return CONTAINER_TYPE.test(entityType);
}

/**
 * Fewest chunk candidates a ranking reads, and the most. 100 for the first two pages of ten (then ten
 * a document as here) was tried and reverted: quality held (bench:docs postgresql-doc-15 hybrid, SciFact
 * first page) for a modest gain (bench:search REST p50 9.8 / 9.9 against 10.2 / 10.2 ms), but pages 2
 * and 3 then ranked at 100 and 400, a step of four: in a reviewer's 200 seeded corpora of two
 * rankings, 139 showed a document on both pages or skipped one, against none with steps of two. Five a
 * document throughout (steps of two) cost classic search a little on every measure.
 */
const MIN_CANDIDATES = 200;
const MAX_CANDIDATES = 10_000;
/** Chunk candidates read per document wanted. */
const CANDIDATES_PER_DOCUMENT = 10;

/**
 * How many chunks each ranking reads to rank the first `documents` documents: ten per document, at
 * least 200, in steps that double (so neighbouring pages rank the same candidates and never show a
 * document twice), at most 10,000.
 */
export function candidateDepth(documents: number): number {
  let depth = MIN_CANDIDATES;
  while (depth < documents * CANDIDATES_PER_DOCUMENT && depth < MAX_CANDIDATES) depth *= 2;
  return Math.min(depth, MAX_CANDIDATES);
}

/**
 * The first documents of rankings read `candidateDepth(documents)` deep by `rankAt`, and deeper,
 * doubling up to `maxDepth`, while a ranking was cut and they hold fewer documents than that depth
 * is for (a tenth of it, at least `documents`). A few long documents can fill the candidates with
 * their chunks: a keyword search matching 3 documents of 100 chunks each before 20 documents of one
 * answered 3 results for a page of 10. The target is the depth's, not the page's, so the pages that
 * share a depth (the first two of 10) also share how deep it goes.
 */
export async function rankDocumentsDeepening<T>(
  documents: number,
  rankAt: (depth: number) => Promise<ChunkRanking<T>[]>,
  weightOf: (item: T) => number,
  maxDepth = MAX_CANDIDATES,
): Promise<RankedDocument<T>[]> {
  let depth = Math.min(candidateDepth(documents), maxDepth);
  const wanted = Math.max(documents, Math.floor(depth / CANDIDATES_PER_DOCUMENT));
  for (;;) {
    const rankings = await rankAt(depth);
    const ranked = rankDocuments(rankings, weightOf);
    if (ranked.length >= wanted || depth >= maxDepth || !rankings.some((ranking) => ranking.cut)) return ranked;
    depth = Math.min(depth * 2, maxDepth);
  }
}

/**
 * Documents ranked from chunk rankings. In each ranking a document's value is its best chunk's; a document missing from a ranking gets its
 * floor (see `ChunkRanking.cut`). Its score is the weighted sum over rankings, times `weightOf` its
 * best chunk (the container weight). Its best chunk is the one whose own weighted values sum highest.
 * Best first; equal scores by the best chunk's own evidence, then chunk id (pages are deterministic).
 *
 * Only the best chunk counts: a share of the next chunks too (v₁ + d·v₂ + d²·v₃) was measured and
 * lost: SciFact train nDCG@10 0.704 at d = 0 against 0.690 at d = 0.1 (abstracts of two chunks gained
 * on length), bench:docs postgresql-doc-15 dev recall@10 0.832 against 0.829.
 */
export function rankDocuments<T>(rankings: ChunkRanking<T>[], weightOf: (item: T) => number = () => 1): RankedDocument<T>[] {
  const used = rankings.filter(({ candidates }) => candidates.length > 0);
  const width = used.length;
  const weights = Float64Array.from(used, ({ weight }) => weight);
  const floors = Float64Array.from(used, ({ candidates, value, cut }) => (cut ? value(candidates[candidates.length - 1]!.score) : 0));
  const listed = used.reduce((sum, { candidates }) => sum + candidates.length, 0);
  // Chunks and documents are numbered as first met, their values per ranking in flat typed arrays
  // (row i, ranking r at i * width + r), each chunk pointing at its document: the entity key of a
  // chunk id is cut once, and every later occurrence is one lookup (hundreds of candidates a query).
  // Typed arrays, not an object and a sparse array per chunk: in a warmed server the objects' version
  // ran 2–6× slower than in a process doing nothing else (0.38 against 0.07 ms a hybrid search,
  // bench:search's 100,000 chunks).
  const chunkOfKey = new Map<string, number>();
  const chunks: ChunkCandidate<T>[] = [];
  const documentOfChunk = new Int32Array(listed);
  const chunkValues = new Float64Array(listed * width);
  const chunkListed = new Uint8Array(listed * width);
  const documentOfKey = new Map<string, number>();
  const entityKeys: string[] = [];
  // A document's best value per ranking; -Infinity until one of its chunks is listed there.
  const documentValues = new Float64Array(listed * width).fill(-Infinity);
  const documentListed = new Uint8Array(listed * width);
  for (let r = 0; r < width; r++) {
    const { candidates, value } = used[r]!;
    for (const candidate of candidates) {
      let chunk = chunkOfKey.get(candidate.chunkKey);
      if (chunk === undefined) {
        chunk = chunks.length;
        chunks.push(candidate);
        chunkOfKey.set(candidate.chunkKey, chunk);
        const entityKey = entityKeyOfChunkId(candidate.chunkKey);
        let document = documentOfKey.get(entityKey);
        if (document === undefined) {
          document = entityKeys.length;
          entityKeys.push(entityKey);
          documentOfKey.set(entityKey, document);
        }
        documentOfChunk[chunk] = document;
      } else if (chunkListed[chunk * width + r] === 1) continue; // a ranking lists a chunk once
      const own = value(candidate.score);
      chunkValues[chunk * width + r] = own;
      chunkListed[chunk * width + r] = 1;
      const at = documentOfChunk[chunk]! * width + r;
      documentValues[at] = Math.max(documentValues[at]!, own);
      documentListed[at] = 1;
    }
  }
  /** Weighted sum over rankings of the row `row` of `values`; a ranking that misses it counts its floor. */
  const fused = (values: Float64Array, isListed: Uint8Array, row: number) => {
    let sum = 0;
    for (let r = 0; r < width; r++) sum += weights[r]! * (isListed[row * width + r] === 1 ? values[row * width + r]! : floors[r]!);
    return sum;
  };
  const documents = entityKeys.length;
  const bestChunk = new Int32Array(documents).fill(-1);
  const bestOwn = new Float64Array(documents);
  for (let chunk = 0; chunk < chunks.length; chunk++) {
    const own = fused(chunkValues, chunkListed, chunk);
    const document = documentOfChunk[chunk]!;
    const known = bestChunk[document]!;
    if (known < 0 || own > bestOwn[document]! || (own === bestOwn[document]! && compare(chunks[chunk]!.chunkKey, chunks[known]!.chunkKey) < 0)) {
      bestChunk[document] = chunk;
      bestOwn[document] = own;
    }
  }
  const scores = new Float64Array(documents);
  const order: number[] = [];
  for (let document = 0; document < documents; document++) {
    const value = fused(documentValues, documentListed, document);
    const weight = weightOf(chunks[bestChunk[document]!]!.item);
    // A weight below 1 lowers the score whatever its sign (cosine similarities may be negative).
    scores[document] = value >= 0 ? value * weight : value / weight;
    order.push(document);
  }
  const bestKey = (document: number) => chunks[bestChunk[document]!]!.chunkKey;
  order.sort((a, b) => scores[b]! - scores[a]! || bestOwn[b]! - bestOwn[a]! || compare(bestKey(a), bestKey(b)));
  return order.map((document) => ({ entityKey: entityKeys[document]!, best: chunks[bestChunk[document]!]!, score: scores[document]! }));
}
