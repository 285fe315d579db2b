import type { EntityManager } from '@mikro-orm/core';
import type { Orm } from '../../platform/db/database.js';
import { EVENT_TYPES, type EventOutbox, type EventType, type RecordedEvent } from '../../platform/events/event-bus.js';
import type { PubSub } from '../../platform/pubsub/pubsub.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { ForbiddenError, NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { UUID_PATTERN } from '../../shared/ids.js';
import { PAGE_LIMIT } from '../collections/collection.service.js';
import { Organization, roleAtLeast, type Role } from '../organizations/organization.entity.js';
import type { Principal } from '../organizations/principal.js';
import { generateSecret, normalizeSecret } from './signing.js';
import { targetProblem, type TargetPolicy } from '../../shared/target-guard.js';
import { WebhookMessage, WebhookRecoveryTask, WebhookSubscription } from './webhook.entities.js';

/** Whoever holds a signing secret can forge deliveries: it is shown to admins and owners only (API keys act as admin). */
const SECRET_READER_ROLE: Role = 'admin';

export type HealthStatus = 'healthy' | 'degraded' | 'failing' | 'unknown';

export interface SubscriptionView {
  id: string;
  url: string;
  filterTypes: EventType[];
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  healthStatus: HealthStatus;
}

export interface SubscriptionDetailView extends SubscriptionView {
  /** Only when asked for (`include_secret`). */
  secret: string | null;
  deliveryAttempts: AttemptView[];
}

export interface AttemptView {
  id: string;
  messageId: string;
  endpointId: string;
  url: string;
  response: string;
  responseStatusCode: number | null;
  status: 'success' | 'failed';
  timestamp: Date;
  durationMs: number;
  attemptNumber: number;
}

export interface MessageView {
  id: string;
  eventType: EventType;
  payload: Record<string, unknown>;
  timestamp: Date;
  channels: string[];
  /** Only when asked for (`include_attempts`). */
  deliveryAttempts: AttemptView[] | null;
}

export interface RecoveryTaskView {
  id: string;
  subscriptionId: string;
  status: 'running' | 'completed';
  since: Date;
  until: Date;
  createdAt: Date;
  messageCount: number;
  delivered: number;
  failed: number;
  pending: number;
}

/** Attempts shown on a subscription's detail, newest first. */
export const RECENT_ATTEMPTS = 50;
/** Attempts the health status looks at, newest first. */
const HEALTH_WINDOW = 20;
/** Tells delivery workers that deliveries became due outside the event flow (resume, recovery). */
export const DELIVERIES_DUE_TOPIC = 'webhooks:due';

/**
 * healthy: the recent attempts all succeeded; failing: the latest attempt failed and so did at
 * least half of the recent ones; degraded: some recent attempts failed; unknown: no attempt yet.
 */
export function healthStatus(recentNewestFirst: ('success' | 'failed')[]): HealthStatus {
  if (recentNewestFirst.length === 0) return 'unknown';
  const failed = recentNewestFirst.filter((status) => status === 'failed').length;
  if (failed === 0) return 'healthy';
  if (recentNewestFirst[0] === 'failed' && failed * 2 >= recentNewestFirst.length) return 'failing';
  return 'degraded';
}

/** Writes each recorded event as a webhook message in the unit of work of its state change. */
export class WebhookOutbox implements EventOutbox {
  add(em: EntityManager, event: RecordedEvent): void {
    em.create(WebhookMessage, {
      id: event.id,
      organization: em.getReference(Organization, event.organizationId),
      eventType: event.type,
      payload: { ...event.payload, event_id: event.id },
      createdAt: new Date(event.occurredAt),
    });
  }
}

interface AttemptRow {
  id: string;
  message_id: string;
  subscription_id: string;
  url: string;
  response: string;
  response_status_code: number | null;
  status: 'success' | 'failed';
  created_at: Date;
  duration_ms: number;
  attempt_number: number;
}

/** Webhook subscriptions, message history and recovery. Every method is scoped to the caller's organization. */
export class WebhookService {
  constructor(
    private readonly orm: Orm,
    private readonly secretBox: SecretBox,
    private readonly pubsub: PubSub,
    private readonly policy: TargetPolicy,
  ) {}

