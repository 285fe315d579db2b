import { isFederated } from '../../connectors/connector.js';
import type { Orm } from '../../platform/db/database.js';
import type { VectorIndex } from '../../platform/vectors/vector-index.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { Collection } from '../collections/collection.entity.js';
import type { CollectionService, CollectionView } from '../collections/collection.service.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { SourceService } from '../sources/source.service.js';
import type { EntityStore } from './entity-store.js';
import { layerSyncConfigs } from './sync-config-layers.js';
import { SyncJob } from './sync-job.entity.js';
import type { SyncJobView } from './sync-job.view.js';
import type { SyncService } from './sync.service.js';

export interface ReembedDependencies {
  orm: Orm;
  sources: SourceService;
  sync: SyncService;
  entities: EntityStore;
  collections: CollectionService;
  vectors: () => Promise<VectorIndex>;
  /** The active embedder's identity (what new collections record). */
  embedding: { modelName: string; dimensions: number };
}

export interface ReembedOutcome {
  collection: CollectionView;
  /** One job per connection that syncs its data again. */
  jobs: SyncJobView[];
  /** Connections that hold nothing to embed (federated) or could not be re-embedded, with why. */
  skipped: { sourceConnectionId: string; reason: string }[];
}

/**
 * Re-embeds a collection with the active embedder: the way out of the 409 a collection gets when the
 * service's embedding model changed (an upgrade of the built-in model, or another endpoint), without
 * re-creating it. Its index is dropped (vectors of two models must not mix, and their sizes may
 * differ), its entities' content hashes are cleared so the next sync of each connection embeds
 * everything again, and that sync starts now: pulled sources read their source again; push
 * connections replay what they were sent from the raw data store.
 */
export class CollectionReembedding {
  constructor(private readonly deps: ReembedDependencies) {}

  async reembed(principal: Principal, readableId: string): Promise<ReembedOutcome> {
    const em = this.deps.orm.em.fork();
    const collection = await em.findOne(Collection, { readableId, organization: principal.organizationId });
    if (!collection) throw new NotFoundError(`Collection "${readableId}" not found`);
    const connections = await em.find(SourceConnection, { collection: collection.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const active = await em.find(SyncJob, { sourceConnection: { $in: connections.map((connection) => connection.id) }, status: { $in: ['PENDING', 'RUNNING', 'CANCELLING'] } });
    if (active.length > 0) {
      throw new ConflictError(`A sync of source connection ${active[0]!.sourceConnection.id} is in progress: wait for it or cancel it, then re-embed`);
    }

    // In this order, so a failure part way leaves a collection that is still refused (409) and can be
    // re-embedded again, never one labelled with the new model whose syncs skip what is not indexed.
    await (await this.deps.vectors()).deleteCollection(collection.id);
    await this.deps.entities.forgetHashes(collection.id);
    // Through a flush, so the caches that watch writes (search scopes) see it at once.
    collection.embeddingModelName = this.deps.embedding.modelName;
    collection.vectorSize = this.deps.embedding.dimensions;
    await em.flush();

    const jobs: SyncJobView[] = [];
    const skipped: ReembedOutcome['skipped'] = [];
    for (const connection of connections) {
      const connector = this.deps.sources.connector(connection.shortName);
      if (isFederated(connector, connection.config)) {
        skipped.push({ sourceConnectionId: connection.id, reason: 'federated: searched in its source, it stores nothing to embed' });
        continue;
      }
      const pushed = connector.receivesPushes === true;
      const effective = layerSyncConfigs(collection.syncConfig, connection.syncConfig);
      if (pushed && !effective.handlers.enableRawDataHandler) {
        skipped.push({ sourceConnectionId: connection.id, reason: 'its raw data is not kept (handlers.enable_raw_data_handler): push its entities again' });
        continue;
      }
      try {
        jobs.push(
          await this.deps.sync.start(connection, {
            trigger: 'reembed',
            forceFullSync: true,
            // What was pushed exists only in the raw data store; pulled sources are read again.
            syncConfig: pushed ? { destinations: null, handlers: null, cursor: null, behavior: { ...effective.behavior, replayFromArf: true } } : null,
          }),
        );
      } catch (error) {
        // A sync that started meanwhile embeds everything too: the hashes are gone.
        if (!(error instanceof ConflictError)) throw error;
        skipped.push({ sourceConnectionId: connection.id, reason: `${error.message}; that sync re-embeds it` });
      }
    }
    return { collection: (await this.deps.collections.get(principal, readableId))!, jobs, skipped };
  }
}
