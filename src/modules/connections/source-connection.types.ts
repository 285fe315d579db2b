import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { SyncConfig, SyncConfigInput } from '../collections/collection.types.js';
import { SyncJob } from '../sync/sync-job.types.js';

@ObjectType()
export class ConnectionAuth {
  @Field({ description: 'direct, oauth_browser, oauth_token, oauth_byoc or auth_provider.' }) method!: string;
  @Field() authenticated!: boolean;
  @Field(() => Date, { nullable: true }) authenticatedAt!: Date | null;
  @Field(() => Date, { nullable: true }) expiresAt!: Date | null;
}

@ObjectType()
export class ConnectionSchedule {
  @Field(() => String, { nullable: true, description: 'Cron expression (UTC).' }) cron!: string | null;
  @Field(() => Date, { nullable: true }) nextRun!: Date | null;
  @Field({ description: 'The source syncs incrementally with a cursor.' }) continuous!: boolean;
  @Field(() => String, { nullable: true, description: 'Where the last incremental sync stopped (JSON; a large cursor as its size and digest).' }) cursorValue!: string | null;
}

@ObjectType()
export class ConnectionSyncSummary {
  @Field(() => Int) totalRuns!: number;
  @Field(() => Int) successfulRuns!: number;
  @Field(() => Int) failedRuns!: number;
  @Field(() => SyncJob, { nullable: true }) lastJob!: SyncJob | null;
}

@ObjectType()
export class EntityTypeCount {
  @Field() entityType!: string;
  @Field(() => Int) count!: number;
  @Field(() => Date, { nullable: true }) lastUpdated!: Date | null;
}

@ObjectType()
export class ConnectionEntities {
  @Field(() => Int) totalEntities!: number;
  @Field(() => [EntityTypeCount]) byType!: EntityTypeCount[];
}

@ObjectType({ description: 'A collection\'s link to one source type.' })
export class SourceConnection {
  @Field(() => ID) id!: string;
  @Field(() => ID) organizationId!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field({ description: 'Source type.' }) shortName!: string;
  @Field() readableCollectionId!: string;
  @Field({ description: 'active, pending_auth, syncing, error, needs_reauth, inactive or pending_sync.' }) status!: string;
  @Field() createdAt!: Date;
  @Field() modifiedAt!: Date;
  @Field() isAuthenticated!: boolean;
  @Field() authMethod!: string;
  @Field(() => ConnectionAuth) auth!: ConnectionAuth;
  @Field(() => GraphQLJSONObject, { description: 'Source-specific configuration.' }) config!: Record<string, unknown>;
  @Field(() => ConnectionSchedule) schedule!: ConnectionSchedule;
  @Field(() => ConnectionSyncSummary) sync!: ConnectionSyncSummary;
  @Field(() => ID) syncId!: string;
  @Field(() => SyncConfig, { nullable: true }) syncConfig!: SyncConfig | null;
  @Field(() => ConnectionEntities) entities!: ConnectionEntities;
  @Field(() => Int) entityCount!: number;
  @Field(() => String, { nullable: true }) errorMessage!: string | null;
  @Field() federatedSearch!: boolean;
}

@InputType()
export class ScheduleInput {
  @Field(() => String, { nullable: true, description: 'Cron expression (UTC); null or empty removes the schedule. Runs must be at least CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS apart (60 by default).' }) cron?: string | null;
}

@InputType({ description: 'The method is inferred from the fields present: credentials → direct; accessToken → oauth_token; clientId/clientSecret → oauth_byoc; redirectUri → oauth_browser; providerReadableId → auth_provider.' })
export class AuthenticationInput {
  @Field(() => GraphQLJSONObject, { nullable: true }) credentials?: Record<string, unknown> | null;
  @Field(() => String, { nullable: true }) accessToken?: string | null;
  @Field(() => String, { nullable: true }) refreshToken?: string | null;
  @Field(() => Date, { nullable: true }) expiresAt?: Date | null;
  @Field(() => String, { nullable: true }) redirectUri?: string | null;
  @Field(() => String, { nullable: true }) clientId?: string | null;
  @Field(() => String, { nullable: true }) clientSecret?: string | null;
  @Field(() => String, { nullable: true }) providerReadableId?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) providerConfig?: Record<string, unknown> | null;
}

@InputType()
export class SourceConnectionCreateInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field() shortName!: string;
  @Field() readableCollectionId!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) config?: Record<string, unknown> | null;
  @Field(() => ScheduleInput, { nullable: true }) schedule?: ScheduleInput | null;
  @Field(() => Boolean, { nullable: true, description: 'Default true: start a sync once created.' }) syncImmediately?: boolean | null;
  @Field(() => AuthenticationInput, { nullable: true }) authentication?: AuthenticationInput | null;
  @Field(() => SyncConfigInput, { nullable: true }) syncConfig?: SyncConfigInput | null;
}

@InputType()
export class CredentialsInput {
  @Field(() => GraphQLJSONObject, { nullable: true }) credentials?: Record<string, unknown> | null;
}

@InputType({ description: 'Only the fields sent change.' })
export class SourceConnectionUpdateInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) config?: Record<string, unknown> | null;
  @Field(() => ScheduleInput, { nullable: true }) schedule?: ScheduleInput | null;
  @Field(() => CredentialsInput, { nullable: true, description: 'Direct authentication only.' }) authentication?: CredentialsInput | null;
  @Field(() => SyncConfigInput, { nullable: true }) syncConfig?: SyncConfigInput | null;
}
