import { Arg, Ctx, Int, Mutation, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { checkAccess, Guard, principalOf, type GuardRule } from '../../graphql/guard.js';
import type { DomainEvent } from '../../platform/events/event-bus.js';
import { COLLECTION_EVENT_TYPES, PAGE_LIMIT, type CollectionView } from './collection.service.js';
import { Collection, CollectionCreateInput, CollectionEvent, CollectionUpdateInput } from './collection.types.js';

const read: GuardRule = { family: 'collections', role: 'member' };
const write: GuardRule = { family: 'collections', role: 'member' };
/** Deleting is permanent and removes every synced item: admins and owners only. */
const remove: GuardRule = { family: 'collections', role: 'admin' };

@Resolver(() => Collection)
export class CollectionResolver {
  @Query(() => [Collection], { description: 'Collections of the organization, newest first.' })
  @UseMiddleware(Guard(read))
  collections(
    @Ctx() ctx: GraphQLContext,
    @Arg('skip', () => Int, { defaultValue: 0 }) skip: number,
    @Arg('limit', () => Int, { defaultValue: PAGE_LIMIT.default, description: '1 to 1000.' }) limit: number,
    @Arg('search', () => String, { nullable: true, description: 'Matches name or readableId, case-insensitively.' }) search: string | null,
  ) {
    return ctx.services.collections.list(principalOf(ctx), { skip, limit, search });
  }

  @Query(() => Collection, { nullable: true, description: 'A collection by readable id; null when the organization has none by that id.' })
  @UseMiddleware(Guard(read))
  collection(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string) {
    return ctx.services.collections.get(principalOf(ctx), readableId);
  }

  @Mutation(() => Collection)
  @UseMiddleware(Guard(write))
  createCollection(@Ctx() ctx: GraphQLContext, @Arg('input', () => CollectionCreateInput) input: CollectionCreateInput) {
    return ctx.services.collections.create(principalOf(ctx), input);
  }

  @Mutation(() => Collection)
  @UseMiddleware(Guard(write))
  updateCollection(
    @Ctx() ctx: GraphQLContext,
    @Arg('readableId') readableId: string,
    @Arg('input', () => CollectionUpdateInput) input: CollectionUpdateInput,
  ) {
    return ctx.services.collections.update(principalOf(ctx), readableId, input);
  }

  @Mutation(() => Collection, { description: 'Deletes the collection permanently with all its data; returns it as it was.' })
  @UseMiddleware(Guard(remove))
  deleteCollection(@Ctx() ctx: GraphQLContext, @Arg('readableId') readableId: string) {
    return ctx.services.collections.delete(principalOf(ctx), readableId);
  }

  @Subscription(() => CollectionEvent, {
    description: 'Creations, updates and deletions of the organization\'s collections, as they happen.',
    subscribe: async ({ context }: { context: GraphQLContext }) => {
      const principal = await checkAccess(context, read);
      return context.services.events.subscribe(principal.organizationId, COLLECTION_EVENT_TYPES);
    },
  })
  collectionEvents(@Root() event: DomainEvent<CollectionView>): CollectionEvent {
    return { type: event.type as CollectionEvent['type'], occurredAt: new Date(event.occurredAt), collection: revive(event.subject) };
  }
}

/** Events cross Redis as JSON: dates come back as strings. */
function revive(collection: CollectionView): Collection {
  return { ...collection, createdAt: new Date(collection.createdAt), modifiedAt: new Date(collection.modifiedAt) } as Collection;
}
