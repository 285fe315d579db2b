import type { PubSub } from '../pubsub/pubsub.js';

/** Every lifecycle event type of the spec; webhook subscriptions choose among these. */
export const EVENT_TYPES = [
  'sync.pending',
  'sync.running',
  'sync.completed',
  'sync.failed',
  'sync.cancelled',
  'source_connection.created',
  'source_connection.auth_completed',
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

/** Publishes lifecycle events per organization; the webhooks feature delivers them outside. */
export class EventBus {
  constructor(private readonly pubsub: PubSub) {}

  async publish<S>(event: DomainEvent<S>): Promise<void> {
    await this.pubsub.publish(organizationEventsTopic(event.organizationId), event);
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
