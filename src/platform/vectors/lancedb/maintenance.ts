import * as lancedb from '@lancedb/lancedb';

/**
 * Writes (adds and deletes: each a fragment or a deletion file, and a version) after which a table nobody
 * searches is compacted, once the rows added since its last compaction are at least as many as it held then
 * (GROWTH_BEFORE_COMPACTION); after COMPACT_AFTER_WRITES_AT_MOST whatever was added. A compaction costs the
 * whole table, not what was added (~13 µs a row of the table): its rewrite of fragments is the rows added
 * since the last one (LanceDB never merges fragments its indexes cover differently: a 1,000,000-entity sync's
 * compactions each replaced the 20–28 fragments written since by one or two), but folding them into the
 * indexes grows with the table (the full-text index's share is most of it, see SCANNED_ROWS_PER_TABLE_ROW);
 * shards bound the table (DEFAULT_SHARD_ROWS in lancedb-index.ts). So with a fixed count (every 20 writes until
 * this), a 100,000-entity sync in 2,000-entity batches compacted at 40,000 and 80,000 rows before its final
 * optimize: 4.7 s of upkeep CPU, against 3.3 s for the final optimize alone (bench:sync, the vector index
 * trained in both); a 1,000,000-entity one ~27 times (every 40,000 rows), rewriting ~15 million rows. By growth,
 * the rows rewritten stay within about twice the table's: compactions at ~142,000, ~284,000 and ~568,000 rows of
 * a 1,000,000-entity sync, none before the final optimize of a 100,000-entity one. Nobody searching, unindexed
 * rows cost nothing; searches compact earlier (SEARCHED_COMPACT_AFTER_WRITES, SCANNED_ROWS_PER_TABLE_ROW). The
 * cap bounds the fragments that small writes pile up (a slow source flushing part-filled batches, a run that
 * failed before its final optimize), which every search would read one by one once it came.
 */
const COMPACT_AFTER_WRITES = 64;
const GROWTH_BEFORE_COMPACTION = 1;
const COMPACT_AFTER_WRITES_AT_MOST = 256;
/**
 * A table searched (any strategy) between its writes is compacted after this many writes since its
 * last compaction, whatever its growth (the schedule before growth counted), besides earlier by
 * SCANNED_ROWS_PER_TABLE_ROW: each keyword search scans the rows written since (~9 µs a row), each
 * semantic one every fragment written since (~0.16 ms a fragment), and by growth alone both grew with
 * the table. bench:memory's 1,000,000 entities with a search every 2 s, growth alone: searches during
 * the sync p50 1.6-4.1 s, p95 4.1-7.1 s by 450,000 entities. Searches while nothing is waiting (between
 * syncs) do not count: they scan nothing unindexed.
 */
const SEARCHED_COMPACT_AFTER_WRITES = 20;
/**
 * A table searched while rows written to it wait for the full-text index is compacted early, in the
 * background of the keyword search that tips it, once the keyword searches since its last compaction
 * have scanned this many unindexed rows per row of the table. Rows not yet
 * in the full-text index are scanned by every keyword search (LanceDB tokenizes each one's text per
 * query: ~9 µs a row, one thread, whether they sit in one fragment or many), so a search during a
 * sync cost ~10 ms per 1,000 rows written since the last compaction: 212 ms with the 22,200 rows of
 * bench:sync's 20,000 entities, all unindexed (against ~5 ms indexed). Folding them in costs
 * optimize() ~13 µs per row of the table (compaction ~4, the full-text index's update ~9: both
 * rewrite the whole table's share, whatever was added; 300 ms at 22,000 rows), which no cheaper call
 * of LanceDB 0.39's API avoids. Compacting once the searches' scans have cost what a compaction
 * costs (rent or buy) keeps their sum within twice the best schedule in hindsight, whatever the
 * search rate: with nobody searching, nothing changes (COMPACT_AFTER_WRITES); the more
 * searches, the fewer rows each one scans. The searches, not the writes, tip it: rows whose writes
 * stopped before their run's final optimize (a cancelled run) were scanned by every search until the
 * connection's next run, as no write came to compact them. The count is this process's: a separate
 * worker writing (`catchment worker` beside `catchment serve`) does not see the API's searches and
 * compacts by growth alone (COMPACT_AFTER_WRITES), so searches there scan more (the servers
 * deployment, with Weaviate, has no such split); and the API process never compacts a table it did
 * not write, which would race that worker's writes.
 *
 * 1.4 is the two costs' ratio (13 / 9). Lab, 111,000 chunks written in 2,000-row adds through this
 * class, hybrid searches between the adds, CPU: with 3 searches an add (1.4 / 0.5 / never early),
 * 56 / 35 / 183 ms a search, writes with their compactions 9.0 / 10.7 / 4.5 s; with one search every
 * 2 adds, 134 / 97 / 191 ms a search, writes 4.6 / 7.9 / 4.2 s. 0.5 buys lower latency with more
 * compaction than the searches it saves when searches are few.
 */
