import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { checkAccess, Guard, principalOf, type GuardRule } from '../../graphql/guard.js';
import { PAGE_LIMIT } from '../collections/collection.service.js';
import { SyncConfigInput } from '../collections/collection.types.js';
import { SyncJob } from '../sync/sync-job.types.js';
import type { SyncJobView } from '../sync/sync-job.view.js';
import { FINISHED_JOB_STATUSES } from '../sync/sync-job.entity.js';
import { jobProgressTopic } from '../sync/sync.service.js';
import { NotFoundError } from '../../shared/errors.js';
import { SourceConnection, SourceConnectionAuthorizeInput, SourceConnectionCreateInput, SourceConnectionUpdateInput } from './source-connection.types.js';

const read: GuardRule = { family: 'source_connections', role: 'member' };
const write: GuardRule = { family: 'source_connections', role: 'member' };
const remove: GuardRule = { family: 'source_connections', role: 'admin' };

@Resolver(() => SourceConnection)
export class SourceConnectionResolver {
  @Query(() => [SourceConnection], { description: 'Source connections of the organization, newest first.' })
  @UseMiddleware(Guard(read))
  sourceConnections(
    @Ctx() ctx: GraphQLContext,
    @Arg('collection', () => String, { nullable: true, description: 'Readable id of a collection.' }) collection: string | null,
    @Arg('skip', () => Int, { defaultValue: 0 }) skip: number,
    @Arg('limit', () => Int, { defaultValue: PAGE_LIMIT.default }) limit: number,
  ) {
    return ctx.services.connections.list(principalOf(ctx), { collection, skip, limit });
  }

  @Query(() => SourceConnection, { nullable: true })
  @UseMiddleware(Guard(read))
  sourceConnection(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string) {
    return ctx.services.connections.get(principalOf(ctx), id);
  }

  @Mutation(() => SourceConnection, {
    description:
      'Direct and oauth_token connections are checked with the source and exist authenticated at once. A browser sign-in (oauth_browser, oauth_byoc) returns the connection pending_auth with auth.authUrl: send the user there; the provider returns them to /oauth/callback, which authenticates the connection, fires source_connection.auth_completed, starts the first sync (unless syncImmediately is false) and sends the browser to redirectUrl.',
  })
  @UseMiddleware(Guard(write))
  createSourceConnection(@Ctx() ctx: GraphQLContext, @Arg('input', () => SourceConnectionCreateInput) input: SourceConnectionCreateInput) {
    return ctx.services.connections.create(principalOf(ctx), input);
  }

  @Mutation(() => SourceConnection, {
    description:
      'Only the fields sent change. Changing config or credentials needs the admin role or higher (FORBIDDEN otherwise); a config that would send the stored credentials to another target (another origin or database server) needs the credentials again in the same input (BAD_USER_INPUT otherwise). Both are checked before the source is contacted.',
  })
  @UseMiddleware(Guard(write))
  updateSourceConnection(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('input', () => SourceConnectionUpdateInput) input: SourceConnectionUpdateInput) {
    return ctx.services.connections.update(principalOf(ctx), id, input);
  }

