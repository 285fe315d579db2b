import { afterAll, beforeAll } from '@jest/globals';
import type { EntityRow, EntityStore } from '../../src/modules/sync/entity-store.js';
import { startTestServer, type Deployment, type TestServer } from './harness.js';
import { api } from './sync-helpers.js';

/** A running server with one collection and one push connection, whose entity table tests read and write directly. */
export interface EntityTableFixture {
  server: TestServer;
  store: EntityStore;
  collectionId: string;
  connectionId: string;
}

/**
 * Registers the fixture's set-up and teardown (beforeAll, afterAll) in the calling `describe`: a
 * server of `deployment`, the collection `readableId` and a push connection in it. Its fields are set
 * once the set-up ran.
 */
export function useEntityTable(readableId: string, deployment: Deployment = 'embedded'): EntityTableFixture {
  const fixture = {} as EntityTableFixture;
  beforeAll(async () => {
    fixture.server = await startTestServer({ deployment });
    const call = api(fixture.server.url, fixture.server.apiKey);
    fixture.collectionId = (await call('POST', '/collections', { name: readableId, readable_id: readableId })).body.id;
    fixture.connectionId = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: readableId, name: 'Notes' })).body.id;
    fixture.store = fixture.server.running.core.entityStore;
  });
  afterAll(async () => {
    await fixture.server?.stop();
  });
  return fixture;
}

/** `count` plain rows of the entity table (`<prefix>-<i>`, no fields, one chunk each) for tests that write it directly. */
export function noteRows(count: number, prefix = 'note'): EntityRow[] {
  return Array.from({ length: count }, (_, i) => ({
    entityId: `${prefix}-${i}`,
    entityType: 'note',
    name: `Note ${i}`,
    contentHash: `hash-${i}`,
    chunkCount: 1,
    breadcrumbs: [],
    fields: null,
    sourceCreatedAt: null,
    sourceUpdatedAt: null,
  }));
}