const SCANNED_ROWS_PER_TABLE_ROW = 1.4;
/**
 * Unindexed rows an unfiltered keyword search scans at most: while this process has writes waiting
 * for a compaction (a sync under way here, or cut short) and more rows than this wait for the
 * full-text index (whoever wrote them), it reads the index alone (LanceDB's fast search). Rows written
 * since the last compaction are then found by semantic search (which scans them, ~0.16 ms a fragment)
 * and by keyword search once a compaction folds them in: no time bound, the compaction the searches
 * bring forward (SCANNED_ROWS_PER_TABLE_ROW: the skipped scan still counts), the 20th write or the
 * run's final optimize. That includes the new chunks of entities the sync updated (their old ones are
 * deleted first). Only while the index holds at least as many rows as wait for it: a table most of
 * whose rows wait (its first sync, or one bulk write, before any compaction) is scanned whole. A
 * filtered search scans as before (its filter may keep just the rows waiting, a connection being
 * synced); so does every search of a process that never writes (`catchment serve` beside a separate
 * `catchment worker`). Scanning costs ~9 µs a row on one thread: 10,000 rows ~90 ms, where
 * bench:sync's searches while 100,000 entities synced (2-core host, a search every 200 ms) took
 * keyword p50 918 ms, hybrid 1,228 ms, against 111 ms for a collection not being written. Not
 * counting the skipped scans (fewer compactions) was measured and not kept: bench:memory's sync
 * while searching 3,950 / 4,458 against 3,939 / 3,446 entities/s, but searches during it p50
 * 259–371 against 170–233 ms (the compactions came later and larger), and keyword search found the rows later.
 */
export const KEYWORD_SCAN_MAX_UNINDEXED_ROWS = 10_000;
/** Versions older than this are removed when a table is optimized (the default, 7 days, keeps every compacted file). */
const KEEP_VERSIONS_MS = 10 * 60 * 1000;
/** Partitions of every index made before their count was recorded, and the fewest made since. */
const UNNAMED_INDEX_PARTITIONS = 64;
/**
 * IVF partitions of a vector index trained on `rows` rows: about √rows / 5, a power of two, at least
 * 64 (64 up to ~200,000 rows, 128 to ~820,000, 256 to ~3.3 million). 64 at 100,000 chunks was chosen
 * with the probes (ivfProbesFor in rankings.ts): 256 there gave the same recall for ~1 ms less per
 * search but slowed a 100,000-entity sync by a fifth (k-means training and placing every row cost
 * with the centroids). An index kept at 64 as a table grew to 1,000,000 rows (bench lab: 2,000-row
 * adds with this upkeep) held ~15,000 rows per partition; LanceDB's compaction split some of them
 * (64 became 76–100) and then warned "partition index is N but the number of partitions is M, skip
 * loading it" 180 times from 500,000 rows on. Retrained as the table grows, it did not warn once, and
 * adding 500,000 → 1,000,000 rows took 155 s of CPU against 190. Why it warns: each optimize()
 * rebalances the index, joining partitions under 1,024 rows and splitting those over 16,384 (25 % and
 * 4 × IVF_FLAT's target of 4,096, counted over all segments), and the segment it writes then has
 * another partition count than the older ones; reading those, Lance skips the numbers they lack,
 * which its code calls safe (lance issue 5312). bench:memory's 1,000,000 entities warned 56 times:
 * 128 partitions trained at ~205,000 rows (1,600 on average) were joined to 122, then split by four
 * per compaction to 138 by ~780,000; 256 trained at ~819,000 were joined to 255, then split again.
 */
export function ivfPartitionsFor(rows: number): number {
  return Math.max(UNNAMED_INDEX_PARTITIONS, 2 ** Math.round(Math.log2(Math.sqrt(Math.max(1, rows)) / 5)));
}

