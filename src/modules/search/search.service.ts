import type { Orm } from '../../platform/db/database.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { LanguageModel } from '../../platform/llm/language-model.js';
import type { Logger } from '../../platform/logger.js';
import type { FilterGroup, VectorIndex, VectorQuery } from '../../platform/vectors/vector-index.js';
import { ConflictError, NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { invalidateOnWrites, TtlCache } from '../../shared/ttl-cache.js';
import { Collection } from '../collections/collection.entity.js';
import { embeddingMismatch, PAGE_LIMIT } from '../collections/collection.service.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { AgentEvent } from './agentic/agent-events.js';
import { AgenticSearch, type AgenticBudget } from './agentic/agentic-search.js';
import { HeuristicPlanner } from './classic/heuristic-planner.js';
import { LanguageModelPlanner } from './classic/language-model-planner.js';
import { fuseByScore } from './classic/score-fusion.js';
import type { PlanningContext, SearchPlan, SearchPlanner } from './classic/search-plan.js';
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
  /** Defaults to SCOPE_CACHE_MS; 0 reads the database (and checks the index for lingering chunks) on every search. */
  scopeCacheMs?: number;
}

/**
 * Weight of each variation against the primary query (1) in classic fusion, by planner. The heuristic
 * planner's pseudo-relevance feedback variation, tuned on SciFact train (809 queries): nDCG@10 against
 * the primary query alone −0.0002 at 0.02, +0.0014 at 0.05, −0.0001 at 0.1, −0.0024 at 0.2; recall@100
 * +0.0025 at 0.05, +0.007 at 0.2. Feedback brings little where about one document is relevant per
 * question (RM3 on SciFact is noise-level in the literature too), so it only reorders near-ties. A
 * language model's rephrasings count half (no model in the benchmark: not tuned).
 */
const VARIATION_WEIGHTS: Record<SearchPlan['planner'], number> = { heuristic: 0.05, language_model: 0.5, instant: 0.5 };
/**
 * Results each ranked list of a classic plan holds at least: enough feedback documents for the
 * heuristic planner's probe (the primary query's run), and the same lists, hence the same fusion, for
 * every page within this depth.
 */
const PLAN_LIST_DEPTH = 50;
/** Candidates re-ordered by recency in legacy search, beyond the page. */
const RECENCY_CANDIDATES = 100;
/**
 * How long a search scope (collection and connections) is reused without asking the database. Any
 * write this process makes through the ORM (a collection or connection created, changed or deleted)
 * drops it at once; writes of other API processes are seen within this time.
 */
export const SCOPE_CACHE_MS = 1000;
/** How long the answer of onlyLiveChunks is reused. */
const LIVE_ONLY_CACHE_MS = 1000;

/** Search over a collection: its synced chunks and its federated sources. Scoped to the caller's organization. */
export class SearchService {
  private readonly planner: SearchPlanner;
  private readonly agent: AgenticSearch;
  /** Scopes by organization and readable id: every search starts with one. */
  private readonly scopes: TtlCache<SearchScope>;
  /** See onlyLiveChunks. */
  private readonly liveOnly: TtlCache<boolean>;

  constructor(readonly deps: SearchServiceDependencies) {
    this.planner = deps.languageModel ? new LanguageModelPlanner(deps.languageModel) : new HeuristicPlanner();
    this.agent = new AgenticSearch(this, new EntityNavigator(deps.orm), deps.languageModel, deps.agenticBudget, deps.logger);
    this.scopes = new TtlCache(deps.scopeCacheMs ?? SCOPE_CACHE_MS, 1000);
    this.liveOnly = new TtlCache(deps.scopeCacheMs === 0 ? 0 : LIVE_ONLY_CACHE_MS, 1000);
    // Connections are deleted by native queries, but in the transaction that records their event: 'all'.
    invalidateOnWrites(deps.orm, 'all', () => {
      this.scopes.invalidate();
      this.liveOnly.invalidate();
    });
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
    const depth = offset + limit;
    const listDepth = Math.max(depth, PLAN_LIST_DEPTH);
    // Each distinct query runs once: the planner's feedback probe is the primary query's own run.
    const runs = new Map<string, { depth: number; results: Promise<SearchResultView[]> }>();
    const run = (text: string, strategy: RetrievalStrategy, planFilter: FilterGroup[]) => {
      const key = JSON.stringify([text, strategy, planFilter]);
      const known = runs.get(key);
      if (known) return known;
      const entry = { depth: listDepth, results: this.retrieve(scope, { text, strategy, filter: bothFilters(filter, planFilter), limit: listDepth, offset: 0 }, signal) };
      runs.set(key, entry);
      entry.results.catch(() => runs.get(key) === entry && runs.delete(key));
      return entry;
    };
    const probe = async (text: string, planFilter: FilterGroup[] = []) => topDocumentTexts(await run(text, 'hybrid', planFilter).results);
    const plan = await this.plan(scope, input.query, probe, signal);
    let planFilter = plan.filterGroups;
    let primary = run(plan.primaryQuery, plan.strategy, planFilter);
    if ((await primary.results).length === 0 && planFilter.length > 0) {
      // The filters read from the question excluded everything: they were probably misread.
      planFilter = [];
      primary = run(plan.primaryQuery, plan.strategy, planFilter);
    }
    const weight = VARIATION_WEIGHTS[plan.planner];
    const lists = await Promise.all(
      [{ ...primary, weight: 1 }, ...plan.variations.map((text) => ({ ...run(text, plan.strategy, planFilter), weight }))].map(async (list) => ({ ...list, results: await list.results })),
    );
    return { results: fuseByScore(lists).slice(offset, depth), plan };
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
    const scope = await this.scopes.get(`${principal.organizationId}\u0000${readableId}`, () => this.loadScope(principal.organizationId, readableId));
    const { collection } = scope;
    const embedder = await this.deps.embedder();
    const mismatch = embeddingMismatch(collection, embedder);
    if (mismatch) throw new ConflictError(mismatch);
    return { ...scope };
  }

