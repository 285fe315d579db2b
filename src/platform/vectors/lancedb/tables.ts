import type * as lancedb from '@lancedb/lancedb';
import { FixedSizeList, type Schema } from 'apache-arrow';
import { ValidationError } from '../../../shared/errors.js';
import { TtlCache } from '../../../shared/ttl-cache.js';
import { type ChunkLayout, chunkSchema, CURRENT_LAYOUT, ENTITY_KEY_COLUMN, KEYWORDS_COLUMN, precisionOf } from './arrow.js';

/**
 * How long a listing of a collection's shards is used before it is listed again (~0.1 ms): another
 * process's new shard is seen within it, as the service's other caches of what other processes
 * change (API keys, collection scopes) are.
 */
export const SHARD_LISTING_MS = 1000;
/** The suffix of a shard after the first: `_s<n>` (first tables' names hold no underscore after their prefix). */
const SHARD_SUFFIX = /_s[1-9][0-9]*$/;

/** The shard a table of tableName is of the collection's (0 for its first), or -1 when it is not one of them. */
function shardNumber(collectionId: string, tableName: string): number {
  const first = LanceDbTables.tableName(collectionId);
  if (tableName === first) return 0;
  return tableName.startsWith(first) && SHARD_SUFFIX.test(tableName) && tableName.lastIndexOf('_s') === first.length ? Number(tableName.slice(first.length + 2)) : -1;
}

/**
 * The chunk tables of one LanceDB connection: each collection's chunks in shards of about `shardRows`
 * rows, each a table (`chunks_<collection id without dashes>`, then `…_s1`, `…_s2`: a collection made
 * before shards has its one table as its first). Writes go to the last shard until it holds
 * `shardRows`, then to a new one, so that no table's upkeep (each compaction folds the rows added into
 * its whole full-text index, see maintenance.ts) grows past a shard's, however large the collection;
 * searches read every shard (see chunkRankings). Handles are opened once and checked against the
 * index's schema; a lock serializes writes to a collection inside this process; reads survive a table
 * dropped by another process.
 */
