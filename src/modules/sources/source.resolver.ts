import { Arg, Ctx, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard } from '../../graphql/guard.js';
import { Source } from './source.types.js';

const read = { family: 'sources', role: 'member' } as const;

@Resolver(() => Source)
export class SourceResolver {
  @Query(() => [Source], { description: 'Every source type the service offers.' })
  @UseMiddleware(Guard(read))
  sources(@Ctx() ctx: GraphQLContext): Promise<Source[]> {
    return ctx.services.sources.list();
  }

  @Query(() => Source, { nullable: true, description: 'A source type by short name; null when unknown.' })
  @UseMiddleware(Guard(read))
  async source(@Ctx() ctx: GraphQLContext, @Arg('shortName') shortName: string): Promise<Source | null> {
    return (await ctx.services.sources.list()).find((source) => source.shortName === shortName) ?? null;
  }
}
