import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { createUnionType, Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum RetrievalStrategyValue {
  semantic = 'semantic',
  keyword = 'keyword',
  hybrid = 'hybrid',
}
registerEnumType(RetrievalStrategyValue, { name: 'RetrievalStrategy', description: 'semantic: vectors; keyword: BM25; hybrid: both, their normalised scores fused with a keyword weight (CATCHMENT_HYBRID_KEYWORD_WEIGHT).' });

@InputType({ description: 'field, operator and value of the spec (FilterableField, FilterOperator); use an array value for in and not_in.' })
export class FilterConditionInput {
  @Field({ description: 'entity_id, name, created_at, updated_at, breadcrumbs.entity_id, breadcrumbs.name, breadcrumbs.entity_type, service_system_metadata.{entity_type, source_name, original_entity_id, chunk_index, sync_id, sync_job_id}.' })
  field!: string;
  @Field({ description: 'equals, not_equals, contains, greater_than, less_than, greater_than_or_equal, less_than_or_equal, in, not_in.' })
  operator!: string;
  @Field(() => GraphQLJSON, { description: 'string, integer, boolean, or an array of strings or integers.' })
  value!: unknown;
}

@InputType({ description: 'Conditions are ANDed; groups in a filter are ORed.' })
export class FilterGroupInput {
  @Field(() => [FilterConditionInput]) conditions!: FilterConditionInput[];
}

@InputType()
export class InstantSearchInput {
  @Field() query!: string;
  @Field(() => RetrievalStrategyValue, { nullable: true, defaultValue: RetrievalStrategyValue.hybrid }) retrievalStrategy?: RetrievalStrategyValue | null;
  @Field(() => [FilterGroupInput], { nullable: true }) filter?: FilterGroupInput[] | null;
  @Field(() => Int, { nullable: true, description: '1 to 1000, default 100.' }) limit?: number | null;
  @Field(() => Int, { nullable: true, description: 'Results to skip, default 0.' }) offset?: number | null;
}

/**
 * Search results are plain data read by property: GraphQL's default resolver reads each field
 * (`simpleResolvers`), not a type-graphql wrapper per field per result (an object and a closure each,
 * ~250 fields a 10-result page; these types have no middleware nor field resolver).
 */
const PLAIN_DATA = { simpleResolvers: true } as const;

@ObjectType(PLAIN_DATA)
export class SearchBreadcrumb {
  @Field() entityId!: string;
  @Field() name!: string;
  @Field() entityType!: string;
}

@ObjectType(PLAIN_DATA)
export class ServiceSystemMetadata {
  @Field() sourceName!: string;
  @Field() entityType!: string;
  @Field(() => Int, { description: 'Index of the chunk shown as textualRepresentation (0 for federated results).' }) chunkIndex!: number;
  @Field() originalEntityId!: string;
  @Field(() => String, { nullable: true, description: 'Null for federated results.' }) syncId!: string | null;
  @Field(() => String, { nullable: true, description: 'Null for federated results.' }) syncJobId!: string | null;
}

@ObjectType(PLAIN_DATA)
export class SearchAccess {
  @Field(() => [String], { nullable: true, description: 'Principals who can view; null if unknown.' }) viewers!: string[] | null;
  @Field(() => Boolean, { nullable: true }) isPublic!: boolean | null;
}

@ObjectType({ ...PLAIN_DATA, description: 'One document (entity), with its hierarchy and system metadata: a response holds each document at most once, shown by its best-matching chunk.' })
export class SearchResult {
  @Field() entityId!: string;
  @Field() name!: string;
  @Field(() => Float, { description: "The document's own score (its best chunk's; containers count a tenth); it orders the results." }) relevanceScore!: number;
  @Field(() => [SearchBreadcrumb]) breadcrumbs!: SearchBreadcrumb[];
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
  @Field(() => Date, { nullable: true }) updatedAt!: Date | null;
  @Field({ description: "The document's best-matching chunk (a prose chunk inside a section starts with its heading path)." }) textualRepresentation!: string;
  @Field(() => ServiceSystemMetadata) serviceSystemMetadata!: ServiceSystemMetadata;
  @Field(() => SearchAccess) access!: SearchAccess;
  @Field() webUrl!: string;
  @Field(() => String, { nullable: true, description: 'Download URL, for file entities.' }) url!: string | null;
  @Field(() => GraphQLJSONObject) rawSourceFields!: Record<string, unknown>;
}

@ObjectType({ ...PLAIN_DATA, description: 'Documents ordered by relevance, each at most once; offset pages over documents.' })
export class SearchResponse {
  @Field(() => [SearchResult]) results!: SearchResult[];
}

@InputType({ description: 'Classic search: a planner (the language model, or the built-in heuristic planner) turns the question into queries and filters that run and are fused.' })
export class ClassicSearchInput {
  @Field() query!: string;
  @Field(() => [FilterGroupInput], { nullable: true, description: 'Applied on top of any filter the planner reads from the question.' }) filter?: FilterGroupInput[] | null;
  @Field(() => Int, { nullable: true, description: '1 to 1000, default 100.' }) limit?: number | null;
  @Field(() => Int, { nullable: true, description: 'Results to skip, default 0.' }) offset?: number | null;
}

@ObjectType({ description: 'What the classic planner decided; the results come from running it.' })
export class SearchPlanView {
  @Field() primaryQuery!: string;
  @Field(() => [String]) variations!: string[];
  @Field(() => GraphQLJSON, { description: 'Filter groups read from the question (FilterGroup[]).' }) filterGroups!: unknown;
  @Field(() => RetrievalStrategyValue) strategy!: RetrievalStrategyValue;
  @Field({ description: 'language_model, heuristic, or instant (the planner failed and instant search ran instead).' }) planner!: string;
}

@ObjectType()
export class ClassicSearchResponse {
  @Field(() => [SearchResult]) results!: SearchResult[];
  @Field(() => SearchPlanView) plan!: SearchPlanView;
}

@InputType({ description: 'Agentic search: an agent loop that searches, reads, navigates the hierarchy and collects results.' })
export class AgenticSearchInput {
  @Field() query!: string;
  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Extended reasoning (sent to the language model as reasoning effort).' }) thinking?: boolean | null;
  @Field(() => [FilterGroupInput], { nullable: true, description: 'Always applied on top of the filters the agent writes.' }) filter?: FilterGroupInput[] | null;
  @Field(() => Int, { nullable: true, description: 'At least 1; null lets the agent decide how many results to return.' }) limit?: number | null;
}

@ObjectType()
export class AgentThinkingDiagnostics {
  @Field(() => Int) iteration!: number;
  @Field(() => Int) promptTokens!: number;
  @Field(() => Int) completionTokens!: number;
}

@ObjectType()
export class AgentToolCallDiagnostics {
  @Field(() => Int) iteration!: number;
  @Field() toolCallId!: string;
  @Field(() => GraphQLJSONObject, { description: 'The tool input arguments, as the agent sent them.' }) arguments!: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { description: 'Tool result statistics: search {result_count, new_results, first_results}; read {found, not_found, entities}; add/remove {added|removed, already_collected, not_found, total_collected}; count {count}; navigation {result_count, first_results}; review {total_collected, entity_count, first_results}; return {accepted, total_collected, warning?}.' })
  stats!: Record<string, unknown>;
}

