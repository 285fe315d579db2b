import type { Orm } from '../../platform/db/database.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { LanguageModel } from '../../platform/llm/language-model.js';
import type { Logger } from '../../platform/logger.js';
import type { FilterGroup, VectorIndex } from '../../platform/vectors/vector-index.js';
import { ConflictError, NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { Collection } from '../collections/collection.entity.js';
import { PAGE_LIMIT } from '../collections/collection.service.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { AgentEvent } from './agentic/agent-events.js';
import { AgenticSearch, type AgenticBudget } from './agentic/agentic-search.js';
import { HeuristicPlanner } from './classic/heuristic-planner.js';
import { LanguageModelPlanner } from './classic/language-model-planner.js';
import type { SearchPlan, SearchPlanner } from './classic/search-plan.js';
import { EntityNavigator } from './entity-navigator.js';
import type { FederatedSources } from './federated-sources.js';
import { bothFilters, filterIssues, withConditions } from './filter-rules.js';
import { fromChunk, reciprocalRankFusion, type RetrievalStrategy, type SearchResultView } from './search-result.js';

export type { RetrievalStrategy, SearchResultView } from './search-result.js';
export { filterIssues } from './filter-rules.js';

export interface InstantSearchInput {
  query: string;
  retrievalStrategy?: RetrievalStrategy | null;
  filter?: FilterGroup[] | null;
  limit?: number | null;
  offset?: number | null;
}

export type ClassicSearchInput = Omit<InstantSearchInput, 'retrievalStrategy'>;

export interface AgenticSearchInput {
  query: string;
  thinking?: boolean | null;
  filter?: FilterGroup[] | null;
  /** Null lets the agent decide. */
  limit?: number | null;
}

export interface LegacySearchInput {
  query: string;
  responseType?: 'raw' | 'completion' | null;
  limit?: number | null;
  offset?: number | null;
  /** 0 = similarity only, 1 = recency only. */
  recencyBias?: number | null;
}

export interface LegacySearchResponse {
  results: SearchResultView[];
  responseType: 'raw' | 'completion';
  /** success, no_results (nothing matched), no_relevant_results (the model found none of it relevant), completion_unavailable (no language model configured). */
  status: 'success' | 'no_results' | 'no_relevant_results' | 'completion_unavailable';
  completion: string | null;
}

/** The collection a search runs over, resolved once per request. */
export interface SearchScope {
  collection: Collection;
  /** Connections whose chunks are in the index (deleted ones are gone from here at once). */
  indexedConnectionIds: string[];
  federated: SourceConnection[];
  sourceNames: string[];
}

export interface RetrieveRequest {
  text: string;
  strategy: RetrievalStrategy;
  filter: FilterGroup[];
  limit: number;
  offset: number;
}

export interface SearchServiceDependencies {
  orm: Orm;
  vectors: () => Promise<VectorIndex>;
  embedder: () => Promise<Embedder>;
  keywordWeight: number;
  federated: FederatedSources;
  /** Null: built-in heuristic planner and deterministic agent. */
  languageModel: LanguageModel | null;
  agenticBudget: AgenticBudget;
  logger: Logger;
}

/** Weight of each variation against the primary query in classic fusion (tuned on SciFact train). */
const VARIATION_WEIGHT = 0.5;
/** Candidates re-ordered by recency in legacy search, beyond the page. */
const RECENCY_CANDIDATES = 100;

/** Search over a collection: its synced chunks and its federated sources. Scoped to the caller's organization. */
export class SearchService {
  private readonly planner: SearchPlanner;
  private readonly agent: AgenticSearch;

  constructor(readonly deps: SearchServiceDependencies) {
    this.planner = deps.languageModel ? new LanguageModelPlanner(deps.languageModel) : new HeuristicPlanner();
    this.agent = new AgenticSearch(this, new EntityNavigator(deps.orm), deps.languageModel, deps.agenticBudget, deps.logger);
  }

  async instant(principal: Principal, readableId: string, input: InstantSearchInput): Promise<SearchResultView[]> {
    const { limit, offset, filter } = checkPage(input, []);
    const scope = await this.scope(principal, readableId);
    return this.retrieve(scope, { text: input.query, strategy: input.retrievalStrategy ?? 'hybrid', filter, limit, offset });
  }

  /** A planner turns the question into queries and filters; each query runs; the lists are fused, then paged. */
  async classic(principal: Principal, readableId: string, input: ClassicSearchInput, signal?: AbortSignal): Promise<{ results: SearchResultView[]; plan: SearchPlan }> {
    const { limit, offset, filter } = checkPage(input, []);
    const scope = await this.scope(principal, readableId);
    const plan = await this.plan(scope, input.query, signal);
    const depth = offset + limit;
    const run = (text: string, planFilter: FilterGroup[]) => this.retrieve(scope, { text, strategy: plan.strategy, filter: bothFilters(filter, planFilter), limit: depth, offset: 0 }, signal);
    let primary = await run(plan.primaryQuery, plan.filterGroups);
    let planFilter = plan.filterGroups;
    if (primary.length === 0 && planFilter.length > 0) {
      // The filters read from the question excluded everything: they were probably misread.
      planFilter = [];
      primary = await run(plan.primaryQuery, planFilter);
    }
    const variations = await Promise.all(plan.variations.map((text) => run(text, planFilter)));
    const fused = variations.length ? reciprocalRankFusion([{ results: primary }, ...variations.map((results) => ({ results, weight: VARIATION_WEIGHT }))]) : primary;
    return { results: fused.slice(offset, depth), plan };
  }

  /** The agent loop, answered at once with what it collected. */
  async agentic(principal: Principal, readableId: string, input: AgenticSearchInput, signal?: AbortSignal): Promise<SearchResultView[]> {
    const task = checkAgentic(input);
    const scope = await this.scope(principal, readableId);
    return this.agent.run(scope, task, () => undefined, signal ?? new AbortController().signal);
  }

  /**
   * The agent loop as a stream of its events. Input and collection are checked before the stream
   * starts (so bad requests fail as such); closing the iterator stops the loop.
   */
  async agenticEvents(principal: Principal, readableId: string, input: AgenticSearchInput): Promise<AsyncIterableIterator<AgentEvent>> {
    const task = checkAgentic(input);
    const scope = await this.scope(principal, readableId);
    const stop = new AbortController();
    const stream = new EventStream<AgentEvent>(() => stop.abort());
    this.agent.run(scope, task, (event) => stream.push(event), stop.signal).then(
      () => stream.end(),
      () => stream.end(),
    );
    return stream;
  }

  /** Deprecated GET search: hybrid results, optionally re-ordered by recency, and optionally an answer. */
  async legacy(principal: Principal, readableId: string, input: LegacySearchInput): Promise<LegacySearchResponse> {
    const issues: ValidationIssue[] = [];
    const bias = input.recencyBias ?? 0;
    if (!(bias >= 0 && bias <= 1)) issues.push({ loc: ['recency_bias'], msg: 'Input should be between 0 and 1', type: 'range' });
    const { limit, offset } = checkPage({ ...input, filter: null }, issues);
    const responseType = input.responseType ?? 'raw';
    const scope = await this.scope(principal, readableId);
    const depth = offset + limit;
    const candidates = await this.retrieve(scope, { text: input.query, strategy: 'hybrid', filter: [], limit: bias > 0 ? Math.max(depth, RECENCY_CANDIDATES) : depth, offset: 0 });
    const results = (bias > 0 ? byRecency(candidates, bias) : candidates).slice(offset, depth);
    if (results.length === 0) return { results, responseType, status: 'no_results', completion: null };
    if (responseType === 'raw') return { results, responseType, status: 'success', completion: null };
    if (!this.deps.languageModel) return { results, responseType, status: 'completion_unavailable', completion: null };
    const answer = await this.answer(input.query, results);
    return { results, responseType, status: answer === null ? 'no_relevant_results' : 'success', completion: answer };
  }

  /** An answer written from the results, or null when the model finds nothing relevant in them. */
  async answer(question: string, results: SearchResultView[], signal?: AbortSignal): Promise<string | null> {
    const sources = results
      .slice(0, 10)
      .map((r, i) => `[${i + 1}] ${r.name}\n${r.textualRepresentation.slice(0, 1500)}`)
      .join('\n\n');
    const { text } = await this.deps.languageModel!.complete({
      system: 'Answer the question from the numbered sources only, citing them as [n]. If none of them is relevant, answer exactly NO_RELEVANT_RESULTS.',
      prompt: `Question: ${question}\n\nSources:\n${sources}`,
      signal,
    });
    return text.trim() === '' || text.includes('NO_RELEVANT_RESULTS') ? null : text.trim();
  }

  /** The collection, its searchable connections, and a check that its vectors match the embedder's. */
  async scope(principal: Principal, readableId: string): Promise<SearchScope> {
    const em = this.deps.orm.em.fork();
    const collection = await em.findOne(Collection, { organization: principal.organizationId, readableId });
    if (!collection) throw NotFoundError.of('Collection', readableId);
    const embedder = await this.deps.embedder();
    if (collection.embeddingModelName !== embedder.modelName || collection.vectorSize !== embedder.dimensions) {
      throw new ConflictError(
        `Collection "${readableId}" was embedded with ${collection.embeddingModelName} (${collection.vectorSize} dimensions) but the service now embeds with ${embedder.modelName} (${embedder.dimensions}); search it with the same model or re-create it`,
      );
    }
    const connections = await em.find(SourceConnection, { collection: collection.id }, { orderBy: { createdAt: 'asc' } });
    const federated = connections.filter((c) => this.deps.federated.isFederated(c));
    return {
      collection,
      indexedConnectionIds: connections.filter((c) => !federated.includes(c)).map((c) => c.id),
      federated,
      sourceNames: [...new Set(connections.map((c) => c.shortName))],
    };
  }

  /**
   * One ranked list: the index (only live connections' chunks) and, when the collection has
   * federated connections, their own results merged by reciprocal rank fusion.
   */
  async retrieve(scope: SearchScope, request: RetrieveRequest, signal?: AbortSignal): Promise<SearchResultView[]> {
    const { text, limit, offset } = request;
    const federated = scope.federated.length > 0;
    const depth = offset + limit;
    const [indexed, ...sources] = await Promise.all([
      this.searchIndex(scope, { ...request, limit: federated ? depth : limit, offset: federated ? 0 : offset }),
      ...(federated ? [this.deps.federated.search(scope.federated, text, depth, request.filter.length ? request.filter : null, signal)] : []),
    ]);
    const lists = sources[0] ?? [];
    if (lists.length === 0) return federated ? indexed.slice(offset, depth) : indexed;
    return reciprocalRankFusion([{ results: indexed }, ...lists.map((results) => ({ results }))]).slice(offset, depth);
  }

  private async searchIndex(scope: SearchScope, { text, strategy, filter, limit, offset }: RetrieveRequest): Promise<SearchResultView[]> {
    if (scope.indexedConnectionIds.length === 0 || limit === 0) return [];
    // Chunks of deleted connections may linger until the worker's cleanup: never return them.
    const scoped = withConditions(filter, { field: 'service_system_metadata.sync_id', operator: 'in', value: scope.indexedConnectionIds });
    const vector = strategy === 'keyword' ? undefined : (await (await this.deps.embedder()).embed([text]))[0];
    const index = await this.deps.vectors();
    const hits = await index.search(scope.collection.id, { strategy, vector, text, filter: scoped, limit, offset, keywordWeight: this.deps.keywordWeight });
    return hits.map(fromChunk);
  }

  private async plan(scope: SearchScope, question: string, signal?: AbortSignal): Promise<SearchPlan> {
    const context = {
      sourceNames: scope.sourceNames,
      now: new Date(),
      probe: async (text: string) => (await this.searchIndex(scope, { text, strategy: 'keyword', filter: [], limit: 5, offset: 0 })).map((r) => r.textualRepresentation),
    };
    try {
      return await this.planner.plan(question, context, signal);
    } catch (error) {
      // The issue's rule: a planner failure falls back to instant search, never to an error.
      this.deps.logger.warn({ err: error instanceof Error ? error.message : String(error), collection: scope.collection.readableId }, 'search planner failed; running instant search');
      return { primaryQuery: question, variations: [], filterGroups: [], strategy: 'hybrid', planner: 'instant' };
    }
  }
}

/** Page and filter rules shared by the tiers; throws one ValidationError listing every problem. */
export function checkPage(input: { query: string; filter?: FilterGroup[] | null; limit?: number | null; offset?: number | null }, issues: ValidationIssue[]) {
  const limit = input.limit ?? PAGE_LIMIT.default;
  const offset = input.offset ?? 0;
  if (!Number.isInteger(limit) || limit < PAGE_LIMIT.min || limit > PAGE_LIMIT.max) issues.push({ loc: ['limit'], msg: 'Input should be between 1 and 1000', type: 'range' });
  if (!Number.isInteger(offset) || offset < 0) issues.push({ loc: ['offset'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
  if (typeof input.query !== 'string' || input.query.trim() === '') issues.push({ loc: ['query'], msg: 'String should not be empty', type: 'string_too_short' });
  issues.push(...filterIssues(input.filter ?? []));
  if (issues.length) throw new ValidationError(issues);
  return { limit, offset, filter: input.filter ?? [] };
}

function checkAgentic(input: AgenticSearchInput) {
  const issues: ValidationIssue[] = [];
  const limit = input.limit ?? null;
  if (limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT.max)) issues.push({ loc: ['limit'], msg: 'Input should be between 1 and 1000, or null', type: 'range' });
  if (typeof input.query !== 'string' || input.query.trim() === '') issues.push({ loc: ['query'], msg: 'String should not be empty', type: 'string_too_short' });
  issues.push(...filterIssues(input.filter ?? []));
  if (issues.length) throw new ValidationError(issues);
  return { query: input.query, thinking: input.thinking ?? false, filter: input.filter ?? [], limit };
}

/**
 * A push-to-pull queue: the producer pushes events as they happen, the consumer iterates. `return()`
 * (the consumer leaving) runs `onClose` at once, even while the consumer waits.
 */
class EventStream<T> implements AsyncIterableIterator<T> {
  private readonly buffer: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private ended = false;

  constructor(private readonly onClose: () => void) {}

  push(value: T): void {
    if (this.ended) return;
    if (this.waiting) {
      this.waiting({ value, done: false });
      this.waiting = null;
    } else this.buffer.push(value);
  }

  end(): void {
    this.ended = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffer.length) return Promise.resolve({ value: this.buffer.shift()!, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.buffer.length = 0;
    this.end();
    this.onClose();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
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
