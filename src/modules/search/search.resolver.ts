import { Arg, Ctx, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard, principalOf } from '../../graphql/guard.js';
import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import { InstantSearchInput, SearchResponse } from './search.types.js';

@Resolver()
export class SearchResolver {
  @Query(() => SearchResponse, { description: 'Instant search: the query embedded and matched directly (semantic, keyword or hybrid).' })
  @UseMiddleware(Guard({ role: 'member' }))
  async searchInstant(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string, @Arg('input', () => InstantSearchInput) input: InstantSearchInput): Promise<SearchResponse> {
    const results = await ctx.services.search.instant(principalOf(ctx), readableId, { ...input, filter: input.filter as FilterGroup[] | null | undefined });
    return { results };
  }
}