  /**
   * One query when the collection has connections (they come with their collection; their cursors,
   * which can be large, stay in the database), a second one only to tell an empty collection from a
   * missing one.
   */
  private async loadScope(organizationId: string, readableId: string): Promise<SearchScope> {
    const em = this.deps.orm.em.fork();
    const connections = (await em.find(
      SourceConnection,
      { organization: organizationId, collection: { organization: organizationId, readableId } },
      { populate: ['collection'], exclude: ['cursor'], orderBy: { createdAt: 'asc', id: 'asc' } },
    )) as SourceConnection[];
    const collection = connections[0]?.collection ?? (await em.findOne(Collection, { organization: organizationId, readableId }));
    if (!collection) throw NotFoundError.of('Collection', readableId);
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

  private async searchIndex(scope: SearchScope, request: RetrieveRequest): Promise<SearchResultView[]> {
    const query = await this.indexQuery(scope, request);
    if (!query) return [];
    const hits = await (await this.deps.vectors()).search(scope.collection.id, query);
    return hits.map(fromChunk);
  }

  /**
   * The index query of one ranked list over the scope's synced chunks (null when there is nothing
   * to search), with the query embedded. Public so that benchmarks time exactly what searches send.
   */
  async indexQuery(scope: SearchScope, { text, strategy, filter, limit, offset }: RetrieveRequest): Promise<VectorQuery | null> {
    if (scope.indexedConnectionIds.length === 0 || limit === 0) return null;
    const [vector, onlyLive] = await Promise.all([
      strategy === 'keyword' ? undefined : this.deps.embedder().then(async (embedder) => (await embedder.embed([text]))[0]),
      this.onlyLiveChunks(scope),
    ]);
    // Chunks of deleted connections may linger until the worker's cleanup: never return them.
    const scoped = onlyLive ? filter : withConditions(filter, { field: 'service_system_metadata.sync_id', operator: 'in', value: scope.indexedConnectionIds });
    return { strategy, vector, text, filter: scoped, limit, offset, keywordWeight: this.deps.keywordWeight };
  }

  /**
   * Whether the collection's index holds chunks of the scope's live connections only: then the
   * sync_id condition that keeps deleted connections' lingering chunks out selects every row, and
   * is left out (evaluating it is a scan of the column on every query: ~4 ms of a 100,000-chunk
   * hybrid query). Asked with a filtered count (~2 ms), remembered briefly per set of live
   * connections: a deleted connection changes the set (and this process's deletes drop the cache),
   * and no chunk of a deleted connection is written after it (its syncs are stopped first). The
   * TTL bounds what a sync that failed to stop in time could still write.
   */
  private async onlyLiveChunks(scope: SearchScope): Promise<boolean> {
    const live = scope.indexedConnectionIds;
    return this.liveOnly.get(`${scope.collection.id}\u0000${live.join(',')}`, async () => {
      const index = await this.deps.vectors();
      const foreign = await index.count(scope.collection.id, [{ conditions: [{ field: 'service_system_metadata.sync_id', operator: 'not_in', value: live }] }]);
      return foreign === 0;
    });
  }

  private async plan(scope: SearchScope, question: string, probe: PlanningContext['probe'], signal?: AbortSignal): Promise<SearchPlan> {
    const context: PlanningContext = { sourceNames: scope.sourceNames, now: new Date(), probe };
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

/** The text of each document's best chunk, best document first (feedback for the planner). */
function topDocumentTexts(results: SearchResultView[]): string[] {
  const seen = new Set<string>();
  const texts: string[] = [];
  for (const r of results) {
    const document = `${r.serviceSystemMetadata.syncId ?? r.serviceSystemMetadata.sourceName}\u0000${r.entityId}`;
    if (seen.has(document)) continue;
    seen.add(document);
    texts.push(r.textualRepresentation);
  }
  return texts;
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
