import { CompiledQuery, type Transaction } from 'kysely';
import { INSTANT_OF, instantArrays, integerArray, textArray } from '../../platform/db/array-literal.js';
import type { Orm } from '../../platform/db/database.js';

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
  /** The writer found no row of this id stored (see EntityStore.upsert); a row found after all is updated. */
  isNew?: boolean;
}

/** PostgreSQL's SQLSTATE for a duplicate key. */
const UNIQUE_VIOLATION = '23505';

/**
 * Bulk reads and writes of the `entities` table in plain SQL: a sync touches thousands of rows per
 * second, which the unit of work is not built for. A batch is one statement over `unnest` of typed
 * arrays, one array per column.
 *
 * The statements go to the driver with bound parameters (`$1`), not through the ORM's `execute`: that
 * one writes each value into the SQL text as an escaped literal, character by character, which cost
 * about 25 ms of CPU per 2,000-row batch, and the database then scans it again as SQL. Each column
 * goes as an array literal (see array-literal.ts, which makes it with less work than the driver);
 * PostgreSQL parses it element by element into the column's type, which in PGlite costs less than
 * parsing the whole batch as one jsonb document.
 */
export class EntityStore {
  constructor(private readonly orm: Orm) {}

  /**
   * In a transaction of its own: PGlite's wire server runs every connection's messages on one session,
   * and a bound statement is several messages (parse, bind, execute); another connection's query between
   * them would drop the statement. PGlite serves only the connection in a transaction until it ends.
   * `planSettings` are set for this statement alone (`set local`); `connectionGuard`, a connection id,
   * is locked first (see lockConnection).
   */
  private async query<T>(sql: string, parameters: unknown[], options: { planSettings?: string[]; connectionGuard?: string } = {}): Promise<{ rows: T[]; affected: number }> {
    return this.transaction(async (statement) => {
      for (const setting of options.planSettings ?? []) await statement(`set local ${setting}`, []);
      return statement<T>(sql, parameters);
    }, options.connectionGuard);
  }

  /** Statements in one transaction (see query), after the lock of `connectionGuard` when given. */
  private async transaction<R>(work: (statement: <T>(sql: string, parameters: unknown[]) => Promise<{ rows: T[]; affected: number }>) => Promise<R>, connectionGuard?: string): Promise<R> {
    return this.orm.em
      .getConnection()
      .getClient()
      .transaction()
      .execute(async (transaction) => {
        if (connectionGuard !== undefined) await this.lockConnection(transaction, connectionGuard);
        return work(async <T>(sql: string, parameters: unknown[]) => {
          const result = await transaction.executeQuery<T>(CompiledQuery.raw(sql, parameters));
          return { rows: result.rows, affected: Number(result.numAffectedRows ?? 0) };
        });
      });
  }

  /**
   * The table has no foreign key to the connection (its check per row cost ~13 ms of a 2,000-row
   * upsert): this takes, once per statement, the lock that check took per row, so the connection's
   * deletion waits until the rows are committed and its trigger then deletes them too; a connection
   * already gone gets no rows. This holds for deletions at READ COMMITTED, as the services delete: a
   * deleting transaction at REPEATABLE READ would run the trigger on its own snapshot, which lacks the
   * rows committed while it waited, and leave them (the key's cascade raised a serialization error).
   */
  private async lockConnection(transaction: Pick<Transaction<unknown>, 'executeQuery'>, sourceConnectionId: string): Promise<void> {
    const { rows } = await transaction.executeQuery(CompiledQuery.raw('select 1 from source_connections where id = $1 for key share', [sourceConnectionId]));
    if (rows.length === 0) throw new Error(`The source connection ${sourceConnectionId} was deleted: its entities are not written`);
  }

