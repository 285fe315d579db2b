import type * as lancedb from '@lancedb/lancedb';
import { CONTAINER_WEIGHT, type RankedDocument, rankDocumentsDeepening } from '../document-ranking.js';
import { checkChunks, type ChunkRecord, type FilterGroup, type ScoredChunk, type VectorIndex, type VectorQuery } from '../vector-index.js';
import { type ChunkLayout, chunksToArrow, fullTextColumns } from './arrow.js';
import { connectLanceDb, type LanceDbVectorIndexOptions } from './connection.js';
import { EntityKeyCache } from './entity-key-cache.js';
import { FilterShares, IVF_FILTER_MIN_SHARE } from './filter-shares.js';
import { literal, whereClause } from './filters.js';
import { ivfPartitionsFor, TableMaintenance } from './maintenance.js';
import { candidateColumns, chunkRankings, ivfProbesFor, type RankingContext, SHARD } from './rankings.js';
import { DETAILS_RESULT, KEYWORDS_DETAILS_RESULT, LEGACY_RESULT, pageRows, queryRows, type ResultColumns, type Row } from './rows.js';
import { LanceDbTables } from './tables.js';

export type { LanceDbVectorIndexOptions } from './connection.js';

/** Larger adds are written in slices of at least this many rows (and fewer than twice as many). */
const MIN_SLICE_ROWS = 5000;
const DEFAULT_VECTOR_INDEX_MIN_ROWS = 50_000;
/**
 * Rows of a collection's shard (see LanceDbTables) before its writes go to the next. The upkeep of a
 * table grows with it: each compaction folds the rows added into its whole full-text index, so at
 * 1,000,000 rows in one table an optimize took 4–15 s and lifted resident memory 150–340 MiB over the
 * sync's (bench:memory, a search every 2 s: peaks 1,006 MiB at 500,000 entities, 1,247 at 1,000,000).
 * A shard's upkeep stops growing at this size (an optimize at 250,000 rows: ~2–4 s, ~+100 MiB), and
 * searches read each shard; a collection of fewer chunks (bench:search's 100,000) is one table.
 */
export const DEFAULT_SHARD_ROWS = 250_000;

export type LanceDbTableStats = lancedb.TableStatistics & { versions: number };

