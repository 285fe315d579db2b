import { Arg, Ctx, Mutation, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard, principalOf } from '../../graphql/guard.js';
import { CollectionReembedding } from './reembed.types.js';

@Resolver()
export class ReembedResolver {
  @Mutation(() => CollectionReembedding, {
    description:
      'Re-embeds a collection with the active embedding model: the way out of the CONFLICT a collection made by another model gets, without re-creating it. Empties its index and syncs every connection again (push connections from their raw data). CONFLICT while a sync of the collection is in progress. Admins and owners.',
  })
  @UseMiddleware(Guard({ family: 'collections', role: 'admin' }))
  reembedCollection(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string) {
    return ctx.services.reembed.reembed(principalOf(ctx), readableId);
  }
}
