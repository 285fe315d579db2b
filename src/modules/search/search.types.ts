import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum RetrievalStrategyValue {
  semantic = 'semantic',
  keyword = 'keyword',
  hybrid = 'hybrid',
}
registerEnumType(RetrievalStrategyValue, { name: 'RetrievalStrategy', description: 'semantic: vectors; keyword: BM25; hybrid: both, fused by reciprocal rank.' });

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

@ObjectType()
export class SearchBreadcrumb {
  @Field() entityId!: string;
  @Field() name!: string;
  @Field() entityType!: string;
}

@ObjectType()
export class ServiceSystemMetadata {
  @Field() sourceName!: string;
  @Field() entityType!: string;
  @Field(() => Int) chunkIndex!: number;
  @Field() originalEntityId!: string;
  @Field(() => String, { nullable: true, description: 'Null for federated results.' }) syncId!: string | null;
  @Field(() => String, { nullable: true, description: 'Null for federated results.' }) syncJobId!: string | null;
}

@ObjectType()
export class SearchAccess {
  @Field(() => [String], { nullable: true, description: 'Principals who can view; null if unknown.' }) viewers!: string[] | null;
  @Field(() => Boolean, { nullable: true }) isPublic!: boolean | null;
}

@ObjectType({ description: 'One search hit: a chunk of an entity, with its hierarchy and system metadata.' })
export class SearchResult {
  @Field() entityId!: string;
  @Field() name!: string;
  @Field(() => Float) relevanceScore!: number;
  @Field(() => [SearchBreadcrumb]) breadcrumbs!: SearchBreadcrumb[];
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
  @Field(() => Date, { nullable: true }) updatedAt!: Date | null;
  @Field() textualRepresentation!: string;
  @Field(() => ServiceSystemMetadata) serviceSystemMetadata!: ServiceSystemMetadata;
  @Field(() => SearchAccess) access!: SearchAccess;
  @Field() webUrl!: string;
  @Field(() => String, { nullable: true, description: 'Download URL, for file entities.' }) url!: string | null;
  @Field(() => GraphQLJSONObject) rawSourceFields!: Record<string, unknown>;
}

@ObjectType({ description: 'Results ordered by relevance.' })
export class SearchResponse {
  @Field(() => [SearchResult]) results!: SearchResult[];
}
