import type { EntityManager } from '@mikro-orm/core';
import type { EventBus, EventType, RecordedEvent } from '../../platform/events/event-bus.js';
import { uuidv7 } from '../../shared/ids.js';
import type { SourceConnection } from './source-connection.entity.js';

/** Stages the event of a change to `row` in `em`, so that it commits with the change; publish it after. */
export function recordConnectionEvent(
  events: EventBus,
  em: EntityManager,
  type: EventType & `source_connection.${string}`,
  row: SourceConnection,
  collectionReadableId: string,
): RecordedEvent {
  const timestamp = new Date().toISOString();
  const event: RecordedEvent = {
    id: uuidv7(),
    type,
    organizationId: row.organization.id,
    occurredAt: timestamp,
    payload: {
      event_type: type,
      organization_id: row.organization.id,
      timestamp,
      source_connection_id: row.id,
      collection_readable_id: collectionReadableId,
      source_type: row.shortName,
      is_authenticated: row.authenticated,
    },
  };
  events.record(em, event);
  return event;
}