/**
 * LanceDB files under the data directory: a collection's chunks in one table, or in shards of
 * `shardRows` rows beyond (see LanceDbTables), each created on its first add with an explicit Arrow
 * schema and a full-text index on its keywords (KEYWORDS_COLUMN). Writes to a collection are
 * serialized inside this process; reads are not. Upkeep (TableMaintenance), the entity keys and the
 * filters' shares are kept per table (shard), by its name.
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
    this.tables = new LanceDbTables(db, dimensions, options.shardRows ?? DEFAULT_SHARD_ROWS, (tableName) => {
      this.maintenance.forget(tableName);
      this.entityKeys.forget(tableName);
      this.filterShares.forget(tableName);
    });
    const onUpkeepError = options.onUpkeepError ?? (() => undefined);
    // Upkeep is kept by table name and runs under its collection's lock, named by the table itself: a
    // table this process forgot meanwhile (its collection dropped) still names its collection.
    this.maintenance = new TableMaintenance(
      options.vectorIndexMinRows ?? DEFAULT_VECTOR_INDEX_MIN_ROWS,
      options.ivfPartitionsFor ?? ivfPartitionsFor,
      (tableName, run) => this.tables.exclusive(LanceDbTables.collectionIdOf(tableName), run),
      (tableName, error) => onUpkeepError(LanceDbTables.collectionIdOf(tableName), error),
      options.keywordScanMaxUnindexedRows,
    );
  }

  static async open(directory: string, dimensions: number, options: LanceDbVectorIndexOptions = {}): Promise<LanceDbVectorIndex> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) throw new Error(`Invalid vector dimensions: ${dimensions}`);
    const { db, session } = await connectLanceDb(directory, options);
    return new LanceDbVectorIndex(db, session, dimensions, options);
  }

  /** The table holding a collection's chunks, or those of its shard `shard` (see LanceDbTables.tableName). */
  static tableName(collectionId: string, shard = 0): string {
    return LanceDbTables.tableName(collectionId, shard);
  }

  // ---------------------------------------------------------------- writes

  async add(collectionId: string, chunks: ChunkRecord[]): Promise<void> {
    if (chunks.length === 0) return;
    checkChunks(chunks, this.dimensions);
    await this.tables.exclusive(collectionId, async () => {
      const table = await this.writeShard(collectionId);
      const name = this.tables.nameOf(table);
      const slices = Math.max(1, Math.floor(chunks.length / MIN_SLICE_ROWS));
      const size = Math.ceil(chunks.length / slices);
      for (let start = 0; start < chunks.length; start += size) {
        await table.add(chunksToArrow(chunks.slice(start, start + size), this.tables.schemaOf(table)));
        await this.maintenance.wrote(name, table);
      }
    });
  }

  async deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void> {
    if (entityIds.length === 0) return;
    // Bounded IN lists keep the SQL small when a sync deletes many entities at once.
    const unique = [...new Set(entityIds)];
    const predicates: string[] = [];
    for (let start = 0; start < unique.length; start += 5000) {
      const ids = unique.slice(start, start + 5000).map(literal).join(', ');
      predicates.push(`source_connection_id = ${literal(sourceConnectionId)} AND entity_id IN (${ids})`);
    }
    await this.deleteWhere(collectionId, predicates);
  }

  async deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void> {
    await this.deleteWhere(collectionId, [`source_connection_id = ${literal(sourceConnectionId)}`]);
  }

  /** Deletes the rows each predicate matches from every shard; a shard it deleted rows from counts a write (its upkeep). */
  private async deleteWhere(collectionId: string, predicates: string[]): Promise<void> {
    await this.tables.exclusive(collectionId, async () => {
      // Listed now: a delete must reach every shard, another process's newest too.
      for (const table of await this.tables.shards(collectionId, { fresh: true })) {
        const name = this.tables.nameOf(table);
        for (const predicate of predicates) {
          if ((await table.delete(predicate)).numDeletedRows > 0) await this.maintenance.wrote(name, table);
        }
      }
    });
  }

  async deleteCollection(collectionId: string): Promise<void> {
    await this.tables.exclusive(collectionId, () => this.tables.drop(collectionId));
  }

  /** Optimizes each shard changed since this process last optimized it, or not known to it (a restart: an optimize owed). */
  async optimize(collectionId: string): Promise<void> {
    await this.tables.exclusive(collectionId, async () => {
      // Asked before close() began, not started yet: close() would wait for all of it (tens of seconds at a
      // million rows). Left undone, it is owed (SyncJob.indexOptimizedAt): the worker's next start does it.
      if (this.tables.isClosing()) throw new Error('LanceDbVectorIndex is closing: the optimize is left undone');
      for (const table of await this.tables.shards(collectionId, { fresh: true })) await this.optimizeShard(table);
    });
  }

  /**
   * Compacts a shard and brings its vector index to rest, unless this process did so at the shard's
   * version now (a full shard nothing changed since: a delete matching none of its rows still makes a
   * version, whose older ones then wait for this). The caller holds the collection's lock.
   */
  private async optimizeShard(table: lancedb.Table): Promise<void> {
    const name = this.tables.nameOf(table);
    if (this.maintenance.optimizedAt(name, await table.version())) return;
    await this.maintenance.compact(name, table);
    await this.maintenance.upkeepVectorIndex(name, table, true);
    this.maintenance.optimized(name, await table.version());
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
   * Fragment, version and index statistics of a collection's shard (null when it has none), and its
   * layout (tables made before CURRENT_LAYOUT are searched more slowly, see ChunkLayout), with the
   * collection's count of shards; for operations, benchmarks and tests.
   */
  async stats(collectionId: string, shard = 0): Promise<(LanceDbTableStats & { indices: lancedb.IndexConfig[]; layout: ChunkLayout; shards: number }) | null> {
    const shards = await this.tables.shards(collectionId);
    const table = shards[shard];
    if (!table) return null;
    return { ...(await table.stats()), versions: (await table.listVersions()).length, indices: await table.listIndices(), layout: this.tables.layoutOf(table), shards: shards.length };
  }

  /** Bytes LanceDB's caches (index data, file metadata) hold now: at most what the options allow. */
  cacheBytes(): number {
    return Number(this.session.sizeBytes());
  }

  /**
   * IVF partitions a semantic search of the table probes with this filter; null for an exact scan (see
   * RankingContext.ivfProbes). Each shard of a collection in several probes by its own index: four
   * shards of 250,000 rows read ~1.1× the rows one table of 1,000,000 does (4 × 88 of 128 partitions
   * against 161 of 256; ~1.4× under the square-root rule before, 4 × 68 against 96). Probing only the
   * share one table would was measured and not kept (then 48 of 128 a shard against the square-root
   * rule's 68, see ivfProbesFor): bench:search's 1,000,000 stub
   * chunks, 100 queries, same dataset, one sitting: raw p50 84 ms against 121, but recall of the exact
   * scan 0.987 hybrid, 0.992 semantic against 0.995, 0.998 (a shard's fewer partitions each hold
   * farther neighbours, so the same share finds fewer).
   */
  private async probesOf(table: lancedb.Table, version: number, where: string | null): Promise<number | null> {
    const name = this.tables.nameOf(table);
    const partitions = await this.maintenance.vectorPartitions(name, table, version);
    if (partitions === null) return null;
    if (where !== null && (await this.filterShares.share(name, table, version, where)) < IVF_FILTER_MIN_SHARE) return null;
    return Math.min(partitions, Math.max(1, Math.floor(this.ivfProbes(partitions))));
  }

  /** What a page reads of a table of `layout`: its details column, or a column per field in tables made before it. */
  private resultColumns(layout: ChunkLayout): ResultColumns {
    if (!layout.keyed) return LEGACY_RESULT;
    return layout.textInKeywords ? KEYWORDS_DETAILS_RESULT : DETAILS_RESULT;
  }

  /**
   * The shard a write goes to (LanceDbTables.writeShard), a new one given its full-text indexes. The
   * shard it fills is optimized then, as a sync's end would: nothing writes to it any more, and until
   * then every search would scan the rows written since its last compaction (a sync that compacts
   * every 20 writes while searched leaves up to 40,000). The new shard's indexes come first: searches
   * list it at once, and one finding it without them would make them under the collection's lock,
   * behind that optimize (searches during a 1,000,000-entity sync waited 13–20 s at each new shard).
   * The caller holds the collection's lock.
   */
  private async writeShard(collectionId: string): Promise<lancedb.Table> {
    const { table, created, filled } = await this.tables.writeShard(collectionId);
    const name = this.tables.nameOf(table);
    if (created) await this.maintenance.createFullText(name, table, fullTextColumns(this.tables.layoutOf(table)));
    if (filled) await this.optimizeShard(filled);
    return table;
  }

  // ---------------------------------------------------------------- reads

  async count(collectionId: string, filter?: FilterGroup[]): Promise<number> {
    const where = whereClause(filter);
    return this.tables.read(collectionId, 0, async (shards) => {
      const counts = await Promise.all(shards.map((table) => (where === null ? table.countRows() : table.countRows(where))));
      return counts.reduce((sum, count) => sum + count, 0);
    });
  }

  async search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]> {
    const where = whereClause(query.filter);
    const offset = Math.max(0, Math.floor(query.offset) || 0);
    const limit = Math.max(0, Math.floor(query.limit) || 0);
    if (limit === 0) return [];
    const documents = offset + limit;
    return this.tables.read(collectionId, [] as ScoredChunk[], async (shards) => {
      // Each shard's version is read once, first: its rows (FilterShares.rows) and every cache the ranking keys by
      // it. An empty shard has nothing to rank, and may lack its full-text index yet (another process is making it).
      const versions = await Promise.all(shards.map((table) => table.version()));
      const rowCounts = await Promise.all(shards.map((table, i) => this.filterShares.rows(this.tables.nameOf(table), table, versions[i]!)));
      const searched = shards.flatMap((table, i) => (rowCounts[i]! > 0 ? [{ table, version: versions[i]! }] : []));
      if (searched.length === 0) return [];
      const contexts = await Promise.all(searched.map(({ table, version }, shard) => this.rankingContext(table, shard, version, query, where)));
      // Containers count at CONTAINER_WEIGHT (see there).
      const weightOf = (row: Row) => (contexts[row[SHARD] as number]!.candidates.isContainer(row) ? CONTAINER_WEIGHT : 1);
      const rankedPage = async () => {
        const ranked = await rankDocumentsDeepening(documents, (depth) => chunkRankings(contexts, query, where, depth), weightOf);
        const page = ranked.slice(offset, documents);
        const rows = await Promise.all(contexts.map((context) => pageRows(context.table, context.result, page.filter((document) => document.best.item[SHARD] === context.shard).map(rowIdOf))));
        return { page, rows };
      };
      let { page, rows } = await rankedPage();
      const rowOf = (ranked: RankedDocument<Row>) => rows[ranked.best.item[SHARD] as number]!.get(rowIdOf(ranked));
      // Row ids a compaction (another process) retired between the ranking and the page read read
      // nothing: the search runs again once, on the new versions. A row deleted meanwhile (a
      // concurrent sync) is left out.
      if (page.some((ranked) => !rowOf(ranked))) ({ page, rows } = await rankedPage());
      return page.flatMap((ranked) => {
        const full = rowOf(ranked);
        return full ? [{ chunk: contexts[ranked.best.item[SHARD] as number]!.result.toChunk(full), score: ranked.score }] : [];
      });
    });
  }

  /** What a search ranks one shard with, at `version` (the search's read of it): the index's partitions, the filter's share and the cached entity keys are all kept per version. */
  private async rankingContext(table: lancedb.Table, shard: number, version: number, query: VectorQuery, where: string | null): Promise<RankingContext & { result: ResultColumns }> {
    const name = this.tables.nameOf(table);
    this.maintenance.searched(name);
    const layout = this.tables.layoutOf(table);
    const fullText = fullTextColumns(layout);
    return {
      table,
      shard,
      dimensions: this.dimensions,
      ivfProbes: query.strategy === 'keyword' ? null : await this.probesOf(table, version, where),
      beforeKeywordSearch: () => this.maintenance.beforeKeywordSearch(name, table, fullText, version, where !== null),
      fullTextColumns: fullText,
      candidates: candidateColumns(layout.keyed),
      entityKeys: layout.keyed ? (rowIds: bigint[]) => this.entityKeys.keysOf(name, table, version, rowIds) : undefined,
      result: this.resultColumns(layout),
    };
  }

  async list(collectionId: string, filter: FilterGroup[], limit: number): Promise<Omit<ChunkRecord, 'vector'>[]> {
    const where = whereClause(filter);
    const most = Math.max(0, Math.floor(limit));
    const chunks = await this.tables.read(collectionId, [] as Omit<ChunkRecord, 'vector'>[], async (shards) => {
      const perShard = await Promise.all(
        shards.map(async (table) => {
          const result = this.resultColumns(this.tables.layoutOf(table));
          let query = table.query().select([...result.columns]).limit(most);
          if (where !== null) query = query.where(where);
          return (await queryRows(query, most)).map(result.toChunk);
        }),
      );
      return perShard.flat();
    });
    return chunks.sort((a, b) => a.entityId.localeCompare(b.entityId) || a.chunkIndex - b.chunkIndex).slice(0, most);
  }
}

/** The row id of a document's best chunk, within its shard. */
function rowIdOf(ranked: RankedDocument<Row>): bigint {
  return ranked.best.item._rowid as bigint;
}
