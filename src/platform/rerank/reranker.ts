/**
 * A cross-encoder (or any relevance model) that scores documents against a query, served over HTTP.
 * Reranking is an optional refinement: every failure ends in `null` so callers keep the order they had.
 */
export interface Reranker {
  /** The model named in requests; undefined when the server serves a single one (TEI). */
  readonly model: string | undefined;
  /** How many of a ranking's first candidates callers send for reranking (CATCHMENT_RERANK_TOP_K). */
  readonly topK: number;
  /**
   * One score per document, aligned with `documents` (higher is more relevant); null when the endpoint
   * failed, answered something unusable or did not answer in time (logged once), or `signal` was aborted.
   * Never throws.
   */
  rerank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[] | null>;
}

/** One item of a reranked ranking: its rerank score, or null when it kept its place unscored. */
export interface RerankedItem<T> {
  item: T;
  rerankScore: number | null;
}

/**
 * The first `reranker.topK` items reordered by rerank score (ties keep their order), followed by the
 * rest unscored in their order. When reranking fails, every item keeps its place unscored.
 */
export async function rerankHead<T>(
  reranker: Reranker,
  query: string,
  items: readonly T[],
  textOf: (item: T) => string,
  signal?: AbortSignal,
): Promise<RerankedItem<T>[]> {
  const head = items.slice(0, reranker.topK);
  const unscored = (list: readonly T[]) => list.map((item) => ({ item, rerankScore: null }));
  const scores = head.length ? await reranker.rerank(query, head.map(textOf), signal) : null;
  if (!scores) return unscored(items);
  const reordered = head
    .map((item, position) => ({ item, rerankScore: scores[position]!, position }))
    .sort((a, b) => b.rerankScore - a.rerankScore || a.position - b.position)
    .map(({ item, rerankScore }) => ({ item, rerankScore }));
  return [...reordered, ...unscored(items.slice(head.length))];
}
