import { Arg, Ctx, ID, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard, principalOf, type GuardRule } from '../../graphql/guard.js';
import { PushBatchType, PushEntityInput } from './push-batch.types.js';

const read: GuardRule = { family: 'source_connections', role: 'member' };
const write: GuardRule = { family: 'source_connections', role: 'member' };

@Resolver(() => PushBatchType)
export class PushBatchResolver {
  @Mutation(() => PushBatchType, {
    description:
      'Sends entities to a push connection: upserts `entities` and deletes the ids in `deletions`, as one sync job with exact inserted, updated and deleted counts (and the sync.* events of any job). ' +
      'At most 1,000 entities and 1,000 deletions per request, each id once; the request body is also bounded by the service\'s body limit. ' +
      'BAD_USER_INPUT lists every bad entity at its place (e.g. ["entities", 3, "text"]); NOT_FOUND for a connection of another organization; CONFLICT for a connection of another source.',
  })
  @UseMiddleware(Guard(write))
  pushEntities(
    @Ctx() ctx: GraphQLContext,
    @Arg('sourceConnectionId', () => ID) sourceConnectionId: string,
    @Arg('entities', () => [PushEntityInput], { nullable: true, description: 'Entities to insert or update.' }) entities: PushEntityInput[] | null,
    @Arg('deletions', () => [String], { nullable: true, description: 'Ids of entities to delete (unknown ids are ignored).' }) deletions: string[] | null,
  ) {
    return ctx.services.push.push(principalOf(ctx), sourceConnectionId, { entities, deletions });
  }

  @Query(() => PushBatchType, { nullable: true, description: 'A pushed batch with its sync job.' })
  @UseMiddleware(Guard(read))
  pushBatch(@Ctx() ctx: GraphQLContext, @Arg('sourceConnectionId', () => ID) sourceConnectionId: string, @Arg('id', () => ID) id: string) {
    return ctx.services.push.batch(principalOf(ctx), sourceConnectionId, id);
  }
}