@ObjectType()
export class AgentDoneDiagnostics {
  @Field(() => Int) totalIterations!: number;
  @Field(() => [String]) allSeenEntityIds!: string[];
  @Field(() => [String]) allReadEntityIds!: string[];
  @Field(() => [String]) allCollectedEntityIds!: string[];
  @Field({ description: 'True when the iteration or time budget ended the loop.' }) maxIterationsHit!: boolean;
  @Field(() => Int) promptTokens!: number;
  @Field(() => Int) completionTokens!: number;
}

@ObjectType()
export class AgentErrorDiagnostics {
  @Field(() => Int) iteration!: number;
}

@ObjectType({ description: 'The first event of an agentic search.' })
export class AgentStartedEvent {
  @Field(() => String) type!: 'started';
  @Field() requestId!: string;
  @Field() tier!: string;
  @Field() collectionReadableId!: string;
  @Field() query!: string;
  @Field(() => Boolean, { nullable: true }) thinking!: boolean | null;
  @Field(() => GraphQLJSON, { nullable: true, description: 'FilterGroup[] or null.' }) filter!: unknown;
  @Field(() => Int, { nullable: true }) limit!: number | null;
}

@ObjectType({ description: 'One agent iteration: its reasoning and text before the tool calls.' })
export class AgentThinkingEvent {
  @Field(() => String) type!: 'thinking';
  @Field(() => String, { nullable: true }) thinking!: string | null;
  @Field(() => String, { nullable: true }) text!: string | null;
  @Field(() => Int) durationMs!: number;
  @Field(() => AgentThinkingDiagnostics) diagnostics!: AgentThinkingDiagnostics;
}

