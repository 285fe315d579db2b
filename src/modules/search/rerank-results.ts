import { rerankHead, type Reranker } from '../../platform/rerank/reranker.js';
import type { SearchResultView } from './search-result.js';

/**
 * The first `reranker.topK` documents reordered by the rerank endpoint (no reranker, or one that
 * fails or times out: the order as it was). Scores keep describing the list: the head's own scores,
 * highest first, are handed out again in the reranked order, so `relevance_score` still orders the
 * list and the documents after the head keep theirs.
 */
export async function rerankResults(reranker: Reranker | null, query: string, results: SearchResultView[], signal?: AbortSignal): Promise<SearchResultView[]> {
  if (!reranker || results.length < 2) return results;
  const reranked = await rerankHead(reranker, query, results, (r) => `${r.name}\n${r.textualRepresentation}`, signal);
  const headScores = reranked.filter(({ rerankScore }) => rerankScore !== null).map(({ item }) => item.relevanceScore).sort((a, b) => b - a);
  return reranked.map(({ item, rerankScore }, i) => (rerankScore === null ? item : { ...item, relevanceScore: headScores[i]! }));
}

/** How many documents a tier ranks before reranking and paging, so every page comes from the same reranked head. */
export function rerankDepth(reranker: Reranker | null, depth: number): number {
  return reranker ? Math.max(depth, reranker.topK) : depth;
}