/**
 * Segments a vector index may hold at a sync's end (`upkeepVectorIndex` with `atRest`) before it is
 * trained again as one: one, and one more per 250,000 rows. LanceDB's optimize() folds new rows
 * into a vector index as a segment of their own and never merges segments (0.39's Node API passes no
 * `num_indices_to_merge`; it merges only when it splits a partition): 6 adds of 2,000 rows to a
 * 100,000-row table, each optimized, left 7 segments. A search probes every segment, so each costs
 * ~0.5 ms of CPU per semantic search (bench:search's 100,000 chunks, 40 probes: 2.3 ms with one
 * segment, 2.9 with the two a sync left, 5.6 with seven), and a collection synced again and again
 * would slow with every sync that added rows. Merging them means training the index again: 0.6 s of
 * CPU at 100,000 rows, ~12 s at 1,000,000, where the extra segments cost little beside a search's
 * ~60 ms: hence more allowed as the table grows.
 */
export function vectorIndexSegmentsAllowed(rows: number): number {
  return 1 + Math.floor(rows / 250_000);
}
/**
 * At a sync's end, segments beyond vectorIndexSegmentsAllowed are merged only when the rows added since
 * the index was trained are at least this share of the table, or when there are more than
 * EXTRA_SEGMENTS_TOLERATED of them: retraining costs the whole table (2.5–2.8 s of CPU at 100,000
 * rows on a loaded host) whatever was added, so a push of one entity must not pay it, while a few
 * small segments cost ~0.5 ms per semantic search each.
 */
const RETRAIN_GROWTH_SHARE = 0.1;
const EXTRA_SEGMENTS_TOLERATED = 3;
/**
 * Segments a vector index may hold during a run (the compactions of COMPACT_AFTER_WRITES)
 * before it is trained again: a bound, not a target, so that a long sync does not train the index
 * again every few compactions (a 1,000,000-row sync would pay ~40 s of CPU more merging at every
 * compaction past one segment per 250,000 rows); its end merges them (vectorIndexSegmentsAllowed).
 */
const MAX_SEGMENTS_DURING_RUN = 16;

/**
 * Rounds of k-means that train a vector index's centroids (LanceDB's default: 50). Ten cost half the
 * CPU for the same recall: a lab table of the word-vector embedder's vectors, 200 queries against the
 * exact scan, two trainings each, recall@10 at the probes searches used then (ivfProbesFor's square-root rule,
 * 48 of 64, 96 of 256): 111,000 stub
 * chunks, 64 partitions, 1.41 → 0.70 s, recall 0.9945 → 0.9920; 111,000 Zipf-vocabulary chunks (bench
 * search-corpus.ts), 1.15 / 1.22 → 0.71 / 0.80 s, recall 0.9565 / 0.9600 → 0.9605 / 0.9630; 300,000
 * Zipf chunks, 256 partitions, 11.1 / 10.7 → 6.1 / 5.7 s, recall 0.8725 / 0.8660 → 0.8860 / 0.8595.
 * A sync trains at its compactions and its end, holding the table's write lock: the rows wait.
 */
const KMEANS_ITERATIONS = 10;

/**
 * The vector index's name records its partition count (LanceDB lists an index's name and type, not
 * its partitions), so that searches probe as many as its size asks and upkeep knows when to retrain.
 * Indexes made before this are named `vector_idx` and have 64 partitions.
 */
const VECTOR_INDEX_PREFIX = 'vector_ivf';

/** The partitions of a table's vector index (null when it has none), from its listed indexes. */
export function vectorIndexPartitions(indices: readonly lancedb.IndexConfig[]): number | null {
  const vector = indices.find((index) => index.columns.includes('vector'));
  if (!vector) return null;
  const named = vector.name.startsWith(VECTOR_INDEX_PREFIX) ? Number(vector.name.slice(VECTOR_INDEX_PREFIX.length)) : Number.NaN;
  return Number.isInteger(named) && named > 0 ? named : UNNAMED_INDEX_PARTITIONS;
}

/**
 * The upkeep of chunk tables (each shard of a collection, by its name): full-text indexes (made with the table, or late for older tables),
 * compaction as a table grows (COMPACT_AFTER_WRITES; earlier while keyword searches scan the rows added), and the vector index once a table is large enough,
 * trained again with more partitions as the table grows.
 * Callers hold the table's write lock, except `beforeKeywordSearch`, which takes it through `exclusive`.
 */
