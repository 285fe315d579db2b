import type * as lancedb from '@lancedb/lancedb';
import { CONTAINER_WEIGHT, type RankedDocument, rankDocumentsDeepening } from '../document-ranking.js';
import { checkChunks, type ChunkRecord, type FilterGroup, type ScoredChunk, type VectorIndex, type VectorQuery } from '../vector-index.js';
import { type ChunkLayout, chunksToArrow, fullTextColumns } from './arrow.js';
import { connectLanceDb, type LanceDbVectorIndexOptions } from './connection.js';
import { EntityKeyCache } from './entity-key-cache.js';
import { FilterShares, IVF_FILTER_MIN_SHARE } from './filter-shares.js';
import { literal, whereClause } from './filters.js';
import { ivfPartitionsFor, TableMaintenance } from './maintenance.js';
import { candidateColumns, chunkRankings, ivfProbesFor } from './rankings.js';
import { DETAILS_RESULT, KEYWORDS_DETAILS_RESULT, LEGACY_RESULT, pageRows, queryRows, type ResultColumns, type Row } from './rows.js';
import { LanceDbTables } from './tables.js';

export type { LanceDbVectorIndexOptions } from './connection.js';

/** Larger adds are written in slices of at least this many rows (and fewer than twice as many). */
const MIN_SLICE_ROWS = 5000;
const DEFAULT_VECTOR_INDEX_MIN_ROWS = 50_000;

export type LanceDbTableStats = lancedb.TableStatistics & { versions: number };

/**
 * LanceDB files under the data directory: one table per collection, created on its first add with
 * an explicit Arrow schema and a full-text index on its keywords (KEYWORDS_COLUMN). Writes to one
 * table are serialized inside this process; reads are not.
 */
export class LanceDbVectorIndex implements VectorIndex {
  private readonly tables: LanceDbTables;
  private readonly maintenance: TableMaintenance;
  private readonly entityKeys = new EntityKeyCache();
  private readonly filterShares = new FilterShares();
  private readonly ivfProbes: (partitions: number) => number;

  private constructor(
    db: lancedb.Connection,
    private readonly session: lancedb.Session,
    private readonly dimensions: number,
    options: LanceDbVectorIndexOptions,
  ) {
    this.ivfProbes = options.ivfProbes ?? ivfProbesFor;
    this.tables = new LanceDbTables(db, dimensions, (collectionId) => {
      this.maintenance.forget(collectionId);
      this.entityKeys.forget(collectionId);
      this.filterShares.forget(collectionId);
    });
    this.maintenance = new TableMaintenance(
      options.vectorIndexMinRows ?? DEFAULT_VECTOR_INDEX_MIN_ROWS,
      options.ivfPartitionsFor ?? ivfPartitionsFor,
      (collectionId, run) => this.tables.exclusive(collectionId, run),
      options.onUpkeepError ?? (() => undefined),
    );
  }