@ObjectType({ description: 'One tool the agent ran, with its arguments and result statistics.' })
export class AgentToolCallEvent {
  @Field(() => String) type!: 'tool_call';
  @Field({ description: 'search, read, add_to_results, remove_from_results, count, get_children, get_siblings, get_parent, review_results or return_results_to_user.' }) toolName!: string;
  @Field(() => Int) durationMs!: number;
  @Field(() => AgentToolCallDiagnostics) diagnostics!: AgentToolCallDiagnostics;
}

@ObjectType()
export class AgentRerankingDiagnostics {
  @Field(() => Int, { description: 'Documents sent to the rerank endpoint.' }) inputCount!: number;
  @Field(() => Int, { description: 'Documents it scored, now first in its order.' }) outputCount!: number;
  @Field(() => String, { nullable: true, description: 'The model named in rerank requests; null when the server serves one model.' }) model!: string | null;
  @Field(() => Float, { description: 'The highest score the endpoint gave.' }) topRelevanceScore!: number;
  @Field(() => Float, { description: 'The lowest score the endpoint gave.' }) bottomRelevanceScore!: number;
}

@ObjectType({ description: 'The rerank endpoint reordered the results (only when one is configured and answered), before done.' })
export class AgentRerankingEvent {
  @Field(() => String) type!: 'reranking';
  @Field(() => Int) durationMs!: number;
  @Field(() => AgentRerankingDiagnostics) diagnostics!: AgentRerankingDiagnostics;
}

@ObjectType({ description: 'The last event of a successful run: the results.' })
export class AgentDoneEvent {
  @Field(() => String) type!: 'done';
  @Field(() => [SearchResult]) results!: SearchResult[];
  @Field(() => Int) durationMs!: number;
  @Field(() => AgentDoneDiagnostics) diagnostics!: AgentDoneDiagnostics;
}

@ObjectType({ description: 'The last event of a failed run.' })
export class AgentErrorEvent {
  @Field(() => String) type!: 'error';
  @Field() message!: string;
  @Field(() => Int, { nullable: true }) durationMs!: number | null;
  @Field(() => AgentErrorDiagnostics, { nullable: true }) diagnostics!: AgentErrorDiagnostics | null;
}

export const AgentEventUnion = createUnionType({
  name: 'AgentEvent',
  description: 'An agentic search event: started, then thinking and tool_call per iteration, reranking when the rerank endpoint reordered the results, then done or error.',
  types: () => [AgentStartedEvent, AgentThinkingEvent, AgentToolCallEvent, AgentRerankingEvent, AgentDoneEvent, AgentErrorEvent] as const,
  resolveType: (event: { type: string }) =>
    ({ started: AgentStartedEvent, thinking: AgentThinkingEvent, tool_call: AgentToolCallEvent, reranking: AgentRerankingEvent, done: AgentDoneEvent, error: AgentErrorEvent })[event.type],
});

export enum LegacyResponseType {
  raw = 'raw',
  completion = 'completion',
}
registerEnumType(LegacyResponseType, { name: 'LegacyResponseType', description: 'raw: results only; completion: also an answer written by the language model.' });

@ObjectType({ description: 'Deprecated search response (GET /collections/{readable_id}/search).' })
export class LegacySearchResponse {
  @Field(() => [SearchResult]) results!: SearchResult[];
  @Field(() => LegacyResponseType) responseType!: LegacyResponseType;
  @Field({ description: 'success, no_results (nothing matched), no_relevant_results (the model found nothing relevant), completion_unavailable (completion asked, no language model configured).' })
  status!: string;
  @Field(() => String, { nullable: true }) completion!: string | null;
}
