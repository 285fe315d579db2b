import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Orm } from '../../platform/db/database.js';
import { EVENTS_RECORDED_TOPIC } from '../../platform/events/event-bus.js';
import type { Logger } from '../../platform/logger.js';
import type { PubSub } from '../../platform/pubsub/pubsub.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { uuidv7 } from '../../shared/ids.js';
import { nextRetryDelayMs, type DeliverySchedule } from './retry-schedule.js';
import { signedHeaders } from './signing.js';
import { addressProblem, bareHost, guardedLookup, RefusedTargetError, type TargetPolicy } from '../../shared/target-guard.js';
import { DELIVERIES_DUE_TOPIC } from './webhook.service.js';

export interface DeliveryWorkerOptions {
  schedule: DeliverySchedule;
  /** HTTP attempts one worker process runs at a time. */
  concurrency: number;
  /** How often the worker looks for due retries (events and resumes wake it at once). */
  pollMs: number;
  /** Messages fanned out to deliveries per transaction. */
  dispatchBatch: number;
}

export const DEFAULT_DELIVERY_OPTIONS: Omit<DeliveryWorkerOptions, 'schedule'> = { concurrency: 64, pollMs: 1000, dispatchBatch: 500 };

/** The start of a receiver's response kept with each attempt. */
const RESPONSE_EXCERPT_CHARS = 2048;
/** A claim outlives the attempt's timeout by this much before another worker may take the delivery. */
const LEASE_MARGIN_MS = 5000;

interface Claimed {
  id: string;
  attempts: number;
  message_id: string;
  subscription_id: string;
  payload: Record<string, unknown>;
  url: string;
  sealed_secret: string;
}

interface Outcome {
  statusCode: number | null;
  response: string;
  ok: boolean;
}

/**
 * The worker role for webhooks. The database is the source of truth: the dispatcher turns each
 * committed message (the outbox) into one delivery per matching subscription, and deliveries are
 * claimed when due with `for update skip locked`, so any number of workers share them and a worker
 * that dies leaves its claims to expire. Pub/sub only wakes workers early.
 */
