import type { ToolDefinition } from '../../../platform/llm/language-model.js';
import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import type { EntityNavigator, EntitySummary } from '../entity-navigator.js';
import { bothFilters, filterIssues, withConditions } from '../filter-rules.js';
import { fromChunk, type RetrievalStrategy, type SearchResultView } from '../search-result.js';
import type { Retrieval, SearchScope } from '../retrieval.js';
import type { ClassicSearch } from '../classic/classic-search.js';
import type { RerankReport } from '../rerank-results.js';
import type { AgentToolName } from './agent-events.js';

/** What a tool gives back: `output` goes to the model, `stats` to the event stream. */
export interface ToolOutcome {
  output: unknown;
  stats: Record<string, unknown>;
  /** return_results_to_user accepted: the loop ends. */
  finished?: boolean;
}

const SEARCH_LIMIT = { default: 10, max: 50 };
/** A classic search ranks as the classic tier does, so it may ask for as many documents as a classic page. */
const CLASSIC_SEARCH_LIMIT = { default: 10, max: 1000 };
const NAVIGATION_LIMIT = { default: 20, max: 100 };
/** Most entities one read returns, and how much of each (the model's context is finite). */
export const READ_MAX_ENTITIES = 10;
const READ_MAX_CHARS = 4000;
const SNIPPET_CHARS = 300;
const FIRST_RESULTS = 5;

const FILTER_PARAMETER = {
  type: 'array',
  description: 'Optional filter groups (ORed) of conditions (ANDed): {field, operator, value}. Fields: entity_id, name, created_at, updated_at, breadcrumbs.entity_id, breadcrumbs.name, breadcrumbs.entity_type, service_system_metadata.entity_type, service_system_metadata.source_name. Operators: equals, not_equals, contains, greater_than, less_than, greater_than_or_equal, less_than_or_equal, in, not_in.',
  items: { type: 'object', properties: { conditions: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, operator: { type: 'string' }, value: {} }, required: ['field', 'operator', 'value'] } } }, required: ['conditions'] },
};
const ENTITY_IDS = { type: 'object', properties: { entity_ids: { type: 'array', items: { type: 'string' }, minItems: 1 } }, required: ['entity_ids'] };
const ENTITY_ID = (extra: Record<string, unknown> = {}) => ({ type: 'object', properties: { entity_id: { type: 'string' }, ...extra }, required: ['entity_id'] });
const LIMIT = (max: number) => ({ limit: { type: 'integer', minimum: 1, maximum: max } });

export const AGENT_TOOLS: (ToolDefinition & { name: AgentToolName })[] = [
  { name: 'search', description: 'Search the collection. Returns entities with a snippet and score; repeat with other words to find more. plan "classic" runs classic search (the question planned into queries, fused, rescored by titles and headings) instead of one query.', parameters: { type: 'object', properties: { query: { type: 'string' }, plan: { type: 'string', enum: ['single', 'classic'] }, retrieval_strategy: { type: 'string', enum: ['semantic', 'keyword', 'hybrid'] }, filter: FILTER_PARAMETER, ...LIMIT(SEARCH_LIMIT.max), offset: { type: 'integer', minimum: 0 } }, required: ['query'] } },
  { name: 'read', description: 'Read the full text of entities by id.', parameters: ENTITY_IDS },
  { name: 'add_to_results', description: 'Collect entities as results for the user.', parameters: ENTITY_IDS },
  { name: 'remove_from_results', description: 'Drop collected entities.', parameters: ENTITY_IDS },
  { name: 'count', description: 'Count the chunks matching a filter (and the caller\'s filter), to size a search space.', parameters: { type: 'object', properties: { filter: FILTER_PARAMETER } } },
  { name: 'get_children', description: 'Entities directly under an entity in the source hierarchy (e.g. files in a folder).', parameters: ENTITY_ID(LIMIT(NAVIGATION_LIMIT.max)) },
  { name: 'get_siblings', description: 'Entities with the same parent as an entity.', parameters: ENTITY_ID(LIMIT(NAVIGATION_LIMIT.max)) },
  { name: 'get_parent', description: 'The parent of an entity in the source hierarchy.', parameters: ENTITY_ID() },
  { name: 'review_results', description: 'List what is collected so far.', parameters: { type: 'object', properties: {} } },
  { name: 'return_results_to_user', description: 'Finish: return the collected results to the user.', parameters: { type: 'object', properties: {} } },
];

class ToolInputError extends Error {}

/**
 * The agent's tools over one collection, and what the agent has seen, read and collected. The
 * caller's filter is applied on top of every filter the agent writes. Tools never throw on bad
 * arguments: the model gets the error as the output and may try again.
 */
