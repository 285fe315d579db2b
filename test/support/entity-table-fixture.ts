import { afterAll, beforeAll } from '@jest/globals';
import type { SourceItem } from '../../src/connectors/connector.js';
import type { EntityRow, EntityStore } from '../../src/modules/sync/entity-store.js';
import type { PipelineRun } from '../../src/modules/sync/pipeline-inputs.js';
import { SyncPipeline } from '../../src/modules/sync/pipeline.js';
import { layerSyncConfigs } from '../../src/modules/sync/sync-config-layers.js';
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

/**
 * A sync pipeline over the fixture's server (its index, embedder and blob store), one entity a batch
 * unless `batchSize` says otherwise, writing the entity table through `entities`: the fixture's
 * store, or one wrapping it to count calls.
 */
export async function pipelineOn(fixture: EntityTableFixture, entities: EntityStore = fixture.store, batchSize = 1): Promise<SyncPipeline> {
  const { core } = fixture.server.running;
  return new SyncPipeline({ entities, vectors: await core.vectors(), embedder: await core.embedder(), blobs: core.blobs, maxEntities: 1000, batchSize, logger: core.logger });
}

/** A run of the fixture's push connection over `items` as job `jobId`; `complete`: the source listed all it holds. */
export function runOn(fixture: EntityTableFixture, jobId: string, items: SourceItem[], complete: boolean): PipelineRun {
  return {
    jobId,
    syncId: fixture.connectionId,
    collectionId: fixture.collectionId,
    sourceConnectionId: fixture.connectionId,
    sourceName: 'push',
    config: layerSyncConfigs(),
    source: {
      complete,
      nextCursor: () => null,
      items: (async function* () {
        yield* items;
      })(),
    },
    orphansPossible: false,
    optimizeOwed: false,
    onIndexOptimized: async () => undefined,
    signal: new AbortController().signal,
    onProgress: async () => undefined,
  };
}
