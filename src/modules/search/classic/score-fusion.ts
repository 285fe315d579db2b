import type { SearchResultView } from '../search-result.js';
import { resultKey } from '../search-result.js';

/** One ranked list of a search plan: the results of one query, how much it counts, and how many results were asked for. */
export interface PlanList {
  results: SearchResultView[];
  weight: number;
  /** The limit the list was run with: a list that long was cut, so what it misses scored lower than its last result. */
  depth: number;
}

/**
 * Fuses the ranked lists of a search plan (the primary query's and its variations') by score, per
 * document, as hybrid search fuses its two rankings. Each list's scores are divided by its best score,
 * so lists of queries of different lengths (whose BM25 scores are on different scales) weigh what
 * their weights say. A document takes its best chunk's value in each list; one missing from a list
 * gets the list's last value when the list was cut (it scored lower), 0 when the list holds every
 * match. Its fused score is the weighted sum; every chunk found is returned with its document's fused
 * score, the document's chunks ordered by their own evidence.
 *
 * Reciprocal rank fusion, used before, turns a variation's reordering of near-ties into whole rank
 * steps: with pseudo-relevance feedback variations it lost 0.008 nDCG@10 against the primary query
 * alone on SciFact train, where this loses nothing (see VARIATION_WEIGHTS in search.service.ts).
 */
export function fuseByScore(lists: PlanList[]): SearchResultView[] {
  const used = lists.filter(({ results, weight }) => results.length > 0 && weight > 0);
  if (used.length === 0) return [];
  if (used.length === 1) return used[0]!.results;
  const norms = used.map(({ results }) => {
    const best = Math.max(...results.map((r) => r.relevanceScore));
    return (score: number) => (Number.isFinite(best) && best > 0 && Number.isFinite(score) ? Math.max(0, score) / best : 0);
  });
  const floors = used.map(({ results, depth }, l) => (results.length >= depth ? norms[l]!(results[results.length - 1]!.relevanceScore) : 0));
  const chunks = new Map<string, { result: SearchResultView; document: string; values: (number | undefined)[]; order: number }>();
  const documents = new Map<string, (number | undefined)[]>();
  used.forEach(({ results }, l) => {
    for (const result of results) {
      const key = resultKey(result);
      const value = norms[l]!(result.relevanceScore);
      const chunk = chunks.get(key) ?? { result, document: documentKey(result), values: [], order: chunks.size };
      chunk.values[l] = Math.max(chunk.values[l] ?? 0, value);
      chunks.set(key, chunk);
      const document = documents.get(chunk.document) ?? [];
      document[l] = Math.max(document[l] ?? 0, value);
      documents.set(chunk.document, document);
    }
  });
  const fused = (values: (number | undefined)[]) => used.reduce((sum, { weight }, l) => sum + weight * (values[l] ?? floors[l]!), 0);
  return [...chunks.values()]
    .map((chunk) => ({ chunk, score: fused(documents.get(chunk.document)!), own: fused(chunk.values) }))
    .sort((a, b) => b.score - a.score || b.own - a.own || a.chunk.order - b.chunk.order)
    .map(({ chunk, score }) => ({ ...chunk.result, relevanceScore: score }));
}

/** A document across lists: its connection (or source, for federated results) and entity id. */
function documentKey(result: SearchResultView): string {
  return `${result.serviceSystemMetadata.syncId ?? result.serviceSystemMetadata.sourceName}\u0000${result.entityId}`;
}