export class TableMaintenance {
  private readonly writes = new Map<string, number>();
  /** The rows each table held after this process last compacted it, or when it first wrote to it. */
  private readonly rowsAtCompaction = new Map<string, number>();
  /** Tables searched (any strategy) since their last compaction while writes since it were waiting (SEARCHED_COMPACT_AFTER_WRITES). */
  private readonly searchedWhileWritten = new Set<string>();
  /** The unindexed rows the keyword searches since a table's last compaction scanned (SCANNED_ROWS_PER_TABLE_ROW). */
  private readonly scannedRows = new Map<string, number>();
  /** Each table's rows and the rows its full-text indexes lack, as read at a table version. */
  private readonly unindexed = new Map<string, { version: number; rows: number; unindexed: number; waiting: number }>();
  /** Tables whose compaction a keyword search has queued and that has not started yet. */
  private readonly compactionQueued = new Set<string>();
  /**
   * A mark of each table's last compaction by this process, or of its handle's dropping (`forget`,
   * which keeps it: a number a table): a compaction a search queued that finds the mark moved
   * has nothing to do, or a stale handle.
   */
  private readonly compactionMarks = new Map<string, number>();
  private lastMark = 0;
  /** The version of each table as this process's last optimize (compaction and vector index at rest) left it. */
  private readonly optimizedVersions = new Map<string, number>();
  /** Tables whose full-text indexes are known to exist. */
  private readonly ftsReady = new Set<string>();
  /** The partitions of each table's vector index as last seen, with the table version it was seen at. */
  private readonly partitions = new Map<string, { version: number; partitions: number | null }>();
  /**
   * The rows each table had when this process last trained its vector index, or first saw it (an index
   * trained before a restart or by another process counts from there: its growth before is unknown).
   */
  private readonly trainedRows = new Map<string, number>();

  constructor(
    private readonly vectorIndexMinRows: number,
    private readonly partitionsFor: (rows: number) => number,
    private readonly exclusive: <T>(tableName: string, run: () => Promise<T>) => Promise<T>,
    /** A compaction a search queued failed (best effort: the searches queue it again, see beforeKeywordSearch). */
    private readonly onUpkeepError: (tableName: string, error: unknown) => void,
    private readonly keywordScanMaxUnindexedRows = KEYWORD_SCAN_MAX_UNINDEXED_ROWS,
  ) {}

  /**
   * Counts a write; one that grew the table enough since its last compaction (COMPACT_AFTER_WRITES; a
   * table searched since then, SEARCHED_COMPACT_AFTER_WRITES) compacts the table (keyword searches
   * compact it earlier: SCANNED_ROWS_PER_TABLE_ROW) and, once it is large enough, gives it its vector index. A long sync thus trains the index on
   * its first rows mid-run and later compactions fold rows in, instead of the run's final optimize
   * training on all of them at once (300,000 entities, compacting every 20 writes then: the whole sync
   * ~20 % faster, its peak memory ~200 MiB lower); a sync of fewer than COMPACT_AFTER_WRITES writes
   * (~140,000 entities in batches of 2,000) trains it at its end.
   */
  async wrote(tableName: string, table: lancedb.Table): Promise<void> {
    const writes = (this.writes.get(tableName) ?? 0) + 1;
    this.writes.set(tableName, writes);
    if (!this.rowsAtCompaction.has(tableName)) this.rowsAtCompaction.set(tableName, await table.countRows());
    if (!(await this.grewEnough(tableName, table, writes))) return;
    await this.compact(tableName, table);
    await this.upkeepVectorIndex(tableName, table, false);
  }

  /** Whether `writes` since the table's last compaction call for one (COMPACT_AFTER_WRITES; SEARCHED_COMPACT_AFTER_WRITES once searched). */
  private async grewEnough(tableName: string, table: lancedb.Table, writes: number): Promise<boolean> {
    if (writes >= COMPACT_AFTER_WRITES_AT_MOST) return true;
    if (writes >= SEARCHED_COMPACT_AFTER_WRITES && this.searchedWhileWritten.has(tableName)) return true;
    if (writes < COMPACT_AFTER_WRITES) return false;
    const before = this.rowsAtCompaction.get(tableName) ?? 0;
    return (await table.countRows()) - before >= GROWTH_BEFORE_COMPACTION * before;
  }

  /** Compacts fragments, folds new rows into the full-text indexes and prunes old versions. */
  async compact(tableName: string, table: lancedb.Table): Promise<void> {
    await table.optimize({ cleanupOlderThan: new Date(Date.now() - KEEP_VERSIONS_MS) });
    // Counted only once it is done: a failed one leaves the writes and searches that called for it
    // counted, so the next write or search calls for it again. (Searches during it scanned rows it folded in.)
    this.writes.set(tableName, 0);
    this.scannedRows.delete(tableName);
    this.searchedWhileWritten.delete(tableName);
    this.compactionMarks.set(tableName, ++this.lastMark);
    this.rowsAtCompaction.set(tableName, await table.countRows());
  }

