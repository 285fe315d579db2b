import { Ctx, Field, ID, ObjectType, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard, principalOf } from '../../graphql/guard.js';

@ObjectType({ description: 'The organization the caller belongs to; everything is scoped to it.' })
export class OrganizationType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() createdAt!: Date;
}

@ObjectType({ description: 'Who the credentials of this request identify.' })
export class Viewer {
  @Field(() => String, { description: 'api_key or user.' }) kind!: string;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field({ description: 'member, admin or owner (API keys act as admin).' }) role!: string;
  @Field(() => OrganizationType) organization!: OrganizationType;
}

@Resolver()
export class OrganizationResolver {
  @Query(() => Viewer)
  @UseMiddleware(Guard({ role: 'member' }))
  async viewer(@Ctx() ctx: GraphQLContext): Promise<Viewer> {
    const principal = principalOf(ctx);
    const organization = await ctx.services.organizations.getOrganization(principal.organizationId);
    return { kind: principal.kind, email: principal.email, role: principal.role, organization };
  }
}
