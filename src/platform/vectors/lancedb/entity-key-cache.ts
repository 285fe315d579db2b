import type * as lancedb from '@lancedb/lancedb';
import { ENTITY_KEY_COLUMN } from './arrow.js';

/**
 * The entity keys of a table's rows by row id, held in memory (8 bytes a row: 0.8 MB at 100,000
 * chunks), so that a search's candidate searches read no column at all: each one's take of the entity
 * key for its 200 candidates cost ~0.5–1.5 ms of CPU (bench:search's 100,000 chunks, semantic and
 * keyword alike), three a hybrid search.
 *
 * A row id is its fragment's id (high 32 bits) and its offset in the fragment (low 32 bits), and a
 * fragment's rows never change: writes add fragments, deletions mark rows of a fragment deleted (a
 * search never lists them), and compaction writes new fragments under new ids. So the keys of a
 * fragment, once read, stay right for as long as the fragment is searched; a fragment a search meets
 * for the first time is read whole (~0.3 ms per 1,000 rows, once). Fragments compacted away are
 * dropped when the cache holds more than twice the table's rows.
 *
 * Fragment ids are unique within one table, not across a table dropped and made again under the same
 * name: another process (`catchment worker` beside `catchment serve`) re-embedding a collection does
 * that, and this process learns of it only as the table's version going back (a new table starts at
 * version 1). A lower version than the highest seen starts the cache again.
 */
export class EntityKeyCache {
  /** Per table (by name): its fragments' keys. */
  private readonly tables = new Map<string, CachedTable>();

  /**
   * The entity keys of these row ids (as a search of `table` at `version`, its version when the
   * search began, returned them), in their order. Null
   * when one is not known: a row deleted before its fragment was read (a search of an older version,
   * while a sync deletes); the caller then reads the column in its searches.
   */
  async keysOf(tableName: string, table: lancedb.Table, version: number, rowIds: ArrayLike<bigint>): Promise<BigInt64Array | null> {
    let cached = this.tables.get(tableName);
    if (!cached || cached.rows > 2 * cached.tableRows || version < cached.version) {
      // New, holding mostly fragments compacted away, or of a table made again: start again.
      cached = { fragments: new Map(), rows: 0, tableRows: cached?.tableRows ?? 0, version };
      this.tables.set(tableName, cached);
    }
    cached.version = Math.max(cached.version, version);
    const fragmentOf = new Int32Array(rowIds.length);
    const offsetOf = new Int32Array(rowIds.length);
    const wanted = new Set<number>();
    for (let i = 0; i < rowIds.length; i++) {
      const rowId = BigInt.asUintN(64, rowIds[i]!);
      fragmentOf[i] = Number(rowId >> 32n);
      offsetOf[i] = Number(rowId & 0xffffffffn);
      wanted.add(fragmentOf[i]!);
    }
    // The promises are taken before any await: what another search clears or adds meanwhile does not change them.
    const reading = new Map<number, Promise<BigInt64Array>>();
    for (const fragment of wanted) {
      const known = cached.fragments.get(fragment);
      if (known) reading.set(fragment, known);
    }
    const missing = [...wanted].filter((fragment) => !reading.has(fragment));
    if (missing.length > 0) for (const [fragment, keys] of this.load(table, cached, missing)) reading.set(fragment, keys);
    const loaded = new Map<number, BigInt64Array>();
    for (const [fragment, keys] of reading) loaded.set(fragment, await keys);
    const keys = new BigInt64Array(rowIds.length);
    for (let i = 0; i < rowIds.length; i++) {
      const key = loaded.get(fragmentOf[i]!)![offsetOf[i]!];
      if (key === undefined || key === 0n) return null;
      keys[i] = key;
    }
    return keys;
  }

  /** The table's handle was dropped (its table deleted, or gone): its keys go too. */
  forget(tableName: string): void {
    this.tables.delete(tableName);
  }

  /**
   * Starts reading the entity keys of whole fragments, one query for all of them, and returns (and
   * keeps, for concurrent and later searches) a promise of each fragment's keys. A failed read is not
   * kept: the next search tries again.
   */
  private load(table: lancedb.Table, cached: CachedTable, fragments: number[]): Map<number, Promise<BigInt64Array>> {
    const ranges = fragments.map((fragment) => `(_rowid >= ${BigInt(fragment) << 32n} AND _rowid < ${BigInt(fragment + 1) << 32n})`).join(' OR ');
    const split = table
      .query()
      .where(ranges)
      .select([ENTITY_KEY_COLUMN])
      .withRowId()
      .toArrow()
      .then(async (result) => {
        cached.rows += result.numRows;
        cached.tableRows = await table.countRows();
        // A read of no rows (fragments compacted or deleted away since the search's version) has no columns at all.
        if (result.numRows === 0) return new Map<number, BigInt64Array>();
        return keysByFragment(result.getChild('_rowid')!.toArray() as BigUint64Array, result.getChild(ENTITY_KEY_COLUMN)!.toArray() as BigInt64Array);
      });
    const promises = new Map(fragments.map((fragment) => [fragment, split.then((byFragment) => byFragment.get(fragment) ?? new BigInt64Array(0))]));
    for (const [fragment, keys] of promises) {
      cached.fragments.set(fragment, keys);
      // Whoever awaits it sees the failure; one left unawaited (its search failed on another) is not an unhandled rejection.
      keys.catch(() => {
        if (cached.fragments.get(fragment) === keys) cached.fragments.delete(fragment);
      });
    }
    return promises;
  }
}

interface CachedTable {
  /** Fragment id → the entity key of each offset (0 for rows deleted when it was read). */
  fragments: Map<number, Promise<BigInt64Array>>;
  /** Rows read into `fragments`. */
  rows: number;
  /** The table's rows when a fragment was last read: `rows` beyond twice as many start the cache again. */
  tableRows: number;
  /** The highest table version a lookup met: a lower one is a table made again. */
  version: number;
}

/** Row ids and their entity keys as one array of keys by offset per fragment. */
function keysByFragment(rowIds: BigUint64Array, values: BigInt64Array): Map<number, BigInt64Array> {
  const lengths = new Map<number, number>();
  for (const rowId of rowIds) {
    const fragment = Number(rowId >> 32n);
    lengths.set(fragment, Math.max(lengths.get(fragment) ?? 0, Number(rowId & 0xffffffffn) + 1));
  }
  const byFragment = new Map([...lengths].map(([fragment, length]) => [fragment, new BigInt64Array(length)]));
  for (let i = 0; i < rowIds.length; i++) byFragment.get(Number(rowIds[i]! >> 32n))![Number(rowIds[i]! & 0xffffffffn)] = values[i]!;
  return byFragment;
}