  @Mutation(() => SourceConnection, {
    description:
      "A fresh browser sign-in for an OAuth connection (oauth_browser, oauth_byoc, oauth_token) that never finished or needs re-authentication: the answer's auth.authUrl (valid 10 minutes) replaces any earlier one. The client given, else the connection's own, else the operator's app when it serves the connection's token endpoint (a 422 byoc_required without any); once signed in the connection is oauth_byoc or oauth_browser. Needs the admin role or higher (FORBIDDEN otherwise).",
  })
  @UseMiddleware(Guard(write))
  authorizeSourceConnection(
    @Ctx() ctx: GraphQLContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => SourceConnectionAuthorizeInput, { nullable: true }) input: SourceConnectionAuthorizeInput | null,
  ) {
    return ctx.services.connections.authorize(principalOf(ctx), id, input ?? {});
  }

  @Mutation(() => SourceConnection, { description: 'Cancels a running sync (waiting up to 15 s), deletes the connection and its data; returns it as it was.' })
  @UseMiddleware(Guard(remove))
  deleteSourceConnection(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string) {
    return ctx.services.connections.delete(principalOf(ctx), id);
  }

  @Query(() => [SyncJob], { description: 'Sync jobs of a connection, newest first.' })
  @UseMiddleware(Guard(read))
  syncJobs(@Ctx() ctx: GraphQLContext, @Arg('sourceConnectionId', () => ID) id: string, @Arg('limit', () => Int, { defaultValue: PAGE_LIMIT.default }) limit: number) {
    return ctx.services.sync.jobs(principalOf(ctx), id, limit);
  }

  @Query(() => SyncJob, { nullable: true })
  @UseMiddleware(Guard(read))
  syncJob(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string) {
    return ctx.services.sync.job(principalOf(ctx), id);
  }

  @Mutation(() => SyncJob, { description: 'Starts a sync now. Fails with CONFLICT while one is running.' })
  @UseMiddleware(Guard(write))
  runSync(
    @Ctx() ctx: GraphQLContext,
    @Arg('sourceConnectionId', () => ID) id: string,
    @Arg('forceFullSync', { defaultValue: false, description: 'Ignore the cursor of a continuous source.' }) forceFullSync: boolean,
    @Arg('syncConfig', () => SyncConfigInput, { nullable: true, description: 'Job-level layer of the sync configuration.' }) syncConfig: SyncConfigInput | null,
  ) {
    return ctx.services.sync.run(principalOf(ctx), id, { forceFullSync, syncConfig });
  }

  @Mutation(() => SyncJob, { description: 'PENDING or RUNNING → CANCELLING; CONFLICT for other statuses.' })
  @UseMiddleware(Guard(write))
  cancelSync(@Ctx() ctx: GraphQLContext, @Arg('sourceConnectionId', () => ID) id: string, @Arg('jobId', () => ID) jobId: string) {
    return ctx.services.sync.cancel(principalOf(ctx), id, jobId);
  }

  @Subscription(() => SyncJob, {
    description: 'The job\'s record each time its progress or status changes, until it finishes.',
    subscribe: async ({ context, args }: { context: GraphQLContext; args: { jobId: string } }) => {
      const principal = await checkAccess(context, read);
      const job = await context.services.sync.job(principal, args.jobId);
      if (!job) throw NotFoundError.of('Sync job', args.jobId);
      // Subscribed before the status is read again, so a job finishing in between is not missed.
      const updates = context.services.pubsub.subscribe<SyncJobView>(jobProgressTopic(job.id));
      const current = await context.services.sync.job(principal, args.jobId);
      return untilFinished(current ?? job, updates);
    },
  })
  syncJobProgress(@Root() job: SyncJobView, @Arg('jobId', () => ID) _jobId: string): SyncJob {
    return revive(job);
  }
}

/**
 * The job's updates until it finishes: the stream (and its HTTP response) then completes instead of
 * staying open. A job already finished when subscribed to is sent once.
 */
async function* untilFinished(current: SyncJobView, updates: AsyncIterableIterator<SyncJobView>): AsyncGenerator<SyncJobView> {
  try {
    if (FINISHED_JOB_STATUSES.includes(current.status)) {
      yield current;
      return;
    }
    for await (const job of updates) {
      yield job;
      if (FINISHED_JOB_STATUSES.includes(job.status)) return;
    }
  } finally {
    await updates.return?.();
  }
}

/** Progress crosses Redis as JSON: dates come back as strings. */
function revive(job: SyncJobView): SyncJob {
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  return { ...job, createdAt: date(job.createdAt)!, startedAt: date(job.startedAt), completedAt: date(job.completedAt) };
}
