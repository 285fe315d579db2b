import type { Orm } from '../../platform/db/database.js';
import type { CollectionConnections } from '../collections/collection.service.js';
import type { ConnectionSyncState } from '../collections/collection-status.js';
import type { JobStatus } from '../sync/sync-job.entity.js';
import { SourceConnection } from './source-connection.entity.js';
import type { SourceConnectionService } from './source-connection.service.js';

/** Connections as collections see them: summaries and sync states for the status, and deletion. */
export class ConnectionsOfCollections implements CollectionConnections {
  constructor(
    private readonly orm: Orm,
    private readonly connections: () => SourceConnectionService,
  ) {}

  async describe(collectionIds: string[]) {
    const result = new Map<string, { summaries: { shortName: string; name: string }[]; states: ConnectionSyncState[] }>();
    if (collectionIds.length === 0) return result;
    const rows = await this.orm.em.getConnection().execute<
      { collection_id: string; short_name: string; name: string; authenticated: boolean; last_status: JobStatus | null; ever_completed: boolean }[]
    >(
      `select c.collection_id, c.short_name, c.name, c.authenticated,
              (select j.status from sync_jobs j where j.source_connection_id = c.id order by j.created_at desc, j.id desc limit 1) as last_status,
              exists (select 1 from sync_jobs j where j.source_connection_id = c.id and j.status = 'COMPLETED') as ever_completed
       from source_connections c where c.collection_id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid)) order by c.created_at`,
      [JSON.stringify(collectionIds)],
    );
    for (const row of rows) {
      const entry = result.get(row.collection_id) ?? { summaries: [], states: [] };
      entry.summaries.push({ shortName: row.short_name, name: row.name });
      entry.states.push({ authenticated: row.authenticated, lastJobStatus: row.last_status, everCompleted: row.ever_completed });
      result.set(row.collection_id, entry);
    }
    return result;
  }

  async stopAll(collectionId: string): Promise<void> {
    const rows = await this.orm.em.fork().find(SourceConnection, { collection: collectionId }, { fields: ['id'] });
    await this.connections().stopSyncs(rows.map((row) => row.id));
  }

  recordDeletion(em: ReturnType<Orm['em']['fork']>, collection: { id: string; readableId: string }) {
    return this.connections().recordCollectionDeletion(em, collection);
  }

  stageCleanup(em: ReturnType<Orm['em']['fork']>, collectionId: string): () => Promise<void> {
    return this.connections().stageCleanup(em, { collectionId, sourceConnectionId: null });
  }
}