  async hashes(sourceConnectionId: string, entityIds: string[]): Promise<Map<string, string>> {
    if (entityIds.length === 0) return new Map();
    const { rows } = await this.query<{ entity_id: string; content_hash: string }>(
      'select entity_id, content_hash from entities where source_connection_id = $1 and entity_id = any($2::text[])',
      [sourceConnectionId, textArray(entityIds)],
    );
    return new Map(rows.map((row) => [row.entity_id, row.content_hash]));
  }

  /**
   * Writes the rows: each updates the row of its id, or is inserted. Rows marked `isNew` (the caller
   * found no row of theirs) go in a plain insert, which PGlite runs in three quarters of the upsert's
   * CPU (30 → 23 ms for 2,000 rows: no speculative insertion and conflict check a row); the others in
   * the upsert, in the same transaction. Should one of the new be stored after all (a writer the
   * caller did not know of), that insert fails on the key and the rows are written again, all upserted.
   */
  async upsert(sourceConnectionId: string, collectionId: string, jobId: string, rows: EntityRow[]): Promise<void> {
    if (rows.length === 0) return;
    const fresh = rows.filter((row) => row.isNew);
    const rest = rows.filter((row) => !row.isNew);
    const write = (upserted: EntityRow[], inserted: EntityRow[]) =>
      this.transaction(async (statement) => {
        if (inserted.length) await statement(this.insertStatement(false), this.rowParameters(sourceConnectionId, collectionId, jobId, inserted));
        if (upserted.length) await statement(this.insertStatement(true), this.rowParameters(sourceConnectionId, collectionId, jobId, upserted));
      }, sourceConnectionId);
    try {
      await write(rest, fresh);
    } catch (error) {
      if (fresh.length === 0 || (error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
      await write(rows, []);
    }
  }

  /** The bulk insert of a batch's rows (see rowParameters), as an upsert or a plain insert. */
  private insertStatement(upsert: boolean): string {
    // JSON columns go as JSON text: the driver would take a row's breadcrumbs (an array) for a dimension of the array.
    return `insert into entities (source_connection_id, collection_id, entity_id, entity_type, name, content_hash, chunk_count,
                             breadcrumbs, fields, source_created_at, source_updated_at, synced_at, last_job_id)
       select $1::uuid, $2::uuid, u.entity_id, u.entity_type, u.name, u.content_hash, u.chunk_count,
              u.breadcrumbs, u.fields, ${INSTANT_OF('u.created_text', 'u.created_millis')}, ${INSTANT_OF('u.updated_text', 'u.updated_millis')}, now(), $3::uuid
       from unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::jsonb[], $10::jsonb[], $11::int8[], $12::timestamptz[], $13::int8[], $14::timestamptz[])
         as u(entity_id, entity_type, name, content_hash, chunk_count, breadcrumbs, fields, created_millis, created_text, updated_millis, updated_text)${
           upsert
             ? `
       on conflict (source_connection_id, entity_id) do update set
         entity_type = excluded.entity_type, name = excluded.name, content_hash = excluded.content_hash,
         chunk_count = excluded.chunk_count, breadcrumbs = excluded.breadcrumbs, fields = excluded.fields,
         source_created_at = excluded.source_created_at, source_updated_at = excluded.source_updated_at,
         synced_at = excluded.synced_at, last_job_id = excluded.last_job_id`
             : ''
         }`;
  }

  private rowParameters(sourceConnectionId: string, collectionId: string, jobId: string, rows: EntityRow[]): unknown[] {
    const created = instantArrays(rows.map((row) => row.sourceCreatedAt));
    const updated = instantArrays(rows.map((row) => row.sourceUpdatedAt));
    return [
      sourceConnectionId,
      collectionId,
      jobId,
      textArray(rows.map((row) => row.entityId)),
      textArray(rows.map((row) => row.entityType)),
      textArray(rows.map((row) => row.name)),
      textArray(rows.map((row) => row.contentHash)),
      integerArray(rows.map((row) => row.chunkCount)),
      textArray(rows.map((row) => JSON.stringify(row.breadcrumbs))),
      textArray(rows.map((row) => (row.fields === null ? null : JSON.stringify(row.fields)))),
      created.millis,
      created.text,
      updated.millis,
      updated.text,
    ];
  }

  /** Deletes the connection's entities of these ids; the ids of those it held (each once). */
  async delete(sourceConnectionId: string, entityIds: string[]): Promise<string[]> {
    if (entityIds.length === 0) return [];
    const { rows } = await this.query<{ entity_id: string }>('delete from entities where source_connection_id = $1 and entity_id = any($2::text[]) returning entity_id', [sourceConnectionId, textArray(entityIds)]);
    return rows.map((row) => row.entity_id);
  }

  /** Clears the content hashes of a collection's entities: the next sync of each connection treats every entity as changed. */
  async forgetHashes(collectionId: string): Promise<void> {
    await this.query(`update entities set content_hash = '' where source_connection_id in (select id from source_connections where collection_id = $1)`, [collectionId]);
  }

  /** Whether the connection holds any entity (one index probe, where `count` reads all its rows). */
  async holdsAny(sourceConnectionId: string): Promise<boolean> {
    const { rows } = await this.query<{ held: boolean }>('select exists (select 1 from entities where source_connection_id = $1) as held', [sourceConnectionId]);
    return rows[0]!.held;
  }

  /** How many entities the connection holds. */
  async count(sourceConnectionId: string): Promise<number> {
    const { rows } = await this.query<{ count: string }>('select count(*) as count from entities where source_connection_id = $1', [sourceConnectionId]);
    return Number(rows[0]?.count ?? 0);
  }

  /**
   * The connection's entity ids, a page of `pageSize` at a time in id order (for the deletions at the
   * end of a full sync): a million ids read at once took ~100 MiB of row objects and strings. Rows of
   * pages already given may be deleted meanwhile; each page continues after the last id given.
   *
   * Each page walks the (connection, entity id) index in order and stops at `pageSize`. The embedded
   * database never gathers statistics (PGlite runs no autovacuum), so its planner, guessing ~140 rows,
   * chose a bitmap scan that read every remaining row of the connection and sorted them for each page:
   * quadratic, 2.0–2.7 s of CPU for 112,000 ids in pages of 2,000, against 0.16–0.17 s walking the
   * index (PGlite, 16 MB of shared buffers, measured in one process). PostgreSQL itself chose the
   * same bitmap scan for a table not yet analyzed (review, PostgreSQL 17, 100,000 rows) and walks the
   * index with the setting too.
   */
  async *ids(sourceConnectionId: string, pageSize: number): AsyncGenerator<string[]> {
    const inIndexOrder = ['enable_bitmapscan = off'];
    let last: string | null = null;
    for (;;) {
      const { rows }: { rows: { entity_id: string }[] } =
        last === null
          ? await this.query('select entity_id from entities where source_connection_id = $1 order by entity_id limit $2', [sourceConnectionId, pageSize], { planSettings: inIndexOrder })
          : await this.query('select entity_id from entities where source_connection_id = $1 and entity_id > $2 order by entity_id limit $3', [sourceConnectionId, last, pageSize], { planSettings: inIndexOrder });
      if (rows.length === 0) return;
      yield rows.map((row) => row.entity_id);
      if (rows.length < pageSize) return;
      last = rows.at(-1)!.entity_id;
    }
  }

  async stats(sourceConnectionIds: string[]): Promise<Map<string, { total: number; byType: Map<string, { count: number; lastUpdated: Date | null }> }>> {
    const result = new Map<string, { total: number; byType: Map<string, { count: number; lastUpdated: Date | null }> }>();
    if (sourceConnectionIds.length === 0) return result;
    const { rows } = await this.query<{ source_connection_id: string; entity_type: string; count: string; last_updated: Date | null }>(
      `select source_connection_id, entity_type, count(*) as count, max(synced_at) as last_updated
       from entities where source_connection_id = any($1::uuid[]) group by source_connection_id, entity_type`,
      [sourceConnectionIds],
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
