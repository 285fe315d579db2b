import * as lancedb from '@lancedb/lancedb';
import { FixedSizeList } from 'apache-arrow';
import { ValidationError } from '../../shared/errors.js';
import { candidateDepth, CONTAINER_WEIGHT, isContainerType, rankDocuments, type ChunkRanking } from './document-ranking.js';
import { compare, finiteOr } from './filter-conditions.js';
import { chunkSchema, chunksToArrow } from './lancedb-arrow.js';
import { literal, whereClause } from './lancedb-filters.js';
import { checkChunks, type ChunkRecord, type FilterGroup, type ScoredChunk, type VectorIndex, type VectorQuery } from './vector-index.js';

/** Each add() is a fragment and a version: compact a table after this many writes (adds and deletes). */
const OPTIMIZE_EVERY_WRITES = 20;
/** Larger adds are written in slices of at least this many rows (and fewer than twice as many). */
const MIN_SLICE_ROWS = 5000;
/** Versions older than this are removed when a table is optimized (the default, 7 days, keeps every compacted file). */
const KEEP_VERSIONS_MS = 10 * 60 * 1000;
const FTS_COLUMNS = ['text', 'name'] as const;

/** Columns returned by searches (everything but the vector). */
const RESULT_COLUMNS = [
  'chunk_id',
  'source_connection_id',
  'entity_id',
  'chunk_index',
  'name',
  'text',
  'entity_type',
  'source_name',
  'breadcrumbs',
  'created_at',
  'updated_at',
  'web_url',
  'url',
  'sync_id',
  'sync_job_id',
  'raw_source_fields',
  'access',
];

/**
 * Columns a ranking reads for its candidates: enough to rank them as documents (a chunk id names its
 * entity, see `chunkIdOf`; the entity type tells containers). The rest of the row is read afterwards for the page alone: every column
 * read for hundreds of candidates costs (texts and JSON were most of a hybrid query's time; the
 * connection and entity id columns alone added about 7 ms to the keyword ranking at 100,000 rows).
 */
const CANDIDATE_COLUMNS = ['chunk_id', 'entity_type'];

export interface LanceDbVectorIndexOptions {
  /**
   * How stale (seconds) a table handle may be relative to writes made by other processes (the sync
   * worker writes, the API process searches). 0, the default, checks for a newer version on every read.
   */
  readConsistencyIntervalSeconds?: number;
  /**
   * Rows from which optimize() gives a table an approximate vector index (IVF_FLAT, cosine). Below it
   * a semantic search is an exact scan, fast enough; above it the scan dominates the query (about
   * 37 ms at 100,000 chunks against 7 ms with the index, measured by bench:search).
   */
  vectorIndexMinRows?: number;
  /**
   * Bytes of index data (IVF partitions, full-text posting lists) LanceDB keeps in memory across
   * queries. Its default, 6 GiB, let a server's memory grow with every table it searched.
   */
  indexCacheBytes?: number;
  /** Bytes of file metadata and schemas kept in memory (LanceDB's default: 1 GiB). */
  metadataCacheBytes?: number;
}

/** Room for the indexes of 100,000 chunks (IVF_FLAT vectors ~40 MB, full-text postings), a fraction of LanceDB's defaults. */
const DEFAULT_INDEX_CACHE_BYTES = 128 * 1024 * 1024;
const DEFAULT_METADATA_CACHE_BYTES = 64 * 1024 * 1024;

const DEFAULT_VECTOR_INDEX_MIN_ROWS = 50_000;
/**
 * IVF partitions and how many of them a query probes: 64 / 24 kept recall against the exact scan at
 * 0.99–1.0 in the top 10 and 0.97–0.995 in the top 200 on 100,000 chunks (bench:search's dataset).
 */
const IVF_PARTITIONS = 64;
const IVF_PROBES = 24;

export type LanceDbTableStats = lancedb.TableStatistics & { versions: number };

