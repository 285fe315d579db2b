import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { EventType } from '../../platform/events/event-bus.js';
import { uuidv7 } from '../../shared/ids.js';
import { Organization } from '../organizations/organization.entity.js';

/** An endpoint that receives the organization's events of the types it lists. */
@Entity({ tableName: 'webhook_subscriptions' })
@Index({ name: 'webhook_subscriptions_organization_created_idx', properties: ['organization', 'createdAt'] })
export class WebhookSubscription {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'disabled';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Property({ type: 'text' })
  url!: string;

  @Property({ type: 'json' })
  filterTypes!: EventType[];

  @Property({ type: 'boolean' })
  disabled = false;

  /** The `whsec_…` signing secret, sealed by the SecretBox: never stored or logged in clear. */
  @Property({ type: 'text' })
  sealedSecret!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime' })
  updatedAt: Date = new Date();
}

/**
 * One event as sent to receivers, and the transactional outbox: the row is inserted in the same
 * transaction as the state change it reports, and `dispatchedAt` stays null until the dispatcher
 * has created a delivery for every matching subscription.
 */
@Entity({ tableName: 'webhook_messages' })
@Index({ name: 'webhook_messages_organization_created_idx', properties: ['organization', 'createdAt'] })
@Index({ name: 'webhook_messages_undispatched_idx', expression: `create index "webhook_messages_undispatched_idx" on "webhook_messages" ("created_at") where "dispatched_at" is null` })
export class WebhookMessage {
  [OptionalProps]?: 'dispatchedAt';

  /** The event id (`event_id` in the payload, `webhook-id` on deliveries). */
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Property({ type: 'string', length: 64 })
  eventType!: EventType;

  @Property({ type: 'json' })
  payload!: Record<string, unknown>;

  @Property({ type: 'datetime' })
  createdAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  dispatchedAt: Date | null = null;
}

/**
 * pending: waiting for its next attempt; sending: claimed by a worker; success; failed (the retry
 * schedule ran out).
 */
export type DeliveryStatus = 'pending' | 'sending' | 'success' | 'failed';

/**
 * A message on its way to one subscription. The database is the queue: a pending delivery is due at
 * `nextAttemptAt`; a worker claims it (sending) by moving that time past the attempt's timeout, a
 * lease, so a delivery whose worker died mid-attempt is due again when the lease ends.
 */
@Entity({ tableName: 'webhook_deliveries' })
@Index({ name: 'webhook_deliveries_message_subscription_unique', expression: `create unique index "webhook_deliveries_message_subscription_unique" on "webhook_deliveries" ("message_id", "subscription_id")` })
@Index({ name: 'webhook_deliveries_due_idx', expression: `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "status" in ('pending', 'sending')` })
@Index({ name: 'webhook_deliveries_subscription_idx', properties: ['subscription', 'status'] })
export class WebhookDelivery {
  [OptionalProps]?: 'id' | 'status' | 'attempts' | 'recoveryTaskId' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => WebhookMessage, { deleteRule: 'cascade' })
  message!: WebhookMessage;

  @ManyToOne(() => WebhookSubscription, { deleteRule: 'cascade' })
  subscription!: WebhookSubscription;

  @Property({ type: 'string', length: 16 })
  status: DeliveryStatus = 'pending';

  /** Attempts made in the current run of the retry schedule (a recovery starts a new run). */
  @Property({ type: 'integer' })
  attempts = 0;

  /** When a pending delivery is next due (or its lease ends); null once it succeeded or failed for good. */
  @Property({ type: 'datetime', nullable: true })
  nextAttemptAt!: Date | null;

  /** The recovery task that last queued it again, for that task's progress. */
  @Property({ type: 'uuid', nullable: true })
  @Index()
  recoveryTaskId: string | null = null;

  @Property({ type: 'datetime' })
  updatedAt: Date = new Date();
}

/** One HTTP attempt of a delivery, kept as history. */
@Entity({ tableName: 'webhook_attempts' })
@Index({ name: 'webhook_attempts_subscription_created_idx', properties: ['subscriptionId', 'createdAt'] })
@Index({ name: 'webhook_attempts_message_idx', properties: ['messageId', 'createdAt'] })
export class WebhookAttempt {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => WebhookDelivery, { deleteRule: 'cascade' })
  delivery!: WebhookDelivery;

  @Property({ type: 'uuid' })
  messageId!: string;

  @Property({ type: 'uuid' })
  subscriptionId!: string;

  @Property({ type: 'text' })
  url!: string;

  /** Null when no HTTP response came back (refused target, connection error, timeout). */
  @Property({ type: 'integer', nullable: true })
  responseStatusCode!: number | null;

  /** The start of the response body, or what went wrong when there was none. */
  @Property({ type: 'text' })
  response!: string;

  @Property({ type: 'string', length: 16 })
  status!: 'success' | 'failed';

  @Property({ type: 'integer' })
  durationMs!: number;

  /** 1 for the first attempt of a run of the retry schedule. */
  @Property({ type: 'integer' })
  attemptNumber!: number;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}

/** A replay of a subscription's failed or pending messages of a time window. */
@Entity({ tableName: 'webhook_recovery_tasks' })
export class WebhookRecoveryTask {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => WebhookSubscription, { deleteRule: 'cascade' })
  @Index()
  subscription!: WebhookSubscription;

  @Property({ type: 'uuid' })
  organizationId!: string;

  @Property({ type: 'datetime' })
  since!: Date;

  @Property({ type: 'datetime' })
  until!: Date;

  /** Messages queued again by the task. */
  @Property({ type: 'integer' })
  messageCount!: number;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
