import type { LanguageModel } from '../../platform/llm/language-model.js';
import type { Logger } from '../../platform/logger.js';
import type { SearchTier } from '../../platform/metrics/metrics.js';
import type { Reranker } from '../../platform/rerank/reranker.js';
import { EventStream } from '../../shared/event-stream.js';
import type { Principal } from '../organizations/principal.js';
import type { AgentEvent } from './agentic/agent-events.js';
import { AgenticSearch, type AgenticBudget } from './agentic/agentic-search.js';
import { ClassicSearch } from './classic/classic-search.js';
import { HeuristicPlanner } from './classic/heuristic-planner.js';
import { LanguageModelPlanner } from './classic/language-model-planner.js';
import type { SearchPlan } from './classic/search-plan.js';
import { EntityNavigator } from './entity-navigator.js';
import { LegacySearch, type LegacySearchResponse } from './legacy-search.js';
import { InstantSearch } from './instant-search.js';
import { IndexRetrieval, type IndexRetrievalDependencies } from './retrieval.js';
import { checkAgentic, checkLegacy, checkPage, type AgenticSearchInput, type ClassicSearchInput, type InstantSearchInput, type LegacySearchInput } from './search-input.js';
import type { SearchResultView } from './search-result.js';

export type { LegacySearchResponse } from './legacy-search.js';
export type { AgenticSearchInput, ClassicSearchInput, InstantSearchInput, LegacySearchInput } from './search-input.js';
export type { RetrievalStrategy, SearchResultView } from './search-result.js';

/** What the retrieval needs (see IndexRetrievalDependencies), and what the tiers need besides. */
export interface SearchServiceDependencies extends IndexRetrievalDependencies {
  /** Null: built-in heuristic planner and deterministic agent. */
  languageModel: LanguageModel | null;
  /** Null: no rerank endpoint; hybrid, classic and agentic keep their own order. */
  reranker: Reranker | null;
  agenticBudget: AgenticBudget;
  logger: Logger;
  /** Told how long each search took (metrics), by tier; bad requests and failures included as 'error'. */
  observer?: { searched(tier: SearchTier, outcome: 'ok' | 'error', seconds: number): void };
}

/**
 * Search over a collection, scoped to the caller's organization: the four tiers over one retrieval
 * (the index and federated sources). Each request is checked here, then handed to its tier. Every
 * tier answers with documents: each entity at most once, shown by its best chunk.
 */
export class SearchService {
  /** Where every tier's results come from; public for benchmarks (its index queries). */
  readonly retrieval: IndexRetrieval;
  private readonly instantTier: InstantSearch;
  private readonly classicTier: ClassicSearch;
  private readonly agent: AgenticSearch;
  private readonly legacyTier: LegacySearch;
  private readonly observer: SearchServiceDependencies['observer'];

  constructor(deps: SearchServiceDependencies) {
    this.observer = deps.observer;
    this.retrieval = new IndexRetrieval(deps);
    this.instantTier = new InstantSearch(this.retrieval, deps.reranker);
    const heuristic = new ClassicSearch(this.retrieval, new HeuristicPlanner(), deps.reranker, deps.logger);
    this.classicTier = deps.languageModel ? new ClassicSearch(this.retrieval, new LanguageModelPlanner(deps.languageModel), deps.reranker, deps.logger) : heuristic;
    // The agent's collected documents are ranked as classic ranks, without asking the model for a plan.
    this.agent = new AgenticSearch(this.retrieval, new EntityNavigator(deps.orm), deps.languageModel, heuristic, deps.agenticBudget, deps.logger);
    this.legacyTier = new LegacySearch(this.retrieval, deps.languageModel);
  }

  /** The query matched directly (semantic, keyword or hybrid). */
  async instant(principal: Principal, readableId: string, input: InstantSearchInput): Promise<SearchResultView[]> {
    return this.measured('instant', async () => {
      const request = checkPage(input);
      const scope = await this.retrieval.scope(principal, readableId);
      return this.instantTier.run(scope, { ...request, strategy: input.retrievalStrategy ?? 'hybrid' });
    });
  }

  /** A planner turns the question into queries and filters; each query runs; the lists are fused, then paged. */
  async classic(principal: Principal, readableId: string, input: ClassicSearchInput, signal?: AbortSignal): Promise<{ results: SearchResultView[]; plan: SearchPlan }> {
    return this.measured('classic', async () => {
      const request = checkPage(input);
      const scope = await this.retrieval.scope(principal, readableId);
      return this.classicTier.run(scope, request, signal);
    });
  }

  /** The agent loop, answered at once with what it collected. */
  async agentic(principal: Principal, readableId: string, input: AgenticSearchInput, signal?: AbortSignal): Promise<SearchResultView[]> {
    return this.measured('agentic', async () => {
      const task = checkAgentic(input);
      const scope = await this.retrieval.scope(principal, readableId);
      return this.agent.run(scope, task, () => undefined, signal ?? new AbortController().signal);
    });
  }

  /**
   * The agent loop as a stream of its events. Input and collection are checked before the stream
   * starts (so bad requests fail as such); closing the iterator stops the loop.
   */
  async agenticEvents(principal: Principal, readableId: string, input: AgenticSearchInput): Promise<AsyncIterableIterator<AgentEvent>> {
    const task = checkAgentic(input);
    const scope = await this.retrieval.scope(principal, readableId);
    const stop = new AbortController();
    const stream = new EventStream<AgentEvent>(() => stop.abort());
    const started = performance.now();
    const finish = (outcome: 'ok' | 'error') => () => {
      this.observer?.searched('agentic', outcome, (performance.now() - started) / 1000);
      stream.end();
    };
    this.agent.run(scope, task, (event) => stream.push(event), stop.signal).then(finish('ok'), finish('error'));
    return stream;
  }

  /** Deprecated GET search: hybrid documents, optionally re-ordered by recency, and optionally an answer. */
  async legacy(principal: Principal, readableId: string, input: LegacySearchInput): Promise<LegacySearchResponse> {
    return this.measured('legacy', async () => {
      const request = checkLegacy(input);
      const scope = await this.retrieval.scope(principal, readableId);
      return this.legacyTier.run(scope, request);
    });
  }

  private async measured<T>(tier: SearchTier, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let outcome: 'ok' | 'error' = 'error';
    try {
      const result = await run();
      outcome = 'ok';
      return result;
    } finally {
      this.observer?.searched(tier, outcome, (performance.now() - started) / 1000);
    }
  }
}
