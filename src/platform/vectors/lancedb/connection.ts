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
}

/** Room for the indexes of 100,000 chunks (IVF_FLAT vectors ~20 MB at half precision, ~40 MB in tables made with single; full-text postings), a fraction of LanceDB's defaults. */
export const DEFAULT_INDEX_CACHE_BYTES = 128 * 1024 * 1024;
export const DEFAULT_METADATA_CACHE_BYTES = 64 * 1024 * 1024;

/** A connection to the LanceDB directory, its caches in one session capped as the options say. */
export async function connectLanceDb(directory: string, options: LanceDbVectorIndexOptions): Promise<{ db: lancedb.Connection; session: lancedb.Session }> {
  const session = new lancedb.Session(BigInt(options.indexCacheBytes ?? DEFAULT_INDEX_CACHE_BYTES), BigInt(options.metadataCacheBytes ?? DEFAULT_METADATA_CACHE_BYTES));
  // The session goes in the options object: `connect(uri, options, session)` ignores its third argument
  // (LanceDB 0.39), which left the caches at their defaults.
  const db = await lancedb.connect({ uri: directory, readConsistencyInterval: options.readConsistencyIntervalSeconds ?? 0, session });
  return { db, session };
}
