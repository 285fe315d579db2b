import type { Reranker } from '../../platform/rerank/reranker.js';
import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import { rerankDepth, rerankResults } from './rerank-results.js';
import type { Retrieval, SearchScope } from './retrieval.js';
import type { RetrievalStrategy, SearchResultView } from './search-result.js';

export interface InstantRequest {
  query: string;
  strategy: RetrievalStrategy;
  filter: FilterGroup[];
  limit: number;
  offset: number;
}

/**
 * Instant search: the query matched directly, one ranked list of documents. Hybrid documents are
 * reranked when a rerank endpoint is configured (the first `topK` of the ranking, then paged, so every
 * page comes from the same reranked head); semantic and keyword stay the index's own rankings.
 */
export class InstantSearch {
  constructor(
    private readonly retrieval: Retrieval,
    private readonly reranker: Reranker | null,
  ) {}

  async run(scope: SearchScope, { query, strategy, filter, limit, offset }: InstantRequest, signal?: AbortSignal): Promise<SearchResultView[]> {
    if (strategy !== 'hybrid' || !this.reranker) return this.retrieval.retrieve(scope, { text: query, strategy, filter, limit, offset }, signal);
    const ranked = await this.retrieval.retrieve(scope, { text: query, strategy, filter, limit: rerankDepth(this.reranker, offset + limit), offset: 0 }, signal);
    return (await rerankResults(this.reranker, query, ranked, signal)).results.slice(offset, offset + limit);
  }
}
