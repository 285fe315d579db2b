import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'An endpoint that receives the organization\'s events of the types it lists, as signed POSTs.' })
export class WebhookSubscription {
  @Field(() => ID) id!: string;
  @Field() url!: string;
  @Field(() => [String], { description: 'Event types the endpoint receives (the `eventTypes` it subscribed with).' }) filterTypes!: string[];
  @Field({ description: 'True while delivery is paused.' }) disabled!: boolean;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field({ description: 'From the last 20 attempts: healthy (all succeeded), degraded (some failed), failing (the latest failed and at least half did), unknown (none yet).' })
  healthStatus!: string;
}

@ObjectType({ description: 'One HTTP attempt to deliver a message to a subscription.' })
export class WebhookDeliveryAttempt {
  @Field(() => ID) id!: string;
  @Field(() => ID) messageId!: string;
  @Field(() => ID, { description: 'The subscription.' }) endpointId!: string;
  @Field({ description: 'URL the attempt was sent to.' }) url!: string;
  @Field({ description: 'The start of the response body (2,048 characters at most), or what went wrong when no response came.' }) response!: string;
  @Field(() => Int, { nullable: true, description: 'Null when no HTTP response came (timeout, connection error, refused target).' }) responseStatusCode!: number | null;
  @Field({ description: 'success (a 2xx answer) or failed.' }) status!: string;
  @Field() timestamp!: Date;
  @Field(() => Int) durationMs!: number;
  @Field(() => Int, { description: '1 for the first attempt of a run of the retry schedule.' }) attemptNumber!: number;
}

@ObjectType({ description: 'A subscription with its secret (when asked for) and its recent delivery attempts.' })
export class WebhookSubscriptionDetail extends WebhookSubscription {
  @Field(() => String, { nullable: true, description: 'The signing secret (`whsec_` + base64); null unless includeSecret.' }) secret!: string | null;
  @Field(() => [WebhookDeliveryAttempt], { description: 'The 50 most recent attempts, newest first.' }) deliveryAttempts!: WebhookDeliveryAttempt[];
}

@ObjectType({ description: 'One event as sent to subscribers.' })
export class WebhookMessage {
  @Field(() => ID, { description: 'Also the `event_id` of the payload and the `webhook-id` header of every delivery.' }) id!: string;
  @Field() eventType!: string;
  @Field(() => GraphQLJSONObject, {
    description:
      'The JSON body receivers get: `event_type`, `event_id`, `organization_id`, `timestamp` and the fields of the event family (sync events the `sync.completed` fields of the spec, plus `error` on `sync.failed`; see WebhookEvent in the OpenAPI document).',
  })
  payload!: Record<string, unknown>;
  @Field() timestamp!: Date;
  @Field(() => [String], { description: 'Delivery channels: the event type.' }) channels!: string[];
  @Field(() => [WebhookDeliveryAttempt], { nullable: true, description: 'Every attempt for this message, oldest first; null unless includeAttempts.' })
  deliveryAttempts!: WebhookDeliveryAttempt[] | null;
}

@ObjectType({ description: 'A replay of a subscription\'s failed or pending messages of a time window.' })
export class WebhookRecoveryTask {
  @Field(() => ID) id!: string;
  @Field(() => ID) subscriptionId!: string;
  @Field({ description: 'running while messages it queued are still pending, then completed.' }) status!: string;
  @Field() since!: Date;
  @Field() until!: Date;
  @Field() createdAt!: Date;
  @Field(() => Int, { description: 'Messages the task queued again.' }) messageCount!: number;
  @Field(() => Int) delivered!: number;
  @Field(() => Int, { description: 'Messages whose retry schedule ran out again.' }) failed!: number;
  @Field(() => Int) pending!: number;
}

@InputType()
export class WebhookSubscriptionCreateInput {
  @Field({ description: 'HTTPS URL of the endpoint (plain http only in development mode, for loopback receivers).' }) url!: string;
  @Field(() => [String], { description: 'Event types to receive.' }) eventTypes!: string[];
  @Field(() => String, {
    nullable: true,
    description: 'At least 24 characters; generated when omitted. `whsec_` + base64 or bare base64 is used as such; other text becomes the key as its UTF-8 bytes (stored and returned as `whsec_` + their base64).',
  })
  secret?: string | null;
}

@InputType()
export class WebhookSubscriptionUpdateInput {
  @Field(() => String, { nullable: true }) url?: string | null;
  @Field(() => [String], { nullable: true }) eventTypes?: string[] | null;
  @Field(() => Boolean, { nullable: true, description: 'True pauses delivery; false resumes it.' }) disabled?: boolean | null;
  @Field(() => Date, { nullable: true, description: 'With disabled false: also retry the messages that failed from this time on.' }) recoverSince?: Date | null;
}
