import type { LanguageModel } from '../../platform/llm/language-model.js';
import type { Retrieval, SearchScope } from './retrieval.js';
import type { SearchResultView } from './search-result.js';

export interface LegacyRequest {
  query: string;
  responseType: 'raw' | 'completion';
  limit: number;
  offset: number;
  /** 0 = similarity only, 1 = recency only. */
  recencyBias: number;
}

export interface LegacySearchResponse {
  results: SearchResultView[];
  responseType: 'raw' | 'completion';
  /** success, no_results (nothing matched), no_relevant_results (the model found none of it relevant), completion_unavailable (no language model configured). */
  status: 'success' | 'no_results' | 'no_relevant_results' | 'completion_unavailable';
  completion: string | null;
}

/** Documents re-ordered by recency in legacy search, beyond the page. */
const RECENCY_CANDIDATES = 100;

/** The deprecated GET search: hybrid documents, optionally re-ordered by recency, and optionally an answer. */
export class LegacySearch {
  constructor(
    private readonly retrieval: Retrieval,
    private readonly languageModel: LanguageModel | null,
  ) {}

  async run(scope: SearchScope, { query, responseType, limit, offset, recencyBias }: LegacyRequest): Promise<LegacySearchResponse> {
    const depth = offset + limit;
    const candidates = await this.retrieval.retrieve(scope, { text: query, strategy: 'hybrid', filter: [], limit: recencyBias > 0 ? Math.max(depth, RECENCY_CANDIDATES) : depth, offset: 0 });
    const results = (recencyBias > 0 ? byRecency(candidates, recencyBias) : candidates).slice(offset, depth);
    if (results.length === 0) return { results, responseType, status: 'no_results', completion: null };
    if (responseType === 'raw') return { results, responseType, status: 'success', completion: null };
    if (!this.languageModel) return { results, responseType, status: 'completion_unavailable', completion: null };
    const answer = await this.answer(this.languageModel, query, results);
    return { results, responseType, status: answer === null ? 'no_relevant_results' : 'success', completion: answer };
  }

  /** An answer written from the results, or null when the model finds nothing relevant in them. */
  private async answer(model: LanguageModel, question: string, results: SearchResultView[], signal?: AbortSignal): Promise<string | null> {
    const sources = results
      .slice(0, 10)
      .map((r, i) => `[${i + 1}] ${r.name}\n${r.textualRepresentation.slice(0, 1500)}`)
      .join('\n\n');
    const { text } = await model.complete({
      system: 'Answer the question from the numbered sources only, citing them as [n]. If none of them is relevant, answer exactly NO_RELEVANT_RESULTS.',
      prompt: `Question: ${question}\n\nSources:\n${sources}`,
      signal,
    });
    return text.trim() === '' || text.includes('NO_RELEVANT_RESULTS') ? null : text.trim();
  }
}

/** Similarity and recency blended: each min-max normalised over the candidates, `bias` on recency. */
function byRecency(results: SearchResultView[], bias: number): SearchResultView[] {
  const time = (r: SearchResultView) => (r.updatedAt ?? r.createdAt)?.getTime() ?? null;
  const times = results.map(time).filter((t): t is number => t !== null);
  const scores = results.map((r) => r.relevanceScore);
  const norm = (value: number, values: number[]) => {
    const [min, max] = [Math.min(...values), Math.max(...values)];
    return max > min ? (value - min) / (max - min) : 1;
  };
  return results
    .map((r) => {
      const t = time(r);
      const score = (1 - bias) * norm(r.relevanceScore, scores) + bias * (t === null ? 0 : norm(t, times));
      return { ...r, relevanceScore: score };
    })
    .sort((a, b) => b.relevanceScore - a.relevanceScore);
}
