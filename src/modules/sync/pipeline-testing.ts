/**
 * Stand-ins for the sync pipeline's entity table and index, for tests of the pipeline's order of
 * work: both in memory, with the delays and failures a test scripts.
 */
import type { ChunkRecord } from '../../platform/vectors/vector-index.js';
import type { EntityRow } from './entity-store.js';

/**
 * The entity table in memory, each write taking `writeMs` (a slow database). `upserted` records the
 * first id of each write, `written` every id, in the order written. A read of stored hashes waits for
 * `readHashes` (default: answered at the next turn of the event loop, as a database's would be at best).
 */
export class MemoryEntities {
  readonly rows = new Map<string, EntityRow>();
  readonly upserted: string[] = [];
  readonly written: string[] = [];
  /** Reads of stored hashes asked for so far. */
  hashReads = 0;
  readHashes: (read: number) => Promise<void> = () => new Promise((resolve) => setImmediate(resolve));

  constructor(private readonly writeMs = 0) {}

  async hashes(_connection: string, entityIds: string[]): Promise<Map<string, string>> {
    await this.readHashes(++this.hashReads);
    return new Map(entityIds.filter((id) => this.rows.has(id)).map((id) => [id, this.rows.get(id)!.contentHash]));
  }
  async upsert(_connection: string, _collection: string, _job: string, rows: EntityRow[]): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.writeMs));
    for (const row of rows) this.rows.set(row.entityId, row);
    this.upserted.push(rows[0]!.entityId);
    this.written.push(...rows.map((row) => row.entityId));
  }
  async delete(): Promise<string[]> {
    return [];
  }
  async count(): Promise<number> {
    return this.rows.size;
  }
  async holdsAny(): Promise<boolean> {
    return this.rows.size > 0;
  }
  async *ids(): AsyncGenerator<string[]> {
    yield [...this.rows.keys()];
  }
}

/**
 * An index that records the first entity of each batch written; `hold` makes the first write wait
 * until `open`, `failAt` fails that write (1 = the first), `writeMs` makes every write take so long;
 * `optimizeUntil` makes optimize() wait for it, then fail if it rejects.
 */
export class ScriptedIndex {
  readonly added: string[] = [];
  optimized = 0;
  /** Writes started and not yet ended. */
  running = 0;
  private release!: () => void;
  private readonly gate = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  private writes = 0;

  /** optimize() calls that have not ended. */
  optimizing = 0;

  constructor(private readonly script: { hold?: boolean; failAt?: number; writeMs?: number; optimizeUntil?: Promise<void> }) {}

  async add(_collection: string, chunks: ChunkRecord[]): Promise<void> {
    this.writes++;
    this.running++;
    try {
      if (this.writes === 1 && this.script.hold) await this.gate;
      if (this.script.writeMs) await new Promise((resolve) => setTimeout(resolve, this.script.writeMs));
      if (this.writes === this.script.failAt) throw new Error('index write failed');
      this.added.push(chunks[0]!.entityId);
    } finally {
      this.running--;
    }
  }
  async deleteEntities(): Promise<void> {}
  async optimize(): Promise<void> {
    this.optimized++;
    this.optimizing++;
    try {
      await this.script.optimizeUntil;
    } finally {
      this.optimizing--;
    }
  }
  open(): void {
    this.release();
  }
}