export class AgentToolbox {
  /** Best result seen per entity (search hits and read chunks), in first-seen order. */
  readonly seen = new Map<string, SearchResultView>();
  readonly read = new Set<string>();
  readonly collected = new Set<string>();
  /** The last classic search's ranking (best first) and its rerank report: a ranking of the whole collection, not of the collected alone. */
  classicRanking: { results: SearchResultView[]; reranking: RerankReport | null } | null = null;

  constructor(
    private readonly retrieval: Retrieval,
    private readonly classic: ClassicSearch,
    private readonly scope: SearchScope,
    private readonly callerFilter: FilterGroup[],
    private readonly navigator: EntityNavigator,
  ) {}

  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome> {
    try {
      switch (name as AgentToolName) {
        case 'search': return await this.searchTool(args, signal);
        case 'read': return await this.readTool(entityIds(args));
        case 'add_to_results': return await this.addTool(entityIds(args));
        case 'remove_from_results': return this.removeTool(entityIds(args));
        case 'count': return await this.countTool(args);
        case 'get_children': return await this.navigate(await this.navigator.children(this.scope.indexedConnectionIds, entityId(args), limit(args, NAVIGATION_LIMIT)));
        case 'get_siblings': {
          const siblings = await this.navigator.siblings(this.scope.indexedConnectionIds, entityId(args), limit(args, NAVIGATION_LIMIT));
          if (siblings === null) throw new ToolInputError(`Unknown entity "${entityId(args)}"`);
          return this.navigate(siblings);
        }
        case 'get_parent': {
          const { self, parent } = await this.navigator.parent(this.scope.indexedConnectionIds, entityId(args));
          if (!self) throw new ToolInputError(`Unknown entity "${entityId(args)}"`);
          return this.navigate(parent ? [parent] : []);
        }
        case 'review_results': return this.reviewTool();
        case 'return_results_to_user': {
          const warning = this.collected.size === 0 ? 'Nothing was collected: the best results seen are returned instead.' : undefined;
          return { output: { accepted: true, total_collected: this.collected.size }, stats: { accepted: true, total_collected: this.collected.size, ...(warning ? { warning } : {}) }, finished: true };
        }
        default: throw new ToolInputError(`Unknown tool "${name}"`);
      }
    } catch (error) {
      if (!(error instanceof ToolInputError)) throw error;
      return { output: { error: error.message }, stats: { error: error.message } };
    }
  }

