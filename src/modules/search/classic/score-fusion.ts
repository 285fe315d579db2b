import { documentKey, type SearchResultView } from '../search-result.js';

/** One ranked list of a search plan: the documents of one query, how much it counts, and how many were asked for. */
export interface PlanList {
  /** One result per document, best first (what retrieval returns). */
  results: SearchResultView[];
  weight: number;
  /** The limit the list was run with: a list that long was cut, so what it misses scored lower than its last result. */
  depth: number;
}

/**
 * Fuses the document lists of a search plan (the primary query's first, then its variations') by
 * score, as hybrid search fuses its two rankings. Each list's scores are divided by its best score, so
 * lists of queries of different lengths (whose BM25 scores are on different scales) weigh what their
 * weights say. A document missing from a list gets the list's last value when the list was cut (it
 * scored lower), 0 when the list holds every match. Its fused score is the weighted sum; it is shown
 * by its result in the list where it counted most (its best passage for that query).
 *
 * The primary list's first document stays first: a variation may reorder what follows, never bury
 * what the question itself found best (classic is never worse than its primary ranking at rank 1).
 *
 * Reciprocal rank fusion, used before, turns a variation's reordering of near-ties into whole rank
 * steps: with pseudo-relevance feedback variations it lost 0.008 nDCG@10 against the primary query
 * alone on SciFact train, where this loses nothing (see VARIATION_WEIGHTS in classic-search.ts).
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
  const documents = new Map<string, { shown: SearchResultView; shownWeight: number; values: (number | undefined)[]; order: number }>();
  used.forEach(({ results, weight }, l) => {
    for (const result of results) {
      const key = documentKey(result);
      const value = norms[l]!(result.relevanceScore);
      const document = documents.get(key) ?? { shown: result, shownWeight: -1, values: [], order: documents.size };
      document.values[l] = Math.max(document.values[l] ?? 0, value);
      if (weight * value > document.shownWeight) {
        document.shown = result;
        document.shownWeight = weight * value;
      }
      documents.set(key, document);
    }
  });
  const fused = (values: (number | undefined)[]) => used.reduce((sum, { weight }, l) => sum + weight * (values[l] ?? floors[l]!), 0);
  const ranked = [...documents.values()].map((document) => ({ ...document, score: fused(document.values) })).sort((a, b) => b.score - a.score || a.order - b.order);
  // The primary list's first document (order 0 when the primary list is used) leads.
  const primaryFirst = used[0] === lists[0] ? ranked.findIndex(({ order }) => order === 0) : -1;
  if (primaryFirst > 0) {
    const [first] = ranked.splice(primaryFirst, 1);
    ranked.unshift({ ...first!, score: Math.max(first!.score, ranked[0]!.score) });
  }
  return ranked.map(({ shown, score }) => ({ ...shown, relevanceScore: score }));
}
