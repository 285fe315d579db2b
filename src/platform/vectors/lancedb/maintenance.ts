import * as lancedb from '@lancedb/lancedb';

/** Each add() is a fragment and a version: compact a table after this many writes (adds and deletes). */
const OPTIMIZE_EVERY_WRITES = 20;
/** Versions older than this are removed when a table is optimized (the default, 7 days, keeps every compacted file). */
const KEEP_VERSIONS_MS = 10 * 60 * 1000;
/** Columns with a full-text index (BM25): what keyword search matches. */
export const FTS_COLUMNS = ['text', 'name'] as const;
/**
 * IVF partitions of the vector index. How many a query probes is the search's business (see
 * IVF_PROBES in rankings.ts); the two were chosen together.
 */
export const IVF_PARTITIONS = 64;

/**
 * The upkeep of chunk tables: full-text indexes (made with the table, or late for older tables),
 * compaction every OPTIMIZE_EVERY_WRITES writes, and the vector index once a table is large enough.
 * Callers hold the table's write lock, except `ensureFullText`, which takes it through `exclusive`.
 */
export class TableMaintenance {
  private readonly writes = new Map<string, number>();
  /** Tables whose full-text indexes are known to exist. */
  private readonly ftsReady = new Set<string>();
  /** Tables known to have their vector index: later compactions need not list the indexes again. */
  private readonly vectorReady = new Set<string>();

  constructor(
    private readonly vectorIndexMinRows: number,
    private readonly exclusive: <T>(collectionId: string, run: () => Promise<T>) => Promise<T>,
  ) {}

  /**
   * Counts a write; every OPTIMIZE_EVERY_WRITES-th compacts the table and, once it is large enough,
   * gives it its vector index. A long sync thus trains the index on its first rows mid-run and later
   * compactions fold rows in, instead of the run's final optimize training on all of them at once
   * (300,000 entities: the whole sync ~20 % faster, its peak memory ~200 MiB lower).
   */
  async wrote(collectionId: string, table: lancedb.Table): Promise<void> {
    const writes = (this.writes.get(collectionId) ?? 0) + 1;
    this.writes.set(collectionId, writes);
    if (writes < OPTIMIZE_EVERY_WRITES) return;
    await this.compact(collectionId, table);
    await this.ensureVectorIndex(collectionId, table);
  }

  /** Compacts fragments, folds new rows into the full-text indexes and prunes old versions. */
  async compact(collectionId: string, table: lancedb.Table): Promise<void> {
    this.writes.set(collectionId, 0);
    await table.optimize({ cleanupOlderThan: new Date(Date.now() - KEEP_VERSIONS_MS) });
  }

  /**
   * A large table gets its IVF index once; later optimize() calls (compaction) fold new rows into it,
   * and rows not yet indexed are still searched exactly, so nothing is missed meanwhile.
   */
  async ensureVectorIndex(collectionId: string, table: lancedb.Table): Promise<void> {
    if (this.vectorReady.has(collectionId)) return;
    if (!(await table.listIndices()).some((index) => index.columns.includes('vector'))) {
      if ((await table.countRows()) < this.vectorIndexMinRows) return;
      await table.createIndex('vector', { config: lancedb.Index.ivfFlat({ numPartitions: IVF_PARTITIONS, distanceType: 'cosine' }) });
    }
    this.vectorReady.add(collectionId);
  }

  /** Full-text indexes are created with the table; tables made without them get them here. */
  async ensureFullText(collectionId: string, table: lancedb.Table): Promise<void> {
    if (this.ftsReady.has(collectionId)) return;
    await this.exclusive(collectionId, () => this.createFullText(collectionId, table));
  }

  /** Creates the full-text indexes a table lacks (the caller holds its lock). */
  async createFullText(collectionId: string, table: lancedb.Table): Promise<void> {
    const indexed = new Set((await table.listIndices()).filter((index) => index.indexType === 'FTS').flatMap((index) => index.columns));
    for (const column of FTS_COLUMNS) {
      if (!indexed.has(column)) await table.createIndex(column, { config: lancedb.Index.fts() });
    }
    this.ftsReady.add(collectionId);
  }

  /** The collection's table is gone: what was known of it goes too. */
  forget(collectionId: string): void {
    this.writes.delete(collectionId);
    this.ftsReady.delete(collectionId);
    this.vectorReady.delete(collectionId);
  }
}
