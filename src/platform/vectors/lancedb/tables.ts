import type * as lancedb from '@lancedb/lancedb';
import { FixedSizeList, type Schema } from 'apache-arrow';
import { ValidationError } from '../../../shared/errors.js';
import { type ChunkLayout, chunkSchema, CURRENT_LAYOUT, ENTITY_KEY_COLUMN, KEYWORDS_COLUMN, precisionOf } from './arrow.js';

/**
 * The chunk tables of one LanceDB connection, one per collection (`chunks_<collection id without
 * dashes>`): handles opened once and checked against the index's schema, a lock serializing writes
 * to a table inside this process, and reads that survive a table dropped by another process.
 */
export class LanceDbTables {
  private readonly handles = new Map<string, Promise<lancedb.Table>>();
  private readonly locks = new Map<string, Promise<unknown>>();
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
    /** Called when a collection's handle is dropped (its table deleted or gone): state kept beside it goes too. */
    private readonly onForget: (collectionId: string) => void,
  ) {}

  /** The table holding a collection's chunks. UUIDs lose their dashes; other ids are hex-encoded (injective). */
  static tableName(collectionId: string): string {
    if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(collectionId)) {
      return `chunks_${collectionId.replace(/-/g, '')}`;
    }
    return `chunks_h_${Buffer.from(collectionId, 'utf8').toString('hex')}`;
  }

  /** Runs a read; a table that does not exist (or was dropped by another process) reads as `empty`. */
  async read<T>(collectionId: string, empty: T, run: (table: lancedb.Table) => Promise<T>): Promise<T> {
    const table = await this.existing(collectionId);
    if (!table) return empty;
    try {
      return await run(table);
    } catch (error) {
      // close() closed the handle under this read: say so as every later call does, not as LanceDB's "Table … is closed".
      if (this.closed) throw new Error('LanceDbVectorIndex is closed', { cause: error });
      if (error instanceof ValidationError || !isNotFound(error)) throw error;
      this.forget(collectionId);
      const again = await this.existing(collectionId);
      return again ? run(again) : empty;
    }
  }

  async existing(collectionId: string): Promise<lancedb.Table | null> {
    this.assertOpen();
    const cached = this.handles.get(collectionId);
    if (cached) return cached;
    const name = LanceDbTables.tableName(collectionId);
    if (!(await this.db.tableNames()).includes(name)) return null;
    return this.remember(collectionId, this.db.openTable(name));
  }

  /** Creates the collection's table (an existing one is opened); the caller adds its indexes. */
  create(collectionId: string): Promise<lancedb.Table> {
    const name = LanceDbTables.tableName(collectionId);
    return this.remember(collectionId, this.db.createEmptyTable(name, chunkSchema(this.dimensions), { existOk: true }));
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

  /** Drops the collection's table; the cached handle is dropped, not closed: a search may still be reading through it. */
  async drop(collectionId: string): Promise<void> {
    const name = LanceDbTables.tableName(collectionId);
    this.forget(collectionId);
    if ((await this.db.tableNames()).includes(name)) await this.db.dropTable(name);
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
      return table;
    });
    this.handles.set(collectionId, checked);
    checked.catch(() => {
      if (this.handles.get(collectionId) === checked) this.handles.delete(collectionId);
    });
    return checked;
  }

  private forget(collectionId: string): void {
    this.handles.delete(collectionId);
    this.onForget(collectionId);
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