export class WebhookDeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private readonly agents: { http: http.Agent; https: https.Agent };
  private pass: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private wakeUps: AsyncIterableIterator<unknown>[] = [];
  private started = false;

  constructor(
    private readonly deps: {
      orm: Orm;
      pubsub: PubSub;
      secretBox: SecretBox;
      policy: TargetPolicy;
      logger: Logger;
      /** Told of each attempt's outcome: 'retrying' when another attempt is scheduled, 'failed' when none is. */
      observer?: { attempted(outcome: 'success' | 'retrying' | 'failed', seconds: number): void };
    },
    private readonly options: DeliveryWorkerOptions,
  ) {
    this.agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: options.concurrency, lookup: guardedLookup((address) => addressProblem(address, 'http:', deps.policy)) }),
      https: new https.Agent({ keepAlive: true, maxSockets: options.concurrency, lookup: guardedLookup((address) => addressProblem(address, 'https:', deps.policy)) }),
    };
  }

  start(): void {
    if (this.started || this.shutdown.signal.aborted) return;
    this.started = true;
    for (const topic of [EVENTS_RECORDED_TOPIC, DELIVERIES_DUE_TOPIC]) {
      const subscription = this.deps.pubsub.subscribe(topic);
      this.wakeUps.push(subscription);
      void (async () => {
        for await (const _ of subscription) this.wake();
      })().catch((error) => this.deps.logger.warn({ err: error }, 'webhook wake-up subscription ended'));
    }
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.wake();
  }

  /**
   * Stops claiming; attempts under way are abandoned and their deliveries handed back as due. When
   * it resolves, the worker holds no timer, socket or database query: the database may close.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.shutdown.abort();
    await Promise.allSettled(this.wakeUps.map((subscription) => subscription.return?.()));
    this.wakeUps = [];
    // A pass may be claiming right now: what it claims is handed back, and those hand-backs are
    // awaited too, until nothing is left.
    while (this.pass || this.inFlight.size) await Promise.allSettled([this.pass, ...this.inFlight]);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Runs a pass now, or right after the current one: wake-ups during a pass are never lost. */
  private wake(): void {
    if (this.shutdown.signal.aborted) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.runPass()
      .catch((error) => this.deps.logger.error({ err: error }, 'webhook delivery pass failed'))
      .finally(() => {
        this.pass = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async runPass(): Promise<void> {
    const dispatched = await this.dispatch();
    if (dispatched === this.options.dispatchBatch) this.again = true;
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0 || this.shutdown.signal.aborted) return;
    for (const delivery of await this.claim(free)) {
      const attempt = (this.shutdown.signal.aborted ? this.release(delivery.id) : this.attempt(delivery)).finally(() => {
        this.inFlight.delete(attempt);
        this.wake();
      });
      this.inFlight.add(attempt);
    }
  }

  /** Fans a batch of undispatched messages out to the subscriptions that want them; returns how many. */
  async dispatch(): Promise<number> {
    const rows = await this.deps.orm.em.getConnection().execute<{ id: string }[]>(
      `with batch as (
         select id, organization_id, event_type, created_at from webhook_messages where dispatched_at is null
         order by created_at limit ? for update skip locked
       ), marked as (
         update webhook_messages m set dispatched_at = now() from batch where m.id = batch.id returning m.id
       ), created as (
         insert into webhook_deliveries (id, message_id, subscription_id, status, attempts, next_attempt_at, recovery_task_id, updated_at)
         select gen_random_uuid(), batch.id, s.id, 'pending', 0, now(), null, now()
         from batch join webhook_subscriptions s on s.organization_id = batch.organization_id and s.filter_types @> jsonb_build_array(batch.event_type)
           and s.created_at <= batch.created_at
         on conflict do nothing
       )
       select id from marked`,
      [this.options.dispatchBatch],
    );
    return rows.length;
  }

  /** Takes up to `limit` due deliveries of enabled subscriptions, oldest message first, under a lease. */
  private async claim(limit: number): Promise<Claimed[]> {
    const leaseMs = this.options.schedule.timeoutMs + LEASE_MARGIN_MS;
    return this.deps.orm.em.getConnection().execute<Claimed[]>(
      `with due as (
         select d.id from webhook_deliveries d
         join webhook_subscriptions s on s.id = d.subscription_id
         join webhook_messages m on m.id = d.message_id
         where d.status in ('pending', 'sending') and d.next_attempt_at <= now() and not s.disabled
         order by d.next_attempt_at, m.created_at limit ? for update of d skip locked
       ), claimed as (
         update webhook_deliveries d set status = 'sending', next_attempt_at = now() + ? * interval '1 millisecond', updated_at = now()
         from due where d.id = due.id returning d.id, d.attempts, d.message_id, d.subscription_id
       )
       select claimed.id, claimed.attempts, claimed.message_id, claimed.subscription_id, m.payload, s.url, s.sealed_secret
       from claimed join webhook_messages m on m.id = claimed.message_id join webhook_subscriptions s on s.id = claimed.subscription_id`,
      [limit, leaseMs],
    );
  }

  /** One HTTP attempt and its record; a shutdown mid-attempt hands the delivery back instead. */
  private async attempt(delivery: Claimed): Promise<void> {
    const started = Date.now();
    let outcome: Outcome;
    try {
      outcome = await this.post(delivery);
    } catch (error) {
      if (this.shutdown.signal.aborted) return this.release(delivery.id);
      outcome = { statusCode: null, response: describeFailure(error, this.options.schedule.timeoutMs), ok: false };
    }
    const attemptsMade = delivery.attempts + 1;
    const retryMs = outcome.ok ? null : nextRetryDelayMs(this.options.schedule, attemptsMade);
    const status = outcome.ok ? 'success' : retryMs === null ? 'failed' : 'pending';
    this.deps.observer?.attempted(status === 'pending' ? 'retrying' : status, (Date.now() - started) / 1000);
    // Ids and outcome only: never the URL (its query may carry a token), headers, body or secret.
    this.deps.logger.debug(
      { deliveryId: delivery.id, messageId: delivery.message_id, subscriptionId: delivery.subscription_id, attempt: attemptsMade, statusCode: outcome.statusCode, durationMs: Date.now() - started, next: status },
      'webhook attempt',
    );
    try {
      // One statement: the delivery's new state and the attempt's record commit together. A
      // delivery deleted meanwhile (its subscription went) updates nothing and records nothing.
      await this.deps.orm.em.getConnection().execute(
        `with updated as (
           update webhook_deliveries set status = ?, attempts = ?, updated_at = now(),
             next_attempt_at = case when ?::bigint is null then null else now() + ?::bigint * interval '1 millisecond' end
           where id = ? and status = 'sending' returning id, message_id, subscription_id
         )
         insert into webhook_attempts (id, delivery_id, message_id, subscription_id, url, response_status_code, response, status, duration_ms, attempt_number, created_at)
         select ?, id, message_id, subscription_id, ?, ?, ?, ?, ?, ?, now() from updated`,
        [status, attemptsMade, retryMs, retryMs, delivery.id, uuidv7(), delivery.url, outcome.statusCode, outcome.response, outcome.ok ? 'success' : 'failed', Date.now() - started, attemptsMade],
      );
    } catch (error) {
      // The lease runs out and another attempt follows: at least once, never lost.
      this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'recording a webhook attempt failed');
    }
  }

  private async release(deliveryId: string): Promise<void> {
    await this.deps.orm.em
      .getConnection()
      .execute(`update webhook_deliveries set status = 'pending', next_attempt_at = now(), updated_at = now() where id = ? and status = 'sending'`, [deliveryId])
      .catch((error) => this.deps.logger.warn({ err: error, deliveryId }, 'handing back a webhook delivery failed'));
  }

  /** POSTs the signed message; refuses non-public targets unless allowed, also after DNS. */
  private post(delivery: Claimed): Promise<Outcome> {
    const url = new URL(delivery.url);
    const host = bareHost(url.hostname);
    if (url.protocol !== 'https:' && !(this.deps.policy.allowHttp && url.protocol === 'http:')) {
      return Promise.reject(new RefusedTargetError(`${url.protocol} URLs are not allowed`));
    }
    // An address in the URL is connected to without a lookup: the guarded lookup never sees it.
    const problem = isIP(host) ? addressProblem(host, url.protocol as 'http:' | 'https:', this.deps.policy) : null;
    if (problem) return Promise.reject(new RefusedTargetError(problem));
    const body = JSON.stringify(delivery.payload);
    const headers = {
      ...signedHeaders(this.deps.secretBox.open(delivery.sealed_secret), delivery.message_id, body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'Catchment-Webhooks/1.0',
    };
    const client = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? this.agents.https : this.agents.http;
    const signal = AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(this.options.schedule.timeoutMs)]);
    return new Promise<Outcome>((resolve, reject) => {
      const request = client.request(url, { method: 'POST', headers, agent, signal }, (response) => {
        const statusCode = response.statusCode ?? 0;
        let excerpt = '';
        response.setEncoding('utf8');
        const done = () => resolve({ statusCode, response: excerpt.slice(0, RESPONSE_EXCERPT_CHARS), ok: statusCode >= 200 && statusCode < 300 });
        response.on('data', (chunk: string) => {
          excerpt += chunk;
          // The excerpt is all that is kept: the rest of a long (or endless) body is not waited for.
          if (excerpt.length >= RESPONSE_EXCERPT_CHARS) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
  }
}

/** What an attempt without a response records: never headers or secrets. */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof RefusedTargetError) return `Refused: ${error.message}`;
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `Timed out after ${timeoutMs / 1000} s without a response`;
  const code = (error as { code?: string } | null)?.code;
  return `Connection failed${code ? ` (${code})` : ''}: ${error instanceof Error ? error.message : String(error)}`;
}
