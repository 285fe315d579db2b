import * as lancedb from '@lancedb/lancedb';

/** How the LanceDB connection of an index is opened: staleness and the memory its caches may hold. */
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
   * Rows of a collection's shard before its writes go to a new one (default DEFAULT_SHARD_ROWS in
   * lancedb-index.ts): bounds the upkeep of every table, which grows with the table. Every process
   * writing to a data directory must use the same value.
   */
  shardRows?: number;
  /**
   * IVF partitions of a vector index trained on a table of so many rows (default `ivfPartitionsFor`
   * in maintenance.ts); the index is trained again when this asks for more than it has. Tests make
   * it step at small sizes.
   */
  ivfPartitionsFor?: (rows: number) => number;
  /**
   * Bytes of index data (IVF partitions, full-text posting lists) LanceDB keeps in memory across
   * queries. Its default, 6 GiB, let a server's memory grow with every table it searched.
   */
  indexCacheBytes?: number;
  /** Bytes of file metadata and schemas kept in memory (LanceDB's default: 1 GiB). */
  metadataCacheBytes?: number;
  /**
   * IVF partitions a semantic search probes of an index of so many (default `ivfProbesFor` in
   * rankings.ts): fewer is faster and misses more of the exact nearest. All of them is the exact
   * scan, which benchmarks measure recall against.
   */
  ivfProbes?: (partitions: number) => number;
  /**
   * Rows not yet in a table's full-text index above which its unfiltered keyword searches read the
   * index alone, while this process has writes to it waiting for a compaction (default
   * KEYWORD_SCAN_MAX_UNINDEXED_ROWS in maintenance.ts). Tests make it small.
   */
  keywordScanMaxUnindexedRows?: number;
  /**
   * Told when upkeep running in the background fails: a compaction a keyword search queued (see
   * SCANNED_ROWS_PER_TABLE_ROW in maintenance.ts). Nothing is lost: the searches queue it again once
   * they have scanned as much again, and the table's writes count on towards their own compaction
   * and a run's end optimizes it. Default: nothing.
   */
  onUpkeepError?: (collectionId: string, error: unknown) => void;
}

/** Room for the indexes of 100,000 chunks (IVF_FLAT vectors ~20 MB at half precision, ~40 MB in tables made with single; full-text postings), a fraction of LanceDB's defaults. */
export const DEFAULT_INDEX_CACHE_BYTES = 128 * 1024 * 1024;
export const DEFAULT_METADATA_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Settings of Lance's native code that bound the memory of a table's upkeep. Every optimize (as a
 * sync grows a table and at its end) compacts the fragments written since the last and folds their
 * rows into the full-text index, whose cost grows with the table (LanceDB 0.39's Node API passes no
 * compaction or index options): by default the index is built in one partition of
 * up to 4 GiB, held whole while it is written. In partitions of 64 MiB (LANCE_FTS_PARTITION_SIZE,
 * uncompressed) it is written one at a time. Fresh process, a copy of a 600,000-chunk table (stub
 * entities) given 40,000 rows in 20 adds, peak RSS over optimize() without / with a vector index:
 * +720 → +527 MiB, +589 → +520; building the index +120–140 → +40–50 MiB (3 partitions at 600,000
 * rows, 1 at 100,000 chunks). Keyword search on those 600,000 rows: p50 1.4 / 1.5 ms, CPU 4.2 / 4.1 ms
 * a query. (LANCE_FTS_TARGET_SIZE, set here at first for merged partitions, is not read by
 * the 0.39 binary.)
 * Not set, though they bound the compaction's own reads: LANCE_DEFAULT_FRAGMENT_READAHEAD=1 (+413 →
 * +241 MiB) and LANCE_DEFAULT_BATCH_SIZE=1024 (→ +160), as every search reads with them too
 * (bench:search, 100,000 chunks, raw CPU a query: 6.5–7.7 ms without, 7.9–8.4 with both, 6.9–8.6
 * with the read-ahead alone).
 * Lance reads each once, at its first use in the process, so they are set before the first
 * connection; a value the environment already gives (an operator's) is kept, once checked: Lance
 * parses it in native code and aborts the process on a malformed one.
 */
export const NATIVE_MEMORY_SETTINGS: Readonly<Record<string, string>> = {
  LANCE_FTS_PARTITION_SIZE: '64',
};

/**
 * Sets each of NATIVE_MEMORY_SETTINGS the environment lacks (Node's process.env writes the process's
 * own environment, where Lance reads it); throws on a value given that is not a positive whole number
 * of MiB.
 */
export function applyNativeMemorySettings(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(NATIVE_MEMORY_SETTINGS)) {
    const given = env[name];
    if (given !== undefined && !/^[1-9][0-9]{0,5}$/.test(given)) throw new Error(`${name} must be a positive whole number of MiB, not ${JSON.stringify(given)}`);
    env[name] ??= value;
  }
}

/** A connection to the LanceDB directory, its caches in one session capped as the options say. */
export async function connectLanceDb(directory: string, options: LanceDbVectorIndexOptions): Promise<{ db: lancedb.Connection; session: lancedb.Session }> {
  applyNativeMemorySettings();
  const session = new lancedb.Session(BigInt(options.indexCacheBytes ?? DEFAULT_INDEX_CACHE_BYTES), BigInt(options.metadataCacheBytes ?? DEFAULT_METADATA_CACHE_BYTES));
  // The session goes in the options object: `connect(uri, options, session)` ignores its third argument
  // (LanceDB 0.39), which left the caches at their defaults.
  const db = await lancedb.connect({ uri: directory, readConsistencyInterval: options.readConsistencyIntervalSeconds ?? 0, session });
  return { db, session };
}
