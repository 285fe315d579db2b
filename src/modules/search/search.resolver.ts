import { Arg, Ctx, Float, Int, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { checkAccess, Guard, principalOf } from '../../graphql/guard.js';
import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import type { AgentEvent } from './agentic/agent-events.js';
import {
  AgentEventUnion,
  AgenticSearchInput,
  ClassicSearchInput,
  ClassicSearchResponse,
  InstantSearchInput,
  LegacyResponseType,
  LegacySearchResponse,
  SearchResponse,
} from './search.types.js';

/** Every search draws once on the organization's search budget, whichever transport asked. */
const member = { role: 'member', family: 'search' } as const;
const asFilter = (filter: unknown) => filter as FilterGroup[] | null | undefined;

@Resolver()
export class SearchResolver {
  @Query(() => SearchResponse, { description: 'Instant search: the query embedded and matched directly (semantic, keyword or hybrid); one result per document, hybrid reranked when a rerank endpoint is configured.' })
  @UseMiddleware(Guard(member))
  async searchInstant(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string, @Arg('input', () => InstantSearchInput) input: InstantSearchInput): Promise<SearchResponse> {
    const results = await ctx.services.search.instant(principalOf(ctx), readableId, { ...input, filter: asFilter(input.filter) });
    return { results };
  }

  @Query(() => ClassicSearchResponse, {
    description: 'Classic search: a planner (language model when configured, else heuristic) writes a plan of queries and filters; each query runs; results are fused per document on their normalized scores (variations weigh less than the primary query), the first 40 rescored by the rarer question words in name, headings and passage (the fused first document stays within the first three), reranked when a rerank endpoint is configured, and paged over documents. A planner failure falls back to instant search.',
  })
  @UseMiddleware(Guard(member))
  async searchClassic(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string, @Arg('input', () => ClassicSearchInput) input: ClassicSearchInput): Promise<ClassicSearchResponse> {
    return (await ctx.services.search.classic(principalOf(ctx), readableId, { ...input, filter: asFilter(input.filter) })) as ClassicSearchResponse;
  }

  @Query(() => SearchResponse, { description: 'Agentic search, answered once the agent returns its results. Subscribe to `agenticSearch` for the live events.' })
  @UseMiddleware(Guard(member))
  async searchAgentic(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string, @Arg('input', () => AgenticSearchInput) input: AgenticSearchInput): Promise<SearchResponse> {
    const results = await ctx.services.search.agentic(principalOf(ctx), readableId, { ...input, filter: asFilter(input.filter) });
    return { results };
  }

  @Query(() => LegacySearchResponse, { deprecationReason: 'Use searchInstant, searchClassic or searchAgentic.', description: 'The deprecated search: hybrid results, optional recency bias, optional answer.' })
  @UseMiddleware(Guard(member))
  async searchLegacy(
    @Ctx() ctx: GraphQLContext,
    @Arg('readableId') readableId: string,
    @Arg('query') query: string,
    @Arg('responseType', () => LegacyResponseType, { nullable: true }) responseType: LegacyResponseType | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Arg('recencyBias', () => Float, { nullable: true, description: '0 = similarity only … 1 = recency only.' }) recencyBias: number | null,
  ): Promise<LegacySearchResponse> {
    return (await ctx.services.search.legacy(principalOf(ctx), readableId, { query, responseType, limit, offset, recencyBias })) as LegacySearchResponse;
  }

  @Subscription(() => AgentEventUnion, {
    description: 'Agentic search as a live stream: started, thinking and tool_call per iteration, reranking when the rerank endpoint reordered the results, then done (with the results) or error. Unsubscribing stops the agent.',
    subscribe: async ({ args, context }: { args: { readableId: string; input: AgenticSearchInput }; context: GraphQLContext }) => {
      const principal = await checkAccess(context, member);
      return context.services.search.agenticEvents(principal, args.readableId, { ...args.input, filter: asFilter(args.input.filter) });
    },
  })
  agenticSearch(
    @Root() event: AgentEvent,
    @Arg('readableId') _readableId: string,
    @Arg('input', () => AgenticSearchInput) _input: AgenticSearchInput,
  ): typeof AgentEventUnion {
    return event as unknown as typeof AgentEventUnion;
  }
}
