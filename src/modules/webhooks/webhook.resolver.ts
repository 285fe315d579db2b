import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context.js';
import { Guard, principalOf, type GuardRule } from '../../graphql/guard.js';
import { PAGE_LIMIT } from '../collections/collection.service.js';
import {
  WebhookMessage,
  WebhookRecoveryTask,
  WebhookSubscription,
  WebhookSubscriptionCreateInput,
  WebhookSubscriptionDetail,
  WebhookSubscriptionUpdateInput,
} from './webhook.types.js';

/** Reads accept an API key or a bearer token. */
const read: GuardRule = { family: 'webhooks', role: 'member' };
/** Changes need a user's bearer token with the admin or owner role (the spec). */
const write: GuardRule = { family: 'webhooks', role: 'admin', usersOnly: true };

@Resolver()
export class WebhookResolver {
  @Query(() => [WebhookSubscription], { description: 'Webhook subscriptions of the organization, newest first.' })
  @UseMiddleware(Guard(read))
  webhookSubscriptions(@Ctx() ctx: GraphQLContext) {
    return ctx.services.webhooks.listSubscriptions(principalOf(ctx));
  }

  @Query(() => WebhookSubscriptionDetail, { nullable: true })
  @UseMiddleware(Guard(read))
  webhookSubscription(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('includeSecret', { defaultValue: false, description: 'Add the signing secret: admin role or higher (FORBIDDEN for a member).' }) includeSecret: boolean) {
    return ctx.services.webhooks.getSubscription(principalOf(ctx), id, includeSecret);
  }

  @Mutation(() => WebhookSubscription)
  @UseMiddleware(Guard(write))
  createWebhookSubscription(@Ctx() ctx: GraphQLContext, @Arg('input', () => WebhookSubscriptionCreateInput) input: WebhookSubscriptionCreateInput) {
    return ctx.services.webhooks.createSubscription(principalOf(ctx), input);
  }

  @Mutation(() => WebhookSubscription, { description: 'Only the fields sent change.' })
  @UseMiddleware(Guard(write))
  updateWebhookSubscription(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('input', () => WebhookSubscriptionUpdateInput) input: WebhookSubscriptionUpdateInput) {
    return ctx.services.webhooks.updateSubscription(principalOf(ctx), id, input);
  }

  @Mutation(() => WebhookSubscription, { description: 'Deletes the subscription and cancels its pending deliveries; returns it as it was.' })
  @UseMiddleware(Guard(write))
  deleteWebhookSubscription(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string) {
    return ctx.services.webhooks.deleteSubscription(principalOf(ctx), id);
  }

  @Mutation(() => WebhookRecoveryTask, { description: 'Replays the failed or pending messages of [since, until] in chronological order; delivered ones are skipped.' })
  @UseMiddleware(Guard(write))
  recoverWebhookMessages(
    @Ctx() ctx: GraphQLContext,
    @Arg('subscriptionId', () => ID) subscriptionId: string,
    @Arg('since', { description: 'Inclusive start.' }) since: Date,
    @Arg('until', () => Date, { nullable: true, description: 'Inclusive end; defaults to now.' }) until: Date | null,
  ) {
    return ctx.services.webhooks.recover(principalOf(ctx), subscriptionId, { since, until });
  }

  @Query(() => WebhookRecoveryTask, { nullable: true, description: 'A recovery task and its progress.' })
  @UseMiddleware(Guard(read))
  webhookRecoveryTask(@Ctx() ctx: GraphQLContext, @Arg('subscriptionId', () => ID) subscriptionId: string, @Arg('id', () => ID) id: string) {
    return ctx.services.webhooks.recoveryTask(principalOf(ctx), subscriptionId, id);
  }

  @Query(() => [WebhookMessage], { description: 'Messages of the organization, newest first.' })
  @UseMiddleware(Guard(read))
  webhookMessages(
    @Ctx() ctx: GraphQLContext,
    @Arg('eventTypes', () => [String], { nullable: true }) eventTypes: string[] | null,
    @Arg('skip', () => Int, { defaultValue: 0 }) skip: number,
    @Arg('limit', () => Int, { defaultValue: PAGE_LIMIT.default, description: '1 to 1000.' }) limit: number,
  ) {
    return ctx.services.webhooks.listMessages(principalOf(ctx), { eventTypes, skip, limit });
  }

  @Query(() => WebhookMessage, { nullable: true })
  @UseMiddleware(Guard(read))
  webhookMessage(@Ctx() ctx: GraphQLContext, @Arg('id', () => ID) id: string, @Arg('includeAttempts', { defaultValue: false }) includeAttempts: boolean) {
    return ctx.services.webhooks.getMessage(principalOf(ctx), id, includeAttempts);
  }
}
