import { Arg, Ctx, FieldResolver, Int, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { principalOf } from '../../graphql/guard.js';
import { ValidationError } from '../../shared/errors.js';
import { SKIPPED_ITEMS_LISTED, skippedPage } from './skipped-items.js';
import { SkippedEntities, SyncJob } from './sync-job.types.js';

/** A job's skipped items, read only when asked for (the job was authorized by the query that returned it). */
@Resolver(() => SyncJob)
export class SyncJobSkippedResolver {
  @FieldResolver(() => SkippedEntities, { description: 'The items the source left out, counted by reason; the first 1,000 listed, paged.' })
  async skipped(
    @Ctx() ctx: GraphQLContext,
    @Root() job: SyncJob,
    @Arg('limit', () => Int, { defaultValue: 100 }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0 }) offset: number,
  ): Promise<SkippedEntities> {
    if (!Number.isInteger(limit) || limit < 1 || limit > SKIPPED_ITEMS_LISTED) throw new ValidationError([{ loc: ['limit'], msg: `must be between 1 and ${SKIPPED_ITEMS_LISTED}`, type: 'value_error' }]);
    if (!Number.isInteger(offset) || offset < 0) throw new ValidationError([{ loc: ['offset'], msg: 'must be 0 or more', type: 'value_error' }]);
    return skippedPage(await ctx.services.sync.skipped(principalOf(ctx), job.id), limit, offset);
  }
}