type Row = Record<string, unknown>;
interface Ranked {
  row: Row;
  score: number;
}

/**
 * LanceDB files under the data directory: one table per collection (`chunks_<collection id without
 * dashes>`), created on its first add with an explicit Arrow schema and full-text indexes on `text`
 * and `name`. Writes to one table are serialized inside this process; reads are not.
 */
export class LanceDbVectorIndex implements VectorIndex {
  private readonly tables = new Map<string, Promise<lancedb.Table>>();
  private readonly writes = new Map<string, number>();
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Tables whose full-text indexes are known to exist. */
  private readonly ftsReady = new Set<string>();
  private closed = false;

  private constructor(
    private readonly db: lancedb.Connection,
    private readonly dimensions: number,
    private readonly vectorIndexMinRows: number,
  ) {}

  static async open(directory: string, dimensions: number, options: LanceDbVectorIndexOptions = {}): Promise<LanceDbVectorIndex> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) throw new Error(`Invalid vector dimensions: ${dimensions}`);
    const session = new lancedb.Session(
      BigInt(options.indexCacheBytes ?? DEFAULT_INDEX_CACHE_BYTES),
      BigInt(options.metadataCacheBytes ?? DEFAULT_METADATA_CACHE_BYTES),
    );
    const db = await lancedb.connect(directory, { readConsistencyInterval: options.readConsistencyIntervalSeconds ?? 0 }, session);
    return new LanceDbVectorIndex(db, dimensions, options.vectorIndexMinRows ?? DEFAULT_VECTOR_INDEX_MIN_ROWS);
  }

  /** The table holding a collection's chunks. UUIDs lose their dashes; other ids are hex-encoded (injective). */
  static tableName(collectionId: string): string {
    if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(collectionId)) {
      return `chunks_${collectionId.replace(/-/g, '')}`;
    }
    return `chunks_h_${Buffer.from(collectionId, 'utf8').toString('hex')}`;
  }

  // ---------------------------------------------------------------- writes

  async add(collectionId: string, chunks: ChunkRecord[]): Promise<void> {
    if (chunks.length === 0) return;
    checkChunks(chunks, this.dimensions);
    await this.exclusive(collectionId, async () => {
      const table = (await this.existing(collectionId)) ?? (await this.create(collectionId));
      const slices = Math.max(1, Math.floor(chunks.length / MIN_SLICE_ROWS));
      const size = Math.ceil(chunks.length / slices);
      for (let start = 0; start < chunks.length; start += size) {
        await table.add(chunksToArrow(chunks.slice(start, start + size), this.dimensions));
        await this.wrote(collectionId, table);
      }
    });
  }

  async deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void> {
    if (entityIds.length === 0) return;
    await this.exclusive(collectionId, async () => {
      const table = await this.existing(collectionId);
      if (!table) return;
      // Bounded IN lists keep the SQL small when a sync deletes many entities at once.
      const unique = [...new Set(entityIds)];
      for (let start = 0; start < unique.length; start += 5000) {
        const ids = unique.slice(start, start + 5000).map(literal).join(', ');
        await table.delete(`source_connection_id = ${literal(sourceConnectionId)} AND entity_id IN (${ids})`);
        await this.wrote(collectionId, table);
      }
    });
  }

  async deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void> {
    await this.exclusive(collectionId, async () => {
      const table = await this.existing(collectionId);
      if (!table) return;
      await table.delete(`source_connection_id = ${literal(sourceConnectionId)}`);
      await this.wrote(collectionId, table);
    });
  }

  async deleteCollection(collectionId: string): Promise<void> {
    await this.exclusive(collectionId, async () => {
      const name = LanceDbVectorIndex.tableName(collectionId);
      // The cached handle is dropped, not closed: a search may still be reading through it.
      this.forget(collectionId);
      if ((await this.db.tableNames()).includes(name)) await this.db.dropTable(name);
    });
  }

  async optimize(collectionId: string): Promise<void> {
    await this.exclusive(collectionId, async () => {
      const table = await this.existing(collectionId);
      if (!table) return;
      await this.compact(collectionId, table);
      await this.ensureVectorIndex(table);
    });
  }

  /**
   * A large table gets its IVF index once; later optimize() calls (compaction) fold new rows into it,
   * and rows not yet indexed are still searched exactly, so nothing is missed meanwhile.
   */
  private async ensureVectorIndex(table: lancedb.Table): Promise<void> {
    if ((await table.listIndices()).some((index) => index.columns.includes('vector'))) return;
    if ((await table.countRows()) < this.vectorIndexMinRows) return;
    await table.createIndex('vector', { config: lancedb.Index.ivfFlat({ numPartitions: IVF_PARTITIONS, distanceType: 'cosine' }) });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.locks.values()]);
    this.closed = true;
    for (const pending of this.tables.values()) (await pending.catch(() => null))?.close();
    this.tables.clear();
    this.db.close();
  }

  /** Fragment and version statistics of a collection's table (null when it has none); for operations and tests. */
  async stats(collectionId: string): Promise<LanceDbTableStats | null> {
    const table = await this.existing(collectionId);
    if (!table) return null;
    return { ...(await table.stats()), versions: (await table.listVersions()).length };
  }

  // ---------------------------------------------------------------- reads

  async count(collectionId: string, filter?: FilterGroup[]): Promise<number> {
    const where = whereClause(filter);
    return this.read(collectionId, 0, (table) => (where === null ? table.countRows() : table.countRows(where)));
  }

  async search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]> {
    const where = whereClause(query.filter);
    const offset = Math.max(0, Math.floor(query.offset) || 0);
    const limit = Math.max(0, Math.floor(query.limit) || 0);
    if (limit === 0) return [];
    const documents = offset + limit;
    return this.read(collectionId, [] as ScoredChunk[], async (table) => {
      const rankings = await this.rankings(collectionId, table, query, where, candidateDepth(documents));
      const page = rankDocuments(rankings, containerWeight).slice(offset, documents);
      const rows = await this.rowsOf(table, page.map(({ best }) => best.item));
      // A row deleted between the two reads (a concurrent sync) is left out.
      return page.flatMap(({ best, score }) => {
        const full = rows.get(best.chunkId);
        return full ? [{ chunk: toChunk(full), score }] : [];
      });
    });
  }

  /**
   * The chunk rankings of a query, `depth` candidates each, with only CANDIDATE_COLUMNS read. Hybrid
   * weighs two rankings on fixed scales: BM25 divided by the best BM25 of the query (BM25 has no fixed
   * scale: it grows with the query's terms and their rarity), and cosine similarity as it is, clipped
   * at 0 (already comparable across queries; stretching it per query, as min-max does, lets a query
   * whose vectors barely separate the candidates reorder the keyword ranking with noise). A single
   * ranking keeps its own scores (BM25, cosine).
   *
   * SciFact train (809 queries, built-in embedder), nDCG@10 against keyword alone (0.690) when this
   * fusion was chosen: min-max per chunk 0.694, min-max per entity 0.698, this 0.700. Reciprocal rank
   * fusion drags BM25 down when vectors are weak (0.60); z-scores (0.696), Rocchio feedback, gated
   * weights and a fitted linear model over ranks and scores did no better: the cap is the embedder.
   */
  private async rankings(collectionId: string, table: lancedb.Table, query: VectorQuery, where: string | null, depth: number): Promise<ChunkRanking<Row>[]> {
    const ranking = (list: Ranked[], weight: number, value: (score: number) => number): ChunkRanking<Row> => ({
      candidates: list.map(({ row, score }) => ({ chunkId: String(row.chunk_id), score, item: row })),
      weight,
      value,
      cut: list.length >= depth,
    });
    const same = (score: number) => score;
    switch (query.strategy) {
      case 'semantic':
        return [ranking(await this.semantic(table, query, where, depth), 1, same)];
      case 'keyword':
        return [ranking(await this.keyword(collectionId, table, query, where, depth), 1, same)];
      case 'hybrid': {
        const weight = query.keywordWeight;
        const keywordWeight = typeof weight === 'number' && Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0.5;
        // The extremes are one ranking, unchanged.
        if (keywordWeight >= 1) return [ranking(await this.keyword(collectionId, table, query, where, depth), 1, same)];
        if (keywordWeight <= 0) return [ranking(await this.semantic(table, query, where, depth), 1, same)];
        const [semantic, keyword] = await Promise.all([this.semantic(table, query, where, depth), this.keyword(collectionId, table, query, where, depth)]);
        const best = keyword[0]?.score ?? 0;
        return [
          ranking(keyword, keywordWeight, (score) => (best > 0 ? Math.max(0, score) / best : 0)),
          ranking(semantic, 1 - keywordWeight, (score) => Math.max(0, score)),
        ];
      }
      default:
        throw new ValidationError([{ loc: ['retrieval_strategy'], msg: `Unknown retrieval strategy ${String(query.strategy)}`, type: 'enum' }]);
    }
  }

  /**
   * Every result column of the page's candidates, by chunk id. Read by row id (a direct take; a
   * `chunk_id IN (…)` predicate scans the column: 9 ms against 1.4 ms at 100,000 rows). Row ids
   * address the version the ranking read and move when another process compacts the table in between,
   * so rows are matched by chunk id and those not found are read again by chunk id.
   */
  private async rowsOf(table: lancedb.Table, candidates: Row[]): Promise<Map<string, Row>> {
    if (candidates.length === 0) return new Map();
    const read = async (where: string) => (await table.query().where(where).select([...RESULT_COLUMNS]).toArray()) as Row[];
    const wanted = new Set(candidates.map((row) => String(row.chunk_id)));
    const rows = new Map<string, Row>();
    for (const row of await read(`_rowid IN (${candidates.map((row) => String(row._rowid)).join(', ')})`)) {
      if (wanted.has(String(row.chunk_id))) rows.set(String(row.chunk_id), row);
    }
    const missing = [...wanted].filter((id) => !rows.has(id));
    if (missing.length > 0) for (const row of await read(`chunk_id IN (${missing.map(literal).join(', ')})`)) rows.set(String(row.chunk_id), row);
    return rows;
  }

  async list(collectionId: string, filter: FilterGroup[], limit: number): Promise<Omit<ChunkRecord, 'vector'>[]> {
    const where = whereClause(filter);
    const rows = await this.read(collectionId, [] as Row[], async (table) => {
      let query = table.query().select([...RESULT_COLUMNS]).limit(Math.max(0, Math.floor(limit)));
      if (where !== null) query = query.where(where);
      return (await query.toArray()) as Row[];
    });
    return rows.map(toChunk).sort((a, b) => a.entityId.localeCompare(b.entityId) || a.chunkIndex - b.chunkIndex);
  }

  private async semantic(table: lancedb.Table, query: VectorQuery, where: string | null, depth: number): Promise<Ranked[]> {
    const vector = query.vector;
    if (!vector) throw new Error(`A ${query.strategy} search needs a query vector`);
    if (vector.length !== this.dimensions) throw new Error(`Query vector has ${vector.length} dimensions; the index expects ${this.dimensions}`);
    let search = table.vectorSearch(vector).distanceType('cosine').nprobes(IVF_PROBES).select([...CANDIDATE_COLUMNS, '_distance']).withRowId().limit(depth);
    // A filter makes the search exact: the IVF index probes only some partitions, and a selective
    // filter's few matches may all lie outside them. The filter itself narrows the scan.
    if (where !== null) search = search.where(where).bypassVectorIndex();
    const rows = (await search.toArray()) as Row[];
    // Cosine distance is in [0, 2]; a zero query vector gives NaN distances.
    return sortRanked(rows.map((row) => ({ row, score: finiteOr(1 - Number(row._distance), -1) })));
  }

  /**
   * BM25 over `text` and `name`. LanceDB searches the rows not yet in the full-text index too (it
   * scans unindexed fragments unless `fastSearch()` is set), so rows are findable right after add;
   * optimize() folds them into the index so that scan stays small.
   */
  private async keyword(collectionId: string, table: lancedb.Table, query: VectorQuery, where: string | null, depth: number): Promise<Ranked[]> {
    const text = query.text?.trim() ?? '';
    if (text === '') return [];
    await this.ensureFullText(collectionId, table);
    // One query per column, the scores added per row: what a multi-column match computes, for less
    // (100,000 rows, depth 200, p50 of 120 queries: 17.6 ms for a MultiMatchQuery over both columns,
    // 11.8 ms for the two single-column searches; SciFact nDCG@10 unchanged). A row beyond one
    // column's top `depth` misses that column's share, which only reorders the tail.
    const perColumn = await Promise.all(
      FTS_COLUMNS.map(async (column) => {
        let search = table.query().fullTextSearch(text, { columns: column }).select([...CANDIDATE_COLUMNS, '_score']).withRowId().limit(depth);
        if (where !== null) search = search.where(where);
        return (await search.toArray()) as Row[];
      }),
    );
    const byChunk = new Map<string, Ranked>();
    for (const rows of perColumn) {
      for (const row of rows) {
        const score = finiteOr(Number(row._score), 0);
        const seen = byChunk.get(String(row.chunk_id));
        if (seen) seen.score += score;
        else byChunk.set(String(row.chunk_id), { row, score });
      }
    }
    return sortRanked([...byChunk.values()]).slice(0, depth);
  }

  /** Full-text indexes are created with the table; tables made without them get them here. */
  private async ensureFullText(collectionId: string, table: lancedb.Table): Promise<void> {
    if (this.ftsReady.has(collectionId)) return;
    await this.exclusive(collectionId, () => this.createFullText(collectionId, table));
  }

  private async createFullText(collectionId: string, table: lancedb.Table): Promise<void> {
    const indexed = new Set((await table.listIndices()).filter((index) => index.indexType === 'FTS').flatMap((index) => index.columns));
    for (const column of FTS_COLUMNS) {
      if (!indexed.has(column)) await table.createIndex(column, { config: lancedb.Index.fts() });
    }
    this.ftsReady.add(collectionId);
  }

  // ---------------------------------------------------------------- tables

  /** Runs a read; a table that does not exist (or was dropped by another process) reads as `empty`. */
  private async read<T>(collectionId: string, empty: T, run: (table: lancedb.Table) => Promise<T>): Promise<T> {
    const table = await this.existing(collectionId);
    if (!table) return empty;
    try {
      return await run(table);
    } catch (error) {
      if (error instanceof ValidationError || !isNotFound(error)) throw error;
      this.forget(collectionId);
      const again = await this.existing(collectionId);
      return again ? run(again) : empty;
    }
  }

  private async existing(collectionId: string): Promise<lancedb.Table | null> {
    this.assertOpen();
    const cached = this.tables.get(collectionId);
    if (cached) return cached;
    const name = LanceDbVectorIndex.tableName(collectionId);
    if (!(await this.db.tableNames()).includes(name)) return null;
    return this.remember(collectionId, this.db.openTable(name));
  }

  private async create(collectionId: string): Promise<lancedb.Table> {
    const name = LanceDbVectorIndex.tableName(collectionId);
    const table = await this.remember(collectionId, this.db.createEmptyTable(name, chunkSchema(this.dimensions), { existOk: true }));
    await this.createFullText(collectionId, table);
    return table;
  }

  /** Caches a table handle after checking its schema against this index. */
  private remember(collectionId: string, opening: Promise<lancedb.Table>): Promise<lancedb.Table> {
    const checked = opening.then(async (table) => {
      const schema = await table.schema();
      const vector = schema.fields.find((field) => field.name === 'vector');
      const width = vector?.type instanceof FixedSizeList ? vector.type.listSize : (vector?.type as { listSize?: number } | undefined)?.listSize;
      if (width !== this.dimensions) {
        table.close();
        throw new Error(
          `LanceDB table ${table.name} holds ${width ?? 'no'}-dimensional vectors, but the embedder produces ${this.dimensions}: delete the collection's index (or the data directory's lancedb folder) and resync`,
        );
      }
      const names = new Set(schema.fields.map((field) => field.name));
      const missing = chunkSchema(this.dimensions).fields.map((field) => field.name).filter((name) => !names.has(name));
      if (missing.length > 0) {
        table.close();
        throw new Error(`LanceDB table ${table.name} lacks columns ${missing.join(', ')} (made by an older version): delete it and resync`);
      }
      return table;
    });
    this.tables.set(collectionId, checked);
    checked.catch(() => {
      if (this.tables.get(collectionId) === checked) this.tables.delete(collectionId);
    });
    return checked;
  }

  private forget(collectionId: string): void {
    this.tables.delete(collectionId);
    this.writes.delete(collectionId);
    this.ftsReady.delete(collectionId);
  }

  private async wrote(collectionId: string, table: lancedb.Table): Promise<void> {
    const writes = (this.writes.get(collectionId) ?? 0) + 1;
    this.writes.set(collectionId, writes);
    if (writes >= OPTIMIZE_EVERY_WRITES) await this.compact(collectionId, table);
  }

  /** Compacts fragments, folds new rows into the full-text indexes and prunes old versions. */
  private async compact(collectionId: string, table: lancedb.Table): Promise<void> {
    this.writes.set(collectionId, 0);
    await table.optimize({ cleanupOlderThan: new Date(Date.now() - KEEP_VERSIONS_MS) });
  }

  /** Serializes writes to one collection's table within this process. */
  private exclusive<T>(collectionId: string, run: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const previous = this.locks.get(collectionId) ?? Promise.resolve();
    const next = previous.then(run, run);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(collectionId, settled);
    void settled.then(() => {
      if (this.locks.get(collectionId) === settled) this.locks.delete(collectionId);
    });
    return next;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('LanceDbVectorIndex is closed');
  }

}

