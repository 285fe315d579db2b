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

/** A document while it is ranked: its best value per ranking, and its best chunk so far with that chunk's own fused value. */
interface DocumentEntry<T> {
  entityKey: string;
  values: (number | undefined)[];
  best: ChunkCandidate<T> | null;
  own: number;
}

/** A chunk while it is ranked: its value per ranking (the first time each lists it), and its document. */
interface ChunkEntry<T> {
  candidate: ChunkCandidate<T>;
  document: DocumentEntry<T>;
  values: (number | undefined)[];
}

/** Fewest chunk candidates a ranking reads, and the most. */
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
  const floors = used.map(({ candidates, value, cut }) => (cut ? value(candidates[candidates.length - 1]!.score) : 0));
  /** Weighted sum over rankings; a ranking that misses the chunk or document counts its floor. */
  const fused = (values: (number | undefined)[]) => {
    let sum = 0;
    for (let r = 0; r < used.length; r++) sum += used[r]!.weight * (values[r] ?? floors[r]!);
    return sum;
  };
  // One entry per document and per chunk, each chunk pointing at its document: the entity key of a
  // chunk id is cut once, and every later occurrence is one lookup (hundreds of candidates a query).
  const documents = new Map<string, DocumentEntry<T>>();
  const chunks = new Map<string, ChunkEntry<T>>();
  used.forEach(({ candidates, value }, r) => {
    for (const candidate of candidates) {
      let chunk = chunks.get(candidate.chunkKey);
      if (!chunk) {
        const entityKey = entityKeyOfChunkId(candidate.chunkKey);
        let document = documents.get(entityKey);
        if (!document) {
          document = { entityKey, values: [], best: null, own: -Infinity };
          documents.set(entityKey, document);
        }
        chunk = { candidate, document, values: [] };
        chunks.set(candidate.chunkKey, chunk);
      } else if (chunk.values[r] !== undefined) continue; // a ranking lists a chunk once
      const own = value(candidate.score);
      chunk.values[r] = own;
      const perRanking = chunk.document.values;
      perRanking[r] = Math.max(perRanking[r] ?? -Infinity, own);
    }
  });
  for (const { candidate, document, values } of chunks.values()) {
    const own = fused(values);
    const known = document.best;
    if (!known || own > document.own || (own === document.own && compare(candidate.chunkKey, known.chunkKey) < 0)) {
      document.best = candidate;
      document.own = own;
    }
  }
  const ranked: (RankedDocument<T> & { own: number })[] = [];
  for (const { entityKey, values, best, own } of documents.values()) {
    const value = fused(values);
    const weight = weightOf(best!.item);
    // A weight below 1 lowers the score whatever its sign (cosine similarities may be negative).
    const score = value >= 0 ? value * weight : value / weight;
    ranked.push({ entityKey, best: best!, score, own });
  }
  ranked.sort((a, b) => b.score - a.score || b.own - a.own || compare(a.best.chunkKey, b.best.chunkKey));
  return ranked.map(({ entityKey, best, score }) => ({ entityKey, best, score }));
}
