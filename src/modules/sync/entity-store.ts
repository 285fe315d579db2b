import type { Orm } from '../../platform/db/database.js';
import { uuidv7 } from '../../shared/ids.js';

export interface EntityRow {
  entityId: string;
  entityType: string;
  name: string;
  contentHash: string;
  chunkCount: number;
  breadcrumbs: unknown[];
  fields: Record<string, unknown> | null;
  sourceCreatedAt: Date | null;
  sourceUpdatedAt: Date | null;
}

/**
 * Bulk reads and writes of the `entities` table in plain SQL: a sync touches thousands of rows per
 * second, which the unit of work is not built for. `unnest` of arrays keeps it to one statement.
 */
export class EntityStore {
  constructor(private readonly orm: Orm) {}

  private get connection() {
    return this.orm.em.getConnection();
  }

  async hashes(sourceConnectionId: string, entityIds: string[]): Promise<Map<string, string>> {
    if (entityIds.length === 0) return new Map();
    const rows = await this.connection.execute<{ entity_id: string; content_hash: string }[]>(
      'select entity_id, content_hash from entities where source_connection_id = ? and entity_id = any(array(select jsonb_array_elements_text(?::jsonb)))',
      [sourceConnectionId, JSON.stringify(entityIds)],
    );
    return new Map(rows.map((row) => [row.entity_id, row.content_hash]));
  }

  async upsert(sourceConnectionId: string, collectionId: string, jobId: string, rows: EntityRow[]): Promise<void> {
    if (rows.length === 0) return;
    // One statement per batch; the rows travel as one JSON parameter (the driver would expand arrays).
    await this.connection.execute(
      `insert into entities (id, source_connection_id, collection_id, entity_id, entity_type, name, content_hash, chunk_count,
                             breadcrumbs, fields, source_created_at, source_updated_at, synced_at, last_job_id)
       select u.id, ?::uuid, ?::uuid, u.entity_id, u.entity_type, u.name, u.content_hash, u.chunk_count,
              u.breadcrumbs, u.fields, u.source_created_at, u.source_updated_at, now(), ?::uuid
       from jsonb_to_recordset(?::jsonb) as u(id uuid, entity_id text, entity_type text, name text, content_hash text, chunk_count int,
                                              breadcrumbs jsonb, fields jsonb, source_created_at timestamptz, source_updated_at timestamptz)
       on conflict (source_connection_id, entity_id) do update set
         entity_type = excluded.entity_type, name = excluded.name, content_hash = excluded.content_hash,
         chunk_count = excluded.chunk_count, breadcrumbs = excluded.breadcrumbs, fields = excluded.fields,
         source_created_at = excluded.source_created_at, source_updated_at = excluded.source_updated_at,
         synced_at = excluded.synced_at, last_job_id = excluded.last_job_id`,
      [
        sourceConnectionId,
        collectionId,
        jobId,
        JSON.stringify(
          rows.map((row) => ({
            id: uuidv7(),
            entity_id: row.entityId,
            entity_type: row.entityType,
            name: row.name,
            content_hash: row.contentHash,
            chunk_count: row.chunkCount,
            breadcrumbs: row.breadcrumbs,
            fields: row.fields,
            source_created_at: row.sourceCreatedAt,
            source_updated_at: row.sourceUpdatedAt,
          })),
        ),
      ],
      'run',
    );
  }

  async delete(sourceConnectionId: string, entityIds: string[]): Promise<number> {
    if (entityIds.length === 0) return 0;
    const result = await this.connection.execute<{ affectedRows: number }>(
      'delete from entities where source_connection_id = ? and entity_id = any(array(select jsonb_array_elements_text(?::jsonb)))',
      [sourceConnectionId, JSON.stringify(entityIds)],
      'run',
    );
    return result.affectedRows;
  }

  /** Clears the content hashes of a collection's entities: the next sync of each connection treats every entity as changed. */
  async forgetHashes(collectionId: string): Promise<void> {
    await this.connection.execute(`update entities set content_hash = '' where collection_id = ?`, [collectionId]);
  }

  /** How many entities the connection holds. */
  async count(sourceConnectionId: string): Promise<number> {
    const [row] = await this.connection.execute<{ count: string }[]>('select count(*) as count from entities where source_connection_id = ?', [sourceConnectionId]);
    return Number(row?.count ?? 0);
  }

  /** Every entity id of the connection (for the deletions at the end of a full sync). */
  async allIds(sourceConnectionId: string): Promise<string[]> {
    const rows = await this.connection.execute<{ entity_id: string }[]>('select entity_id from entities where source_connection_id = ?', [sourceConnectionId]);
    return rows.map((row) => row.entity_id);
  }

  async stats(sourceConnectionIds: string[]): Promise<Map<string, { total: number; byType: Map<string, { count: number; lastUpdated: Date | null }> }>> {
    const result = new Map<string, { total: number; byType: Map<string, { count: number; lastUpdated: Date | null }> }>();
    if (sourceConnectionIds.length === 0) return result;
    const rows = await this.connection.execute<{ source_connection_id: string; entity_type: string; count: string; last_updated: Date | null }[]>(
      `select source_connection_id, entity_type, count(*) as count, max(synced_at) as last_updated
       from entities where source_connection_id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid)) group by source_connection_id, entity_type`,
      [JSON.stringify(sourceConnectionIds)],
    );
    for (const row of rows) {
      const entry = result.get(row.source_connection_id) ?? { total: 0, byType: new Map() };
      entry.total += Number(row.count);
      entry.byType.set(row.entity_type, { count: Number(row.count), lastUpdated: row.last_updated ? new Date(row.last_updated) : null });
      result.set(row.source_connection_id, entry);
    }
    return result;
  }
}