  /**
   * Whether this process's last optimize of the table left it at `version`: then an optimize has
   * nothing to do (a collection's full shards, at the end of a sync that wrote its last). Not after
   * a compaction alone (a write's or a search's, which leaves the vector index as a run does), nor for
   * a table it knows nothing of (a restart).
   */
  optimizedAt(tableName: string, version: number): boolean {
    return this.optimizedVersions.get(tableName) === version;
  }

  /** The table is optimized (compacted, its vector index at rest) at `version`. */
  optimized(tableName: string, version: number): void {
    this.optimizedVersions.set(tableName, version);
  }

  /**
   * A large table gets its IVF index; later optimize() calls (compaction) fold new rows into it, and
   * rows not yet indexed are still searched exactly, so nothing is missed meanwhile. Compaction places
   * new rows among the centroids trained before them, as a segment of their own: once the table has
   * grown enough that `partitionsFor` (`ivfPartitionsFor` by default) asks for more partitions (about
   * four-fold), or it holds more segments than allowed (vectorIndexSegmentsAllowed at rest, after a
   * sync, once enough was added: RETRAIN_GROWTH_SHARE; MAX_SEGMENTS_DURING_RUN otherwise), the index is
   * trained again on all rows, replacing the
   * old one (searches use the old one until the new one is committed; training 256 partitions on
   * 1,000,000 rows took 12 s of CPU). Checked at compactions only (COMPACT_AFTER_WRITES or
   * earlier while searched, and at a sync's end), never per write.
   */
  async upkeepVectorIndex(tableName: string, table: lancedb.Table, atRest: boolean): Promise<void> {
    const rows = await table.countRows();
    const indices = await table.listIndices();
    const current = indices.find((index) => index.columns.includes('vector'));
    if (!current && rows < this.vectorIndexMinRows) return;
    const partitions = current ? vectorIndexPartitions(indices)! : 0;
    const wanted = Math.max(partitions, this.partitionsFor(rows));
    if (current && wanted === partitions && !(await this.tooManySegments(tableName, table, current.name, rows, atRest))) return;
    const name = `${VECTOR_INDEX_PREFIX}${wanted}`;
    await table.createIndex('vector', { config: lancedb.Index.ivfFlat({ numPartitions: wanted, distanceType: 'cosine', maxIterations: KMEANS_ITERATIONS }), name, replace: true });
    if (current && current.name !== name) await table.dropIndex(current.name);
    this.partitions.delete(tableName);
    this.trainedRows.set(tableName, rows);
  }

  /** Whether the vector index `name` holds more segments than it should (see vectorIndexSegmentsAllowed and RETRAIN_GROWTH_SHARE). */
  private async tooManySegments(tableName: string, table: lancedb.Table, name: string, rows: number, atRest: boolean): Promise<boolean> {
    const segments = (await table.indexStats(name))?.numIndices ?? 1;
    if (!atRest) return segments > MAX_SEGMENTS_DURING_RUN;
    const allowed = vectorIndexSegmentsAllowed(rows);
    if (segments <= allowed) return false;
    if (segments > allowed + EXTRA_SEGMENTS_TOLERATED) return true;
    if (!this.trainedRows.has(tableName)) this.trainedRows.set(tableName, rows);
    return rows - this.trainedRows.get(tableName)! >= RETRAIN_GROWTH_SHARE * rows;
  }

  /**
   * The partitions of the table's vector index (null without one), from which a search chooses its
   * probes. Listed again only when the table's `version` (the caller's read of it) changed: another
   * process may have retrained it, and a listing costs ~0.25 ms.
   */
  async vectorPartitions(tableName: string, table: lancedb.Table, version: number): Promise<number | null> {
    const seen = this.partitions.get(tableName);
    if (seen?.version === version) return seen.partitions;
    const partitions = vectorIndexPartitions(await table.listIndices());
    this.partitions.set(tableName, { version, partitions });
    return partitions;
  }

  /**
   * Run before every search: one while writes since the table's last compaction wait brings the next
   * compaction forward (SEARCHED_COMPACT_AFTER_WRITES).
   */
  searched(tableName: string): void {
    if ((this.writes.get(tableName) ?? 0) > 0) this.searchedWhileWritten.add(tableName);
  }