  async listSubscriptions(principal: Principal): Promise<SubscriptionView[]> {
    const rows = await this.orm.em.fork().find(WebhookSubscription, { organization: principal.organizationId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
    const health = await this.health(rows.map((row) => row.id));
    return rows.map((row) => this.view(row, health.get(row.id) ?? 'unknown'));
  }

  async getSubscription(principal: Principal, id: string, includeSecret: boolean): Promise<SubscriptionDetailView | null> {
    if (includeSecret && !roleAtLeast(principal.role, SECRET_READER_ROLE)) {
      throw new ForbiddenError(`Reading a webhook signing secret (include_secret) needs the ${SECRET_READER_ROLE} role or higher`);
    }
    const row = await this.find(this.orm.em.fork(), principal, id);
    if (!row) return null;
    const [health, attempts] = await Promise.all([this.health([row.id]), this.attempts('subscription_id', row.id, RECENT_ATTEMPTS)]);
    return {
      ...this.view(row, health.get(row.id) ?? 'unknown'),
      secret: includeSecret ? this.secretBox.open(row.sealedSecret) : null,
      deliveryAttempts: attempts,
    };
  }

  async createSubscription(principal: Principal, input: { url: string; eventTypes: string[]; secret?: string | null }): Promise<SubscriptionView> {
    const issues = [...(await this.urlIssues(input.url)), ...eventTypeIssues(input.eventTypes)];
    let secret = generateSecret();
    if (input.secret != null) {
      const checked = normalizeSecret(input.secret);
      if ('problem' in checked) issues.push({ loc: ['secret'], msg: checked.problem, type: 'value_error' });
      else secret = checked.secret;
    }
    if (issues.length) throw new ValidationError(issues);
    const em = this.orm.em.fork();
    const row = em.create(WebhookSubscription, {
      organization: em.getReference(Organization, principal.organizationId),
      url: input.url,
      filterTypes: [...new Set(input.eventTypes)] as EventType[],
      sealedSecret: this.secretBox.seal(secret),
    });
    await em.flush();
    return this.view(row, 'unknown');
  }

  /**
   * Only the fields sent change. `disabled: true` pauses delivery (deliveries wait); false resumes
   * it, and `recoverSince` then also queues again what failed from that time on.
   */
  async updateSubscription(
    principal: Principal,
    id: string,
    input: { url?: string | null; eventTypes?: string[] | null; disabled?: boolean | null; recoverSince?: Date | null },
  ): Promise<SubscriptionView> {
    const em = this.orm.em.fork();
    const row = await this.find(em, principal, id);
    if (!row) throw NotFoundError.of('Webhook subscription', id);
    const issues: ValidationIssue[] = [];
    if (input.url != null) issues.push(...(await this.urlIssues(input.url)));
    if (input.eventTypes != null) issues.push(...eventTypeIssues(input.eventTypes));
    const disabled = input.disabled ?? row.disabled;
    if (input.recoverSince != null && disabled) {
      issues.push({ loc: ['recover_since'], msg: 'recover_since applies when delivery resumes: send it with disabled false', type: 'value_error' });
    }
    if (input.recoverSince != null && input.recoverSince.getTime() > Date.now()) {
      issues.push({ loc: ['recover_since'], msg: 'recover_since should not be in the future', type: 'value_error' });
    }
    if (issues.length) throw new ValidationError(issues);
    const resumed = row.disabled && !disabled;
    if (input.url != null) row.url = input.url;
    if (input.eventTypes != null) row.filterTypes = [...new Set(input.eventTypes)] as EventType[];
    row.disabled = disabled;
    row.updatedAt = new Date();
    await em.transactional(async (tx) => {
      tx.persist(row);
      if (input.recoverSince != null) await this.queueRecovery(tx, row, input.recoverSince, new Date());
    });
    if (resumed || input.recoverSince != null) await this.pubsub.publish(DELIVERIES_DUE_TOPIC, { subscriptionId: row.id });
    return this.view(row, (await this.health([row.id])).get(row.id) ?? 'unknown');
  }

  /** Removes the subscription; its pending deliveries (and their history) go with it. */
  async deleteSubscription(principal: Principal, id: string): Promise<SubscriptionView> {
    const em = this.orm.em.fork();
    const row = await this.find(em, principal, id);
    if (!row) throw NotFoundError.of('Webhook subscription', id);
    const view = this.view(row, (await this.health([row.id])).get(row.id) ?? 'unknown');
    await em.remove(row).flush();
    return view;
  }

  /**
   * Queues again, in chronological order, the subscription's failed or pending messages created in
   * [since, until] (until defaults to now); delivered ones are skipped. Returns the task.
   */
  async recover(principal: Principal, subscriptionId: string, input: { since: Date; until?: Date | null }): Promise<RecoveryTaskView> {
    const em = this.orm.em.fork();
    const row = await this.find(em, principal, subscriptionId);
    if (!row) throw NotFoundError.of('Webhook subscription', subscriptionId);
    const until = input.until ?? new Date();
    if (until.getTime() < input.since.getTime()) throw new ValidationError([{ loc: ['until'], msg: 'until should not be before since', type: 'value_error' }]);
    const task = await em.transactional((tx) => this.queueRecovery(tx, row, input.since, until));
    await this.pubsub.publish(DELIVERIES_DUE_TOPIC, { subscriptionId: row.id });
    return (await this.recoveryTask(principal, row.id, task.id))!;
  }

  async recoveryTask(principal: Principal, subscriptionId: string, taskId: string): Promise<RecoveryTaskView | null> {
    if (!UUID_PATTERN.test(subscriptionId) || !UUID_PATTERN.test(taskId)) return null;
    const task = await this.orm.em.fork().findOne(WebhookRecoveryTask, { id: taskId, subscription: subscriptionId, organizationId: principal.organizationId });
    if (!task) return null;
    const counts = await this.orm.em.getConnection().execute<{ status: string; count: string }[]>(
      `select status, count(*) as count from webhook_deliveries where recovery_task_id = ? group by status`,
      [task.id],
    );
    const count = (...statuses: string[]) => counts.filter((c) => statuses.includes(c.status)).reduce((sum, c) => sum + Number(c.count), 0);
    const pending = count('pending', 'sending');
    return {
      id: task.id,
      subscriptionId,
      status: pending > 0 ? 'running' : 'completed',
      since: task.since,
      until: task.until,
      createdAt: task.createdAt,
      messageCount: task.messageCount,
      delivered: count('success'),
      failed: count('failed'),
      pending,
    };
  }

  /** The organization's messages, newest first, optionally of some event types only. */
  async listMessages(principal: Principal, options: { eventTypes?: string[] | null; skip?: number; limit?: number }): Promise<MessageView[]> {
    const skip = options.skip ?? 0;
    const limit = options.limit ?? PAGE_LIMIT.default;
    const issues = options.eventTypes ? eventTypeIssues(options.eventTypes, { allowEmpty: true }) : [];
    if (!Number.isInteger(skip) || skip < 0) issues.push({ loc: ['skip'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
    if (!Number.isInteger(limit) || limit < PAGE_LIMIT.min || limit > PAGE_LIMIT.max) {
      issues.push({ loc: ['limit'], msg: `Input should be between ${PAGE_LIMIT.min} and ${PAGE_LIMIT.max}`, type: 'range' });
    }
    if (issues.length) throw new ValidationError(issues);
    const where: Record<string, unknown> = { organization: principal.organizationId };
    if (options.eventTypes?.length) where.eventType = { $in: options.eventTypes };
    const rows = await this.orm.em.fork().find(WebhookMessage, where, { orderBy: { createdAt: 'desc', id: 'desc' }, offset: skip, limit });
    return rows.map((row) => messageView(row, null));
  }

  async getMessage(principal: Principal, id: string, includeAttempts: boolean): Promise<MessageView | null> {
    if (!UUID_PATTERN.test(id)) return null;
    const row = await this.orm.em.fork().findOne(WebhookMessage, { id, organization: principal.organizationId });
    if (!row) return null;
    return messageView(row, includeAttempts ? await this.attempts('message_id', row.id, null) : null);
  }

  /** Marks the window's failed or pending deliveries due now, under a new task; runs in `tx`. */
  private async queueRecovery(tx: ReturnType<Orm['em']['fork']>, subscription: WebhookSubscription, since: Date, until: Date): Promise<WebhookRecoveryTask> {
    const task = tx.create(WebhookRecoveryTask, { subscription, organizationId: subscription.organization.id, since, until, messageCount: 0 });
    await tx.flush();
    // Deliveries being sent right now are left alone: their worker records the outcome.
    const requeued = await tx.execute<{ id: string }[]>(
      `update webhook_deliveries d set status = 'pending', attempts = 0, next_attempt_at = now(), recovery_task_id = ?, updated_at = now()
       from webhook_messages m
       where m.id = d.message_id and d.subscription_id = ? and d.status in ('pending', 'failed') and m.created_at >= ? and m.created_at <= ?
       returning d.id`,
      [task.id, subscription.id, since, until],
    );
    task.messageCount = requeued.length;
    await tx.flush();
    return task;
  }

  private async urlIssues(url: string): Promise<ValidationIssue[]> {
    const problem = await targetProblem(url, this.policy);
    return problem ? [{ loc: ['url'], msg: problem, type: 'url_not_allowed' }] : [];
  }

  private async find(em: ReturnType<Orm['em']['fork']>, principal: Principal, id: string): Promise<WebhookSubscription | null> {
    if (!UUID_PATTERN.test(id)) return null;
    return em.findOne(WebhookSubscription, { id, organization: principal.organizationId });
  }

  private view(row: WebhookSubscription, health: HealthStatus): SubscriptionView {
    return {
      id: row.id,
      url: row.url,
      filterTypes: row.filterTypes,
      disabled: row.disabled,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      healthStatus: health,
    };
  }

  /** Health of each subscription from its most recent attempts, in one query. */
  private async health(subscriptionIds: string[]): Promise<Map<string, HealthStatus>> {
    const result = new Map<string, HealthStatus>();
    if (subscriptionIds.length === 0) return result;
    const rows = await this.orm.em.getConnection().execute<{ subscription_id: string; status: 'success' | 'failed' }[]>(
      `select subscription_id, status from (
         select subscription_id, status, created_at, id, row_number() over (partition by subscription_id order by created_at desc, id desc) as position
         from webhook_attempts where subscription_id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid))
       ) recent where position <= ? order by subscription_id, created_at desc, id desc`,
      [JSON.stringify(subscriptionIds), HEALTH_WINDOW],
    );
    const bySubscription = new Map<string, ('success' | 'failed')[]>();
    for (const row of rows) bySubscription.set(row.subscription_id, [...(bySubscription.get(row.subscription_id) ?? []), row.status]);
    for (const id of subscriptionIds) result.set(id, healthStatus(bySubscription.get(id) ?? []));
    return result;
  }

  /** Attempts of one subscription (newest first, limited) or of one message (in order). */
  private async attempts(column: 'subscription_id' | 'message_id', id: string, limit: number | null): Promise<AttemptView[]> {
    const order = column === 'subscription_id' ? 'created_at desc, id desc' : 'created_at, id';
    const rows = await this.orm.em.getConnection().execute<AttemptRow[]>(
      `select id, message_id, subscription_id, url, response, response_status_code, status, created_at, duration_ms, attempt_number
       from webhook_attempts where ${column} = ? order by ${order}${limit === null ? '' : ` limit ${limit}`}`,
      [id],
    );
    return rows.map(attemptView);
  }
}

function attemptView(row: AttemptRow): AttemptView {
  return {
    id: row.id,
    messageId: row.message_id,
    endpointId: row.subscription_id,
    url: row.url,
    response: row.response,
    responseStatusCode: row.response_status_code,
    status: row.status,
    timestamp: new Date(row.created_at),
    durationMs: row.duration_ms,
    attemptNumber: row.attempt_number,
  };
}

function messageView(row: WebhookMessage, attempts: AttemptView[] | null): MessageView {
  return { id: row.id, eventType: row.eventType, payload: row.payload, timestamp: row.createdAt, channels: [row.eventType], deliveryAttempts: attempts };
}

function eventTypeIssues(types: string[], options: { allowEmpty?: boolean } = {}): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (types.length === 0 && !options.allowEmpty) issues.push({ loc: ['event_types'], msg: 'List should have at least 1 item', type: 'too_short' });
  types.forEach((type, index) => {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) {
      issues.push({ loc: ['event_types', index], msg: `Input should be one of ${EVENT_TYPES.map((t) => `'${t}'`).join(', ')}`, type: 'enum' });
    }
  });
  return issues;
}
