import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum CollectionStatusValue {
  ACTIVE = 'ACTIVE',
  NEEDS_SOURCE = 'NEEDS SOURCE',
  ERROR = 'ERROR',
}
registerEnumType(CollectionStatusValue, {
  name: 'CollectionStatus',
  description: 'Derived from the connections: ACTIVE when one has completed a sync or is syncing; ERROR when all failed their last sync; otherwise NEEDS_SOURCE (REST writes it "NEEDS SOURCE").',
});

export enum CollectionEventType {
  CREATED = 'collection.created',
  UPDATED = 'collection.updated',
  DELETED = 'collection.deleted',
}
registerEnumType(CollectionEventType, { name: 'CollectionEventType' });

@ObjectType({ description: 'Destinations a sync writes to.' })
export class DestinationsConfig {
  @Field({ description: 'Skip writing to the native vector database.' }) skipVectorDb!: boolean;
  @Field(() => [ID], { nullable: true, description: 'When set, write ONLY to these destinations.' }) targetDestinations!: string[] | null;
  @Field(() => [ID], { nullable: true, description: 'Skip these destinations.' }) excludeDestinations!: string[] | null;
}

@ObjectType({ description: 'Handlers a sync runs for each entity.' })
export class HandlersConfig {
  @Field({ description: 'Enable the vector database handler.' }) enableVectorHandlers!: boolean;
  @Field({ description: 'Enable the raw data storage handler.' }) enableRawDataHandler!: boolean;
  @Field({ description: 'Enable the entity relational-store handler.' }) enableEntityDbHandler!: boolean;
}

@ObjectType({ description: 'How a sync uses the incremental cursor.' })
export class CursorConfig {
  @Field({ description: 'Do not load the cursor, so all entities are fetched.' }) skipLoad!: boolean;
  @Field({ description: 'Do not persist cursor progress.' }) skipUpdates!: boolean;
}

@ObjectType({ description: 'Pipeline behaviour switches.' })
export class BehaviorConfig {
  @Field({ description: 'Force insert for all entities.' }) skipHashComparison!: boolean;
  @Field({ description: 'Replay from raw data storage instead of calling the source.' }) replayFromArf!: boolean;
  @Field({ description: 'Skip usage guardrails (entity count checks).' }) skipGuardrails!: boolean;
}

@ObjectType({ description: 'Sync configuration; collection-level defaults are overridden by the connection, then by the job.' })
export class SyncConfig {
  @Field(() => DestinationsConfig, { nullable: true }) destinations!: DestinationsConfig | null;
  @Field(() => HandlersConfig, { nullable: true }) handlers!: HandlersConfig | null;
  @Field(() => CursorConfig, { nullable: true }) cursor!: CursorConfig | null;
  @Field(() => BehaviorConfig, { nullable: true }) behavior!: BehaviorConfig | null;
}

@InputType()
export class DestinationsConfigInput {
  @Field({ nullable: true }) skipVectorDb?: boolean;
  @Field(() => [ID], { nullable: true }) targetDestinations?: string[] | null;
  @Field(() => [ID], { nullable: true }) excludeDestinations?: string[] | null;
}

@InputType()
export class HandlersConfigInput {
  @Field({ nullable: true }) enableVectorHandlers?: boolean;
  @Field({ nullable: true }) enableRawDataHandler?: boolean;
  @Field({ nullable: true }) enableEntityDbHandler?: boolean;
}

@InputType()
export class CursorConfigInput {
  @Field({ nullable: true }) skipLoad?: boolean;
  @Field({ nullable: true }) skipUpdates?: boolean;
}

@InputType()
export class BehaviorConfigInput {
  @Field({ nullable: true }) skipHashComparison?: boolean;
  @Field({ nullable: true }) replayFromArf?: boolean;
  @Field({ nullable: true }) skipGuardrails?: boolean;
}

@InputType({ description: 'Members left out are null; flags left out of a member take their defaults.' })
export class SyncConfigInput {
  @Field(() => DestinationsConfigInput, { nullable: true }) destinations?: DestinationsConfigInput | null;
  @Field(() => HandlersConfigInput, { nullable: true }) handlers?: HandlersConfigInput | null;
  @Field(() => CursorConfigInput, { nullable: true }) cursor?: CursorConfigInput | null;
  @Field(() => BehaviorConfigInput, { nullable: true }) behavior?: BehaviorConfigInput | null;
}

@ObjectType()
export class SourceConnectionSummary {
  @Field() shortName!: string;
  @Field() name!: string;
}

@ObjectType({ description: 'A collection groups data from its source connections; search runs across all of it.' })
export class Collection {
  @Field(() => ID) id!: string;
  @Field({ description: 'Display name, 4 to 64 characters.' }) name!: string;
  @Field({ description: 'URL-safe identifier used in paths, unique in the organization, immutable.' }) readableId!: string;
  @Field(() => SyncConfig, { nullable: true }) syncConfig!: SyncConfig | null;
  @Field() createdAt!: Date;
  @Field() modifiedAt!: Date;
  @Field(() => ID) organizationId!: string;
  @Field(() => String, { nullable: true }) createdByEmail!: string | null;
  @Field(() => String, { nullable: true }) modifiedByEmail!: string | null;
  @Field(() => CollectionStatusValue) status!: CollectionStatusValue;
  @Field(() => Int, { description: 'Vector dimensions of the embedding model the collection was created with.' }) vectorSize!: number;
  @Field() embeddingModelName!: string;
  @Field(() => [SourceConnectionSummary]) sourceConnectionSummaries!: SourceConnectionSummary[];
}

@InputType({ description: 'A new collection. readableId is generated from the name (plus a random suffix) when omitted.' })
export class CollectionCreateInput {
  @Field({ description: '4 to 64 characters.' }) name!: string;
  @Field(() => String, { nullable: true, description: 'Pattern ^[a-z0-9]+(-[a-z0-9]+)*$, unique in the organization.' }) readableId?: string | null;
  @Field(() => SyncConfigInput, { nullable: true }) syncConfig?: SyncConfigInput | null;
}

@InputType({ description: 'Only the fields sent change. syncConfig: null clears it; readableId cannot change.' })
export class CollectionUpdateInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => SyncConfigInput, { nullable: true }) syncConfig?: SyncConfigInput | null;
}

@ObjectType({ description: 'A change to a collection of the organization.' })
export class CollectionEvent {
  @Field(() => CollectionEventType) type!: CollectionEventType;
  @Field(() => Collection, { description: 'The collection after the change (before it, for a deletion).' }) collection!: Collection;
  @Field() occurredAt!: Date;
}
