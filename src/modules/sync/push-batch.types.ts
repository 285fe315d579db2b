import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { SyncJob } from './sync-job.types.js';

@InputType({ description: 'One ancestor of a pushed entity (breadcrumbs go from the root down).' })
export class PushBreadcrumbInput {
  @Field({ description: 'Id of the ancestor (1 to 512 characters).' }) entityId!: string;
  @Field({ description: 'Display name of the ancestor (1 to 1,024 characters).' }) name!: string;
  @Field(() => String, { nullable: true, description: 'Kind of ancestor (up to 128 characters; default `push_entity`).' }) entityType?: string | null;
}

@InputType({ description: 'An entity sent to a push connection: inserted, or updated when the connection already has its id.' })
export class PushEntityInput {
  @Field({ description: 'Stable id of the entity, unique in the connection (1 to 512 characters); search results show it as `entityId`.' }) id!: string;
  @Field(() => String, { nullable: true, description: 'Display name (1 to 1,024 characters); defaults to the id.' }) name?: string | null;
  @Field({ description: 'The searchable text: chunked, embedded and indexed for keyword search.' }) text!: string;
  @Field(() => String, { nullable: true, description: 'Kind of entity (up to 128 characters; default `push_entity`), filterable as `service_system_metadata.entity_type`.' })
  entityType?: string | null;
  @Field(() => [PushBreadcrumbInput], { nullable: true, description: 'Ancestors from the root down (at most 64), for hierarchy navigation and `breadcrumbs.*` filters.' })
  breadcrumbs?: PushBreadcrumbInput[] | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Any JSON fields of yours (nested at most 32 levels), returned as `rawSourceFields`.' })
  fields?: Record<string, unknown> | null;
  @Field(() => String, { nullable: true, description: 'Absolute http(s) link to the entity in its own application; other schemes (javascript:, data:) are refused.' }) webUrl?: string | null;
  @Field(() => Date, { nullable: true }) createdAt?: Date | null;
  @Field(() => Date, { nullable: true }) updatedAt?: Date | null;
}

@ObjectType('PushBatch', { description: 'One accepted request of pushed entities and deletions, synced by a job of its own.' })
export class PushBatchType {
  @Field(() => ID) id!: string;
  @Field(() => ID) sourceConnectionId!: string;
  @Field(() => Int, { description: 'Entities to insert or update.' }) entityCount!: number;
  @Field(() => Int, { description: 'Entity ids to delete (each once).' }) deletionCount!: number;
  @Field() createdAt!: Date;
  @Field(() => SyncJob, {
    nullable: true,
    description: 'The sync job of the batch; null while the batch waits for the previous batch of the connection to finish (batches sync one at a time, oldest first).',
  })
  job!: SyncJob | null;
}
