import { rerankHead, type Reranker } from '../../platform/rerank/reranker.js';
import type { SearchResultView } from './search-result.js';

/** What one successful rerank did: the agentic stream's `reranking` event reports it. */
export interface RerankReport {
  durationMs: number;
  /** Documents sent to the rerank endpoint (the head of the ranking). */
  inputCount: number;
  /** Documents it scored, now first in its order. */
  outputCount: number;
  /** The model named in requests; null when the server serves a single one (TEI). */
  model: string | null;
  /** The highest and lowest scores the endpoint gave. */
  topRelevanceScore: number;
  bottomRelevanceScore: number;
}

/**
 * The first `reranker.topK` documents reordered by the rerank endpoint (no reranker, or one that
 * fails or times out: the order as it was, and no report). Scores keep describing the list: the
 * head's own scores, highest first, are handed out again in the reranked order, so `relevance_score`
 * still orders the list and the documents after the head keep theirs.
 */
export async function rerankResults(
  reranker: Reranker | null,
  query: string,
  results: SearchResultView[],
  signal?: AbortSignal,
): Promise<{ results: SearchResultView[]; report: RerankReport | null }> {
  if (!reranker || results.length < 2) return { results, report: null };
  const started = Date.now();
  const reranked = await rerankHead(reranker, query, results, (r) => `${r.name}\n${r.textualRepresentation}`, signal);
  const rerankScores = reranked.flatMap(({ rerankScore }) => (rerankScore === null ? [] : [rerankScore]));
  if (rerankScores.length === 0) return { results, report: null };
  const headScores = reranked.filter(({ rerankScore }) => rerankScore !== null).map(({ item }) => item.relevanceScore).sort((a, b) => b - a);
  return {
    results: reranked.map(({ item, rerankScore }, i) => (rerankScore === null ? item : { ...item, relevanceScore: headScores[i]! })),
    report: {
      durationMs: Date.now() - started,
      inputCount: Math.min(results.length, reranker.topK),
      outputCount: rerankScores.length,
      model: reranker.model ?? null,
      topRelevanceScore: Math.max(...rerankScores),
      bottomRelevanceScore: Math.min(...rerankScores),
    },
  };
}

/** How many documents a tier ranks before reranking and paging, so every page comes from the same reranked head. */
export function rerankDepth(reranker: Reranker | null, depth: number): number {
  return reranker ? Math.max(depth, reranker.topK) : depth;
}
