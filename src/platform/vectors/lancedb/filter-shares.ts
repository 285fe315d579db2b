import type * as lancedb from '@lancedb/lancedb';

/**
 * A filtered semantic search keeps the IVF index when its filter keeps at least this share of the
 * table's rows; below it the search is exact. The IVF index probes some partitions, and a selective
 * filter's few matches may all lie outside them; a filter keeping most rows (the live connections'
 * sync ids that searches add while a deleted connection's chunks linger, a filter on a common source
 * or type) leaves the probed partitions as full of candidates as no filter does. bench:search's
 * 100,000 chunks, a sync_id filter keeping every row, depth 200: 9.0 ms of CPU through the index (40
 * probes) against 39.3 ms exact; counting the filter's rows costs 2.6 ms, once per table version.
 */
export const IVF_FILTER_MIN_SHARE = 0.5;
/** Filters remembered per table version: a search's filter is seldom one of more. */
const MAX_FILTERS = 64;

/**
 * A table's rows and the share of them a filter keeps, counted once per table version (the caller's
 * read of it): a version's rows never change.
 */
export class FilterShares {
  private readonly tables = new Map<string, { version: number; rows: number; shares: Map<string, number> }>();

  /** The table's rows at `version` (searches skip empty shards by it: a countRows per search was a native round trip before the ranking). */
  async rows(tableName: string, table: lancedb.Table, version: number): Promise<number> {
    return (await this.atVersion(tableName, table, version)).rows;
  }

  async share(tableName: string, table: lancedb.Table, version: number, where: string): Promise<number> {
    const seen = await this.atVersion(tableName, table, version);
    let share = seen.shares.get(where);
    if (share === undefined) {
      share = seen.rows === 0 ? 0 : (await table.countRows(where)) / seen.rows;
      if (seen.shares.size >= MAX_FILTERS) seen.shares.clear();
      seen.shares.set(where, share);
    }
    return share;
  }

  private async atVersion(tableName: string, table: lancedb.Table, version: number) {
    let seen = this.tables.get(tableName);
    if (seen?.version !== version) {
      seen = { version, rows: await table.countRows(), shares: new Map<string, number>() };
      this.tables.set(tableName, seen);
    }
    return seen;
  }

  /** The table's handle was dropped (its table deleted, or gone): what was counted of it goes too. */
  forget(tableName: string): void {
    this.tables.delete(tableName);
  }
}