  /**
   * Run before every keyword search of the table at `version`: makes sure the table has its full-text
   * indexes (they are created with the table; tables made without them get them here) and, while
   * writes of this process since its last compaction wait, counts the unindexed rows the search scans;
   * the search whose scans tip SCANNED_ROWS_PER_TABLE_ROW queues the table's compaction behind the
   * writes in progress and goes on (it scans the rows once more; the searches after it do not).
   * Whether the search reads the full-text index alone: unfiltered (a filter may keep just the rows
   * waiting, a connection being synced), while more rows than KEYWORD_SCAN_MAX_UNINDEXED_ROWS wait
   * for it, and no more than it holds.
   */
  async beforeKeywordSearch(tableName: string, table: lancedb.Table, columns: readonly string[], version: number, filtered: boolean): Promise<{ indexedOnly: boolean }> {
    if (!this.ftsReady.has(tableName)) await this.exclusive(tableName, () => this.createFullText(tableName, table, columns));
    if ((this.writes.get(tableName) ?? 0) === 0) return { indexedOnly: false };
    const { rows, unindexed, waiting } = await this.unindexedRows(tableName, table, version);
    const scanned = (this.scannedRows.get(tableName) ?? 0) + unindexed;
    this.scannedRows.set(tableName, scanned);
    const reach = { indexedOnly: !filtered && waiting > this.keywordScanMaxUnindexedRows && waiting <= rows - waiting };
    if (unindexed === 0 || scanned < SCANNED_ROWS_PER_TABLE_ROW * rows || this.compactionQueued.has(tableName)) return reach;
    const markBefore = this.compactionMarks.get(tableName);
    let queued: Promise<void>;
    try {
      queued = this.exclusive(tableName, async () => {
        this.compactionQueued.delete(tableName);
        // A compaction since it was queued (a write's, an optimize) folded the rows in, or the table was dropped.
        if (this.compactionMarks.get(tableName) !== markBefore) return;
        await this.compact(tableName, table);
        await this.upkeepVectorIndex(tableName, table, false);
      });
    } catch {
      return reach; // the index is closing: no more upkeep
    }
    this.compactionQueued.add(tableName);
    queued.catch((error: unknown) => {
      this.compactionQueued.delete(tableName);
      // The searches call for it again once they have scanned as much again (not at every search while it fails).
      this.scannedRows.set(tableName, 0);
      this.onUpkeepError(tableName, error);
    });
    return reach;
  }

  /**
   * The table's rows, those its full-text indexes lack (summed over them: each is scanned) and the
   * rows waiting for one (the most any lacks), read once per table version (~0.1 ms).
   */
  private async unindexedRows(tableName: string, table: lancedb.Table, version: number): Promise<{ rows: number; unindexed: number; waiting: number }> {
    const seen = this.unindexed.get(tableName);
    if (seen?.version === version) return seen;
    const fullText = (await table.listIndices()).filter((index) => index.indexType === 'FTS');
    const stats = await Promise.all(fullText.map((index) => table.indexStats(index.name)));
    const lacking = stats.map((stat) => stat?.numUnindexedRows ?? 0);
    const read = { version, rows: await table.countRows(), unindexed: lacking.reduce((sum, rows) => sum + rows, 0), waiting: Math.max(0, ...lacking) };
    this.unindexed.set(tableName, read);
    return read;
  }

  /** Creates the full-text indexes (BM25) on `columns` (fullTextColumns of the table's layout) a table lacks; the caller holds its lock. */
  async createFullText(tableName: string, table: lancedb.Table, columns: readonly string[]): Promise<void> {
    const indexed = new Set((await table.listIndices()).filter((index) => index.indexType === 'FTS').flatMap((index) => index.columns));
    for (const column of columns) {
      if (!indexed.has(column)) await table.createIndex(column, { config: lancedb.Index.fts() });
    }
    this.ftsReady.add(tableName);
  }

  /** The table is gone: what was known of it goes too, and its compaction mark moves (compactions queued for it do nothing). */
  forget(tableName: string): void {
    this.writes.delete(tableName);
    this.optimizedVersions.delete(tableName);
    this.rowsAtCompaction.delete(tableName);
    this.scannedRows.delete(tableName);
    this.unindexed.delete(tableName);
    this.compactionQueued.delete(tableName);
    this.compactionMarks.set(tableName, ++this.lastMark);
    this.searchedWhileWritten.delete(tableName);
    this.ftsReady.delete(tableName);
    this.partitions.delete(tableName);
    this.trainedRows.delete(tableName);
  }
}
