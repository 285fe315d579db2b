import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { SyncConfig, SyncConfigInput } from '../collections/collection.types.js';
import { SyncJob } from '../sync/sync-job.types.js';

@ObjectType()
export class ConnectionAuth {
  @Field({ description: 'direct, oauth_browser, oauth_token, oauth_byoc or auth_provider.' }) method!: string;
  @Field() authenticated!: boolean;
  @Field(() => Date, { nullable: true }) authenticatedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'When the OAuth access token expires, when the provider said.' }) expiresAt!: Date | null;
  @Field(() => String, {
    nullable: true,
    description: "The provider's sign-in URL to send the user to (browser sign-in): only in the answer of createSourceConnection and authorizeSourceConnection, since its state is kept hashed.",
  })
  authUrl!: string | null;
  @Field(() => Date, { nullable: true, description: 'Until when the sign-in under way can complete (10 minutes after it started).' }) authUrlExpires!: Date | null;
  @Field(() => String, { nullable: true, description: 'Where the browser is sent with the outcome of the sign-in under way.' }) redirectUrl!: string | null;
  @Field(() => String, { nullable: true, description: 'The auth provider of an auth_provider connection.' }) providerReadableId!: string | null;
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

@InputType({
  description:
    "The method is inferred from the fields present: credentials → direct; accessToken (refreshToken, expiresAt, optionally the clientId/clientSecret that refresh it) → oauth_token; clientId/clientSecret → oauth_byoc; redirectUri or an empty object → oauth_browser (the operator's OAuth app; BAD_USER_INPUT `byoc_required` when none is registered); providerReadableId → auth_provider. Without it: direct where the source takes it, else oauth_browser.",
})
export class AuthenticationInput {
  @Field(() => GraphQLJSONObject, { nullable: true }) credentials?: Record<string, unknown> | null;
  @Field(() => String, { nullable: true }) accessToken?: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "oauth_token: renewed with clientId/clientSecret when given, else with the operator's app when it serves the connection's token endpoint, else never (once the access token expires or is refused, the connection is needs_reauth: sign it in again with authorizeSourceConnection).",
  })
  refreshToken?: string | null;
  @Field(() => Date, { nullable: true }) expiresAt?: Date | null;
  @Field(() => String, {
    nullable: true,
    description: "The redirect_uri given to the provider, for a page of yours that forwards the provider's answer (code and state) to the service's /oauth/callback. Default: <CATCHMENT_PUBLIC_URL>/oauth/callback.",
  })
  redirectUri?: string | null;
  @Field(() => String, { nullable: true, description: 'Your own OAuth app (oauth_byoc); sealed with the connection, never returned.' }) clientId?: string | null;
  @Field(() => String, { nullable: true, description: 'Secret of your own OAuth app (may be left out for PKCE public clients); sealed, never returned.' }) clientSecret?: string | null;
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
  @Field(() => Boolean, { nullable: true, description: 'Default true: start a sync once created, or for a browser sign-in once signed in.' }) syncImmediately?: boolean | null;
  @Field(() => String, {
    nullable: true,
    description: 'Browser sign-in: where the browser is sent afterwards, with status=success&source_connection_id=… or status=error&error=…&error_description=… in its query. Default: a page of the service.',
  })
  redirectUrl?: string | null;
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

@InputType({ description: 'A new browser sign-in for an OAuth connection (oauth_browser, oauth_byoc or oauth_token).' })
export class SourceConnectionAuthorizeInput {
  @Field(() => String, { nullable: true, description: 'Where the browser is sent afterwards (see SourceConnectionCreateInput.redirectUrl).' }) redirectUrl?: string | null;
  @Field(() => String, { nullable: true, description: 'See AuthenticationInput.redirectUri.' }) redirectUri?: string | null;
  @Field(() => String, { nullable: true, description: 'Another OAuth app of yours (the connection becomes oauth_byoc once signed in). Default: the client the connection has.' }) clientId?: string | null;
  @Field(() => String, { nullable: true }) clientSecret?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'Default true: start a sync once signed in.' }) syncImmediately?: boolean | null;
}