// ---------------------------------------------------------------- results

function toChunk(row: Row): ScoredChunk['chunk'] {
  const date = (value: unknown) => (value === null || value === undefined ? null : new Date(Number(value)));
  return {
    chunkId: String(row.chunk_id),
    sourceConnectionId: String(row.source_connection_id),
    entityId: String(row.entity_id),
    chunkIndex: Number(row.chunk_index),
    name: String(row.name),
    text: String(row.text),
    entityType: String(row.entity_type),
    sourceName: String(row.source_name),
    breadcrumbs: JSON.parse(String(row.breadcrumbs)) as ScoredChunk['chunk']['breadcrumbs'],
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    webUrl: String(row.web_url),
    url: row.url === null || row.url === undefined ? null : String(row.url),
    syncId: String(row.sync_id),
    syncJobId: String(row.sync_job_id),
    rawSourceFields: JSON.parse(String(row.raw_source_fields)) as Record<string, unknown>,
    access: JSON.parse(String(row.access)) as ScoredChunk['chunk']['access'],
  };
}

/** Best first; equal scores in chunk id order, so pages are deterministic. */
function sortRanked(list: Ranked[]): Ranked[] {
  return list.sort((a, b) => b.score - a.score || compare(String(a.row.chunk_id), String(b.row.chunk_id)));
}

/** Containers count at CONTAINER_WEIGHT (see there). */
function containerWeight(row: Row): number {
  return isContainerType(String(row.entity_type)) ? CONTAINER_WEIGHT : 1;
}

/** LanceDB's "table is gone" errors (native errors are not `instanceof Error` inside Jest's VM realm). */
function isNotFound(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /not found|no such file|does not exist/i.test(message);
}