export class LanceDbTables {
  /** Open handles by table name. */
  private readonly handles = new Map<string, Promise<lancedb.Table>>();
  /**
   * Each collection's shards as last listed or made here (table names in shard order), by collection
   * id: a listing read before a shard was made, or before a fresh listing, is used but not kept over it.
   */
  private readonly listings = new TtlCache<string[]>(SHARD_LISTING_MS);
  private readonly locks = new Map<string, Promise<unknown>>();
  /**
   * The name of each open table: LanceDB's `table.name` borrows the native handle, and fails while
   * another call on it (a search's) is under way.
   */
  private readonly names = new WeakMap<lancedb.Table, string>();
  /** The layout of each open table (see `remember`): the current one or one made before it. */
  private readonly layouts = new WeakMap<lancedb.Table, ChunkLayout>();
  /** The columns of each layout met, by its JSON. */
  private readonly schemas = new Map<string, Schema>();
  /** Set once close() begins: no new write or upkeep is taken from then on (reads go on until it ends). */
  private closing: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: lancedb.Connection,
    private readonly dimensions: number,
    /** Rows from which a collection's last shard takes no more writes: the next go to a new one. */
    private readonly shardRows: number,
    /** Called with a table's name when its handle is dropped (its table deleted or gone): state kept beside it goes too. */
    private readonly onForget: (tableName: string) => void,
  ) {}

  /** The table holding a collection's chunks of `shard`. UUIDs lose their dashes; other ids are hex-encoded (injective); shards after the first get `_s<n>`. */
  static tableName(collectionId: string, shard = 0): string {
    const first = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(collectionId)
      ? `chunks_${collectionId.replace(/-/g, '')}`
      : `chunks_h_${Buffer.from(collectionId, 'utf8').toString('hex')}`;
    return shard === 0 ? first : `${first}_s${shard}`;
  }

  /** The collection whose chunks a table of tableName holds (its inverse, for any shard). */
  static collectionIdOf(tableName: string): string {
    const first = tableName.replace(SHARD_SUFFIX, '');
    if (first.startsWith('chunks_h_')) return Buffer.from(first.slice('chunks_h_'.length), 'hex').toString('utf8');
    const hex = first.slice('chunks_'.length);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** Runs a read of a collection's shards (none: `empty`); a table dropped by another process meanwhile is listed again. */
  async read<T>(collectionId: string, empty: T, run: (shards: lancedb.Table[]) => Promise<T>): Promise<T> {
    try {
      const shards = await this.shards(collectionId);
      return shards.length === 0 ? empty : await run(shards);
    } catch (error) {
      // close() closed the handle under this read: say so as every later call does, not as LanceDB's "Table … is closed".
      if (this.closed) throw new Error('LanceDbVectorIndex is closed', { cause: error });
      if (!this.isGone(error)) throw error;
      this.forget(collectionId);
      try {
        const again = await this.shards(collectionId);
        return again.length > 0 ? await run(again) : empty;
      } catch (retryError) {
        // Dropped again under the retry (a collection's shards are dropped one by one): it is gone.
        if (!this.isGone(retryError)) throw retryError;
        return empty;
      }
    }
  }

  /** Whether a read failed because its table is gone (dropped by another process), not for another reason. */
  private isGone(error: unknown): boolean {
    return !this.closed && !(error instanceof ValidationError) && isNotFound(error);
  }

  /**
   * A collection's shards, first to last (none before its first write). Listed while none is known
   * (another process may write the first), and again once the listing is SHARD_LISTING_MS old:
   * another process (`catchment worker` beside `catchment serve`) may have begun the next. (Not by
   * the last shard's rows: deletes take a full shard under `shardRows` again.) `fresh`: listed now
   * (writes, under the collection's lock, reach another process's newest shard).
   */
  async shards(collectionId: string, { fresh = false } = {}): Promise<lancedb.Table[]> {
    this.assertOpen();
    let names: string[];
    if (fresh) {
      names = await this.list(collectionId);
      if (this.keepListing(names, this.listings.peek(collectionId))) this.listings.set(collectionId, names);
      else this.listings.invalidate(collectionId);
    } else {
      names = await this.listings.get(collectionId, () => this.list(collectionId), (listed, replaced) => this.keepListing(listed, replaced));
    }
    return Promise.all(names.map((name) => this.open(name)));
  }

  /**
   * The shard a write of a collection goes to: its last, or a new one once that holds `shardRows`
   * (`created`: the caller gives it its indexes; `filled`: the shard before it, which takes no more
   * writes), from the shards listed now. The caller holds the collection's lock.
   */
  async writeShard(collectionId: string): Promise<{ table: lancedb.Table; created: boolean; filled?: lancedb.Table }> {
    const shards = await this.shards(collectionId, { fresh: true });
    const last = shards.at(-1);
    if (last && (await last.countRows()) < this.shardRows) return { table: last, created: false };
    // After the last one's number: a drop cut short leaves gaps, and a number met again would reopen a full shard.
    const name = LanceDbTables.tableName(collectionId, last ? shardNumber(collectionId, this.nameOf(last)) + 1 : 0);
    const table = await this.remember(name, this.db.createEmptyTable(name, chunkSchema(this.dimensions), { existOk: true }));
    this.listings.set(collectionId, [...shards.map((shard) => this.nameOf(shard)), name]);
    return { table, created: true, filled: last };
  }

  /** The collection's shards' names as the connection lists them now, in shard order. */
  private async list(collectionId: string): Promise<string[]> {
    return (await this.db.tableNames())
      .map((name) => ({ name, shard: shardNumber(collectionId, name) }))
      .filter(({ shard }) => shard >= 0)
      .sort((a, b) => a.shard - b.shard)
      .map(({ name }) => name);
  }

  /**
   * A listing no change overtook, replacing `known`: the shards it no longer holds are forgotten, and
   * it is kept unless empty (none is known then: another process may write the first at any time).
   */
  private keepListing(listed: string[], known: string[] | undefined): boolean {
    this.forgetGone(known, listed);
    return listed.length > 0;
  }

  /** Forgets the shards of `known` that `listed` no longer holds. */
  private forgetGone(known: string[] | undefined, listed: string[]): void {
    for (const gone of known ?? []) {
      if (!listed.includes(gone)) this.forgetTable(gone);
    }
  }

  private open(name: string): Promise<lancedb.Table> {
    return this.handles.get(name) ?? this.remember(name, this.db.openTable(name));
  }

  /** The name of a table this returned. */
  nameOf(table: lancedb.Table): string {
    return this.names.get(table)!;
  }

  /** The columns of a table this returned (what its writes carry and its reads may select). */
  schemaOf(table: lancedb.Table): Schema {
    return this.schemaOfLayout(this.layoutOf(table));
  }

  /** The layout of a table this returned (tables made before the current one keep theirs until they are made again). */
  layoutOf(table: lancedb.Table): ChunkLayout {
    return this.layouts.get(table) ?? CURRENT_LAYOUT;
  }

  private schemaOfLayout(layout: ChunkLayout): Schema {
    const key = JSON.stringify(layout);
    let schema = this.schemas.get(key);
    if (!schema) {
      schema = chunkSchema(this.dimensions, layout);
      this.schemas.set(key, schema);
    }
    return schema;
  }

  /** Drops the collection's shards; the cached handles are dropped, not closed: a search may still be reading through them. */
  async drop(collectionId: string): Promise<void> {
    this.forget(collectionId);
    const names = await this.list(collectionId);
    // Last first: a drop cut short leaves the first shards, read as the collection's whole (see writeShard).
    for (const name of [...names].reverse()) await this.db.dropTable(name);
    // A search may have opened them again meanwhile.
    this.forgetGone(names, []);
    this.forget(collectionId);
  }

  /** Serializes writes to one collection's table within this process; refused once close() has begun. */
  exclusive<T>(collectionId: string, run: () => Promise<T>): Promise<T> {
    if (this.closing) throw new Error('LanceDbVectorIndex is closing');
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

  /** Whether close() has begun: work already queued still runs, unless it checks this first. */
  isClosing(): boolean {
    return this.closing !== null;
  }

  /**
   * Takes no more writes or upkeep, waits for those running or queued (a write may queue after
   * another: a search's compaction behind the write in progress), then closes every handle and the
   * connection, each as far as it can.
   */
  close(): Promise<void> {
    this.closing ??= this.closeWhenSettled();
    return this.closing;
  }

  private async closeWhenSettled(): Promise<void> {
    while (this.locks.size > 0) await Promise.allSettled([...this.locks.values()]);
    this.closed = true;
    for (const pending of this.handles.values()) {
      try {
        (await pending.catch(() => null))?.close();
      } catch {
        // A handle LanceDB cannot close now (a read still using it) is released with the connection.
      }
    }
    this.handles.clear();
    this.db.close();
  }

  /** Caches a table handle after checking its schema against this index. */
  private remember(name: string, opening: Promise<lancedb.Table>): Promise<lancedb.Table> {
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
      // A table made before the current layout is read and written in its own (see ChunkLayout):
      // without ENTITY_KEY_COLUMN its searches read chunk ids and its pages a column per field,
      // without KEYWORDS_COLUMN its keyword searches are two, with single-precision vectors they
      // read twice the bytes (all slower), with a `text` column beside KEYWORDS_COLUMN it stores its
      // texts twice; re-embedding the collection makes it again in the current one.
      const keyed = names.has(ENTITY_KEY_COLUMN);
      const keywords = keyed && names.has(KEYWORDS_COLUMN);
      const layout: ChunkLayout = { keyed, keywords, textInKeywords: keywords && !names.has('text'), precision: precisionOf(vector!.type as FixedSizeList) };
      const missing = this.schemaOfLayout(layout).fields.map((field) => field.name).filter((name) => !names.has(name));
      if (missing.length > 0) {
        table.close();
        throw new Error(`LanceDB table ${table.name} lacks columns ${missing.join(', ')} (made by an older version): delete it and resync`);
      }
      this.layouts.set(table, layout);
      this.names.set(table, name);
      return table;
    });
    this.handles.set(name, checked);
    checked.catch(() => {
      if (this.handles.get(name) === checked) this.handles.delete(name);
    });
    return checked;
  }

  /** Drops the handles of a collection's shards known here, and what is kept beside them. */
  private forget(collectionId: string): void {
    for (const name of this.listings.peek(collectionId) ?? [LanceDbTables.tableName(collectionId)]) this.forgetTable(name);
    this.listings.invalidate(collectionId);
  }

  private forgetTable(name: string): void {
    this.handles.delete(name);
    this.onForget(name);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('LanceDbVectorIndex is closed');
  }
}

/** LanceDB's "table is gone" errors (native errors are not `instanceof Error` inside Jest's VM realm). */
function isNotFound(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /not found|no such file|does not exist/i.test(message);
}