  private async searchTool(args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome> {
    const query = typeof args.query === 'string' ? args.query.trim() : '';
    if (!query) throw new ToolInputError('search needs a non-empty "query"');
    const offset = Number.isInteger(args.offset) && (args.offset as number) >= 0 ? (args.offset as number) : 0;
    const results = args.plan === 'classic' ? await this.classicSearch(query, args, offset, signal) : await this.singleSearch(query, args, offset, signal);
    let newResults = 0;
    for (const result of results) {
      if (!this.seen.has(result.entityId)) newResults++;
      this.remember(result);
    }
    const entries = results.map((r) => ({ ...summary(r), score: round(r.relevanceScore), snippet: r.textualRepresentation.slice(0, SNIPPET_CHARS) }));
    return { output: { results: entries }, stats: { result_count: results.length, new_results: newResults, first_results: entries.slice(0, FIRST_RESULTS).map(({ entity_id, name, score }) => ({ entity_id, name, score })) } };
  }

  private async singleSearch(query: string, args: Record<string, unknown>, offset: number, signal?: AbortSignal): Promise<SearchResultView[]> {
    const strategy = (['semantic', 'keyword', 'hybrid'].includes(args.retrieval_strategy as string) ? args.retrieval_strategy : 'hybrid') as RetrievalStrategy;
    return this.retrieval.retrieve(this.scope, { text: query, strategy, filter: this.filter(args.filter), limit: limit(args, SEARCH_LIMIT), offset }, signal);
  }

  private async classicSearch(query: string, args: Record<string, unknown>, offset: number, signal?: AbortSignal): Promise<SearchResultView[]> {
    const { results, reranking } = await this.classic.run(this.scope, { query, filter: this.filter(args.filter), limit: limit(args, CLASSIC_SEARCH_LIMIT), offset }, signal);
    this.classicRanking = { results, reranking };
    return results;
  }

  private async readTool(ids: string[]): Promise<ToolOutcome> {
    const wanted = ids.slice(0, READ_MAX_ENTITIES);
    const chunks = await this.retrieval.list(this.scope, this.withCaller({ field: 'entity_id', operator: 'in', value: wanted }), wanted.length * 50);
    const entities = wanted.flatMap((id) => {
      const own = chunks.filter((c) => c.entityId === id);
      if (own.length === 0) return [];
      this.read.add(id);
      if (!this.seen.has(id)) this.remember(unscored(own[0]!));
      return [{ entity_id: id, name: own[0]!.name, entity_type: own[0]!.entityType, text: [...own].sort((a, b) => a.chunkIndex - b.chunkIndex).map((c) => c.text).join('\n').slice(0, READ_MAX_CHARS) }];
    });
    const notFound = wanted.filter((id) => !entities.some((e) => e.entity_id === id));
    return { output: { entities, not_found: notFound }, stats: { found: entities.length, not_found: notFound.length, entities: entities.map((e) => e.entity_id) } };
  }

  private async addTool(ids: string[]): Promise<ToolOutcome> {
    const unknown = ids.filter((id) => !this.seen.has(id));
    if (unknown.length) {
      // Entities met through navigation only: look them up (within the caller's filter) before collecting.
      const chunks = await this.retrieval.list(this.scope, this.withCaller({ field: 'entity_id', operator: 'in', value: unknown }), unknown.length * 50);
      for (const chunk of chunks) if (!this.seen.has(chunk.entityId)) this.remember(unscored(chunk));
    }
    let added = 0;
    let already = 0;
    const notFound: string[] = [];
    for (const id of ids) {
      if (!this.seen.has(id)) notFound.push(id);
      else if (this.collected.has(id)) already++;
      else {
        this.collected.add(id);
        added++;
      }
    }
    const stats = { added, already_collected: already, not_found: notFound.length, total_collected: this.collected.size };
    return { output: { ...stats, not_found_ids: notFound }, stats };
  }

  private removeTool(ids: string[]): ToolOutcome {
    let removed = 0;
    for (const id of ids) if (this.collected.delete(id)) removed++;
    const stats = { removed, not_found: ids.length - removed, total_collected: this.collected.size };
    return { output: stats, stats };
  }

  private async countTool(args: Record<string, unknown>): Promise<ToolOutcome> {
    const count = await this.retrieval.count(this.scope, this.filter(args.filter));
    return { output: { count }, stats: { count } };
  }

  private navigate(entities: EntitySummary[]): ToolOutcome {
    const entries = entities.map((e) => ({ entity_id: e.entityId, name: e.name, entity_type: e.entityType, path: e.breadcrumbs.map((b) => b.name).join(' / ') }));
    return { output: { entities: entries }, stats: { result_count: entries.length, first_results: entries.slice(0, FIRST_RESULTS).map(({ entity_id, name }) => ({ entity_id, name })) } };
  }

  private reviewTool(): ToolOutcome {
    const entries = [...this.collected].map((id) => ({ ...summary(this.seen.get(id)!), snippet: this.seen.get(id)!.textualRepresentation.slice(0, SNIPPET_CHARS) }));
    return {
      output: { collected: entries },
      stats: { total_collected: this.collected.size, entity_count: new Set(entries.map((e) => e.entity_id)).size, first_results: entries.slice(0, FIRST_RESULTS).map(({ entity_id, name }) => ({ entity_id, name })) },
    };
  }

  /** The agent's filter (validated) with the caller's on top. */
  private filter(raw: unknown): FilterGroup[] {
    if (raw === undefined || raw === null) return this.callerFilter;
    const filter = raw as FilterGroup[];
    const issues = filterIssues(filter);
    if (issues.length) throw new ToolInputError(`Invalid filter: ${issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')}`);
    return bothFilters(this.callerFilter, filter);
  }

  private withCaller(...conditions: FilterGroup['conditions']): FilterGroup[] {
    return withConditions(this.callerFilter, ...conditions);
  }

  private remember(result: SearchResultView) {
    const known = this.seen.get(result.entityId);
    if (!known || known.relevanceScore < result.relevanceScore) this.seen.set(result.entityId, result);
  }

}

/** A chunk met outside a ranked search (read, navigation): no score of its own. */
const unscored = (chunk: Parameters<typeof fromChunk>[0]['chunk']) => fromChunk({ chunk, score: 0 });

function summary(result: SearchResultView) {
  return { entity_id: result.entityId, name: result.name, entity_type: result.serviceSystemMetadata.entityType, path: result.breadcrumbs.map((b) => b.name).join(' / ') };
}

function entityIds(args: Record<string, unknown>): string[] {
  const ids = args.entity_ids;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string')) throw new ToolInputError('"entity_ids" must be a non-empty array of strings');
  return [...new Set(ids as string[])];
}

function entityId(args: Record<string, unknown>): string {
  if (typeof args.entity_id !== 'string' || args.entity_id === '') throw new ToolInputError('"entity_id" must be a string');
  return args.entity_id;
}

function limit(args: Record<string, unknown>, bounds: { default: number; max: number }): number {
  const value = args.limit;
  return Number.isInteger(value) ? Math.min(bounds.max, Math.max(1, value as number)) : bounds.default;
}

const round = (value: number) => Math.round(value * 1e4) / 1e4;