  static async open(directory: string, dimensions: number, options: LanceDbVectorIndexOptions = {}): Promise<LanceDbVectorIndex> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) throw new Error(`Invalid vector dimensions: ${dimensions}`);
    const { db, session } = await connectLanceDb(directory, options);
    return new LanceDbVectorIndex(db, session, dimensions, options);
  }

  /** The table holding a collection's chunks (see LanceDbTables.tableName). */
  static tableName(collectionId: string): string {
    return LanceDbTables.tableName(collectionId);
  }

  // ---------------------------------------------------------------- writes

  async add(collectionId: string, chunks: ChunkRecord[]): Promise<void> {
    if (chunks.length === 0) return;
    checkChunks(chunks, this.dimensions);
    await this.tables.exclusive(collectionId, async () => {
      const table = (await this.tables.existing(collectionId)) ?? (await this.create(collectionId));
      const slices = Math.max(1, Math.floor(chunks.length / MIN_SLICE_ROWS));
      const size = Math.ceil(chunks.length / slices);
      for (let start = 0; start < chunks.length; start += size) {
        await table.add(chunksToArrow(chunks.slice(start, start + size), this.tables.schemaOf(table)));
        await this.maintenance.wrote(collectionId, table);
      }
    });
  }

  async deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void> {
    if (entityIds.length === 0) return;
    await this.tables.exclusive(collectionId, async () => {
      const table = await this.tables.existing(collectionId);
      if (!table) return;
      // Bounded IN lists keep the SQL small when a sync deletes many entities at once.
      const unique = [...new Set(entityIds)];
      for (let start = 0; start < unique.length; start += 5000) {
        const ids = unique.slice(start, start + 5000).map(literal).join(', ');
        await table.delete(`source_connection_id = ${literal(sourceConnectionId)} AND entity_id IN (${ids})`);
        await this.maintenance.wrote(collectionId, table);
      }
    });
  }

  async deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void> {
    await this.tables.exclusive(collectionId, async () => {
      const table = await this.tables.existing(collectionId);
      if (!table) return;
      await table.delete(`source_connection_id = ${literal(sourceConnectionId)}`);
      await this.maintenance.wrote(collectionId, table);
    });
  }

  async deleteCollection(collectionId: string): Promise<void> {
    await this.tables.exclusive(collectionId, () => this.tables.drop(collectionId));
  }

  async optimize(collectionId: string): Promise<void> {
    await this.tables.exclusive(collectionId, async () => {
      // Asked before close() began, not started yet: close() would wait for all of it (tens of seconds at a
      // million rows). Left undone, it is owed (SyncJob.indexOptimizedAt): the worker's next start does it.
      if (this.tables.isClosing()) throw new Error('LanceDbVectorIndex is closing: the optimize is left undone');
      const table = await this.tables.existing(collectionId);
      if (!table) return;
      await this.maintenance.compact(collectionId, table);
      await this.maintenance.upkeepVectorIndex(collectionId, table, true);
    });
  }

  async settled(collectionId: string): Promise<void> {
    try {
      // The table's lock runs work in the order asked: an empty turn comes after all of it.
      await this.tables.exclusive(collectionId, async () => undefined);
    } catch {
      // Closing: close() itself waits for what was asked.
    }
  }

  async close(): Promise<void> {
    await this.tables.close();
  }

  /**
   * Fragment, version and index statistics of a collection's table (null when it has none), and its
   * layout (tables made before CURRENT_LAYOUT are searched more slowly, see ChunkLayout); for
   * operations, benchmarks and tests.
   */
  async stats(collectionId: string): Promise<(LanceDbTableStats & { indices: lancedb.IndexConfig[]; layout: ChunkLayout }) | null> {
    const table = await this.tables.existing(collectionId);
    if (!table) return null;
    return { ...(await table.stats()), versions: (await table.listVersions()).length, indices: await table.listIndices(), layout: this.tables.layoutOf(table) };
  }

  /** Bytes LanceDB's caches (index data, file metadata) hold now: at most what the options allow. */
  cacheBytes(): number {
    return Number(this.session.sizeBytes());
  }

  /** IVF partitions a semantic search of the table probes with this filter; null for an exact scan (see RankingContext.ivfProbes). */
  private async probesOf(collectionId: string, table: lancedb.Table, version: number, where: string | null): Promise<number | null> {
    const partitions = await this.maintenance.vectorPartitions(collectionId, table, version);
    if (partitions === null) return null;
    if (where !== null && (await this.filterShares.share(collectionId, table, version, where)) < IVF_FILTER_MIN_SHARE) return null;
    return Math.min(partitions, Math.max(1, Math.floor(this.ivfProbes(partitions))));
  }

  /** What a page reads of a table of `layout`: its details column, or a column per field in tables made before it. */
  private resultColumns(layout: ChunkLayout): ResultColumns {
    if (!layout.keyed) return LEGACY_RESULT;
    return layout.textInKeywords ? KEYWORDS_DETAILS_RESULT : DETAILS_RESULT;
  }

  private async create(collectionId: string): Promise<lancedb.Table> {
    const table = await this.tables.create(collectionId);
    await this.maintenance.createFullText(collectionId, table, fullTextColumns(this.tables.layoutOf(table)));
    return table;
  }

  // ---------------------------------------------------------------- reads

  async count(collectionId: string, filter?: FilterGroup[]): Promise<number> {
    const where = whereClause(filter);
    return this.tables.read(collectionId, 0, (table) => (where === null ? table.countRows() : table.countRows(where)));
  }

  async search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]> {
    const where = whereClause(query.filter);
    const offset = Math.max(0, Math.floor(query.offset) || 0);
    const limit = Math.max(0, Math.floor(query.limit) || 0);
    if (limit === 0) return [];
    const documents = offset + limit;
    return this.tables.read(collectionId, [] as ScoredChunk[], async (table) => {
      this.maintenance.searched(collectionId);
      const layout = this.tables.layoutOf(table);
      const candidates = candidateColumns(layout.keyed);
      // Read once: the index's partitions, the filter's share and the cached entity keys are all kept per version.
      const version = await table.version();
      const fullText = fullTextColumns(layout);
      const context = {
        table,
        dimensions: this.dimensions,
        ivfProbes: query.strategy === 'keyword' ? null : await this.probesOf(collectionId, table, version, where),
        beforeKeywordSearch: () => this.maintenance.beforeKeywordSearch(collectionId, table, fullText, version),
        fullTextColumns: fullText,
        candidates,
        entityKeys: layout.keyed ? (rowIds: bigint[]) => this.entityKeys.keysOf(collectionId, table, version, rowIds) : undefined,
      };
      const result = this.resultColumns(layout);
      // Containers count at CONTAINER_WEIGHT (see there).
      const weightOf = (row: Row) => (candidates.isContainer(row) ? CONTAINER_WEIGHT : 1);
      const rowIdOf = (ranked: RankedDocument<Row>) => ranked.best.item._rowid as bigint;
      const rankedPage = async () => {
        const ranked = await rankDocumentsDeepening(documents, (depth) => chunkRankings(context, query, where, depth), weightOf);
        const page = ranked.slice(offset, documents);
        return { page, rows: await pageRows(table, result, page.map(rowIdOf)) };
      };
      let { page, rows } = await rankedPage();
      // Row ids a compaction (another process) retired between the ranking and the page read read
      // nothing: the search runs again once, on the new version. A row deleted meanwhile (a
      // concurrent sync) is left out.
      if (rows.size < page.length) ({ page, rows } = await rankedPage());
      return page.flatMap((ranked) => {
        const full = rows.get(rowIdOf(ranked));
        return full ? [{ chunk: result.toChunk(full), score: ranked.score }] : [];
      });
    });
  }

  async list(collectionId: string, filter: FilterGroup[], limit: number): Promise<Omit<ChunkRecord, 'vector'>[]> {
    const where = whereClause(filter);
    const chunks = await this.tables.read(collectionId, [] as Omit<ChunkRecord, 'vector'>[], async (table) => {
      const result = this.resultColumns(this.tables.layoutOf(table));
      let query = table.query().select([...result.columns]).limit(Math.max(0, Math.floor(limit)));
      if (where !== null) query = query.where(where);
      return (await queryRows(query)).map(result.toChunk);
    });
    return chunks.sort((a, b) => a.entityId.localeCompare(b.entityId) || a.chunkIndex - b.chunkIndex);
  }
}
