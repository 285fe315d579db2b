import type { EntityManager } from '@mikro-orm/core';
import type { PubSub } from '../pubsub/pubsub.js';

/**
 * Every lifecycle event type of the spec, and `source_connection.auth_expired` (a refresh the provider
 * refused: the connection needs its user to sign in again; receivers ignore types they do not know).
 * Webhook subscriptions choose among these.
 */
export const EVENT_TYPES = [
  'sync.pending',
  'sync.running',
  'sync.completed',
  'sync.failed',
  'sync.cancelled',
  'source_connection.created',
  'source_connection.auth_completed',
  'source_connection.auth_expired',
  'source_connection.deleted',
  'collection.created',
  'collection.updated',
  'collection.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * A lifecycle event on the internal bus. `payload` is what webhook receivers get (the spec's
 * fields, snake_case); `subject` is the full record for in-process consumers such as GraphQL
 * subscriptions, and never leaves the service.
 */
export interface DomainEvent<S = unknown> {
  id: string;
  type: EventType;
  organizationId: string;
  occurredAt: string;
  payload: Record<string, unknown> & { event_type: EventType; organization_id: string; timestamp: string };
  subject: S;
}

export const organizationEventsTopic = (organizationId: string) => `org:${organizationId}:events`;
/** Signalled after every commit that recorded events, so the webhook dispatcher looks at once. */
export const EVENTS_RECORDED_TOPIC = 'events:recorded';

/** An event as the outbox stores it: everything but the in-process subject. */
export type RecordedEvent = Omit<DomainEvent, 'subject'>;

/** The transactional outbox (the webhooks feature's message table): adds an event to a unit of work. */
export interface EventOutbox {
  add(em: EntityManager, event: RecordedEvent): void;
}

/**
 * Lifecycle events per organization. A state change records its event in its own transaction
 * (`record` before the flush or commit), so the event is never lost nor sent for a change that
 * rolled back; `publish` then tells in-process consumers and wakes the webhook dispatcher.
 */
export class EventBus {
  constructor(
    private readonly pubsub: PubSub,
    private readonly outbox: EventOutbox,
  ) {}

  /** Stages the event in `em`'s unit of work: it commits, or rolls back, with the state change. */
  record(em: EntityManager, event: RecordedEvent): void {
    this.outbox.add(em, event);
  }

  /** After the commit: GraphQL subscribers get the event, and the dispatcher a wake-up. */
  async publish<S>(event: DomainEvent<S>): Promise<void> {
    await this.pubsub.publish(organizationEventsTopic(event.organizationId), event);
    await this.pubsub.publish(EVENTS_RECORDED_TOPIC, { id: event.id });
  }

  /**
   * The organization's events from now on, optionally only some types. A hand-written iterator,
   * not an async generator: `return()` must reach the subscription at once, even while waiting.
   */
  subscribe<S = unknown>(organizationId: string, types: readonly EventType[] | null, signal?: AbortSignal): AsyncIterableIterator<DomainEvent<S>> {
    const inner = this.pubsub.subscribe<DomainEvent<S>>(organizationEventsTopic(organizationId), signal);
    const iterator: AsyncIterableIterator<DomainEvent<S>> = {
      async next() {
        for (;;) {
          const result = await inner.next();
          if (result.done || !types || types.includes(result.value.type)) return result;
        }
      },
      return: () => inner.return!(),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}
