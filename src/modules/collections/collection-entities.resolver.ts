import { Arg, Ctx, Field, ID, Int, ObjectType, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard, principalOf, type GuardRule } from '../../graphql/guard.js';
import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import { FilterGroupInput } from '../search/search.types.js';
import { ENTITY_PAGE, type EntityListing } from './collection-entities.js';

const read: GuardRule = { family: 'collections', role: 'member' };

@ObjectType({ description: 'A breadcrumb of a listed entity.' })
class ListedBreadcrumb {
  @Field() entityId!: string;
  @Field() name!: string;
  @Field() entityType!: string;
}

@ObjectType({ description: 'An entity a collection holds, as its last sync wrote it.' })
class ListedEntity {
  @Field() entityId!: string;
  @Field() name!: string;
  @Field() entityType!: string;
  @Field(() => ID) sourceConnectionId!: string;
  @Field({ description: 'The short name of the source (local_folder, git…).' }) sourceName!: string;
  @Field(() => [ListedBreadcrumb]) breadcrumbs!: ListedBreadcrumb[];
  @Field(() => Date, { nullable: true, description: 'As the source said.' }) createdAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'As the source said.' }) updatedAt!: Date | null;
  @Field({ description: 'When a sync last wrote it.' }) syncedAt!: Date;
  @Field(() => Int) chunkCount!: number;
}

@ObjectType()
class ListedEntityTypeCount {
  @Field() entityType!: string;
  @Field(() => Int) count!: number;
}

@ObjectType()
class ListedEntitySourceCount {
  @Field(() => ID) sourceConnectionId!: string;
  @Field() sourceName!: string;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'A page of a collection\'s entities, with exact counts of all that match the filter.' })
class CollectionEntityListing implements EntityListing {
  @Field(() => Int, { description: 'Entities matching the filter, on every page.' }) total!: number;
  @Field(() => [ListedEntityTypeCount], { description: 'Matching entities by entity type, most first.' }) byType!: ListedEntityTypeCount[];
  @Field(() => [ListedEntitySourceCount], { description: 'Matching entities by source connection, most first.' }) bySource!: ListedEntitySourceCount[];
  @Field(() => [ListedEntity], { description: 'This page, ordered by entity id (then source connection).' }) items!: ListedEntity[];
}

@Resolver()
export class CollectionEntitiesResolver {
  @Query(() => CollectionEntityListing, { description: 'What a collection holds: its entities page by page under the search filter, counted by type and source.' })
  @UseMiddleware(Guard(read))
  collectionEntities(
    @Ctx() ctx: GraphQLContext,
    @Arg('readableId') readableId: string,
    @Arg('filter', () => [FilterGroupInput], { nullable: true, description: 'The search filter: groups ORed, conditions ANDed (chunk_index does not apply).' }) filter: FilterGroupInput[] | null,
    @Arg('limit', () => Int, { defaultValue: ENTITY_PAGE.default, description: `1 to ${ENTITY_PAGE.max}.` }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0 }) offset: number,
  ): Promise<EntityListing> {
    return ctx.services.collectionEntities.list(principalOf(ctx), readableId, { filter: filter as FilterGroup[] | null, limit, offset });
  }
}
