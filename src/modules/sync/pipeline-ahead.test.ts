import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stubEntity } from '../../connectors/stub/index.js';
import { FileBlobStore } from '../../platform/blobs/blob-store.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { ChunkRecord, VectorIndex } from '../../platform/vectors/vector-index.js';
import type { EntityRow, EntityStore } from './entity-store.js';
import { SyncPipeline } from './pipeline.js';
import { layerSyncConfigs } from './sync-config-layers.js';

/** The entity table in memory: what the pipeline reads and writes of it. */
class MemoryEntities {
  readonly rows = new Map<string, EntityRow>();
  readonly upserted: string[][] = [];

  async hashes(_connection: string, entityIds: string[]): Promise<Map<string, string>> {
    return new Map(entityIds.filter((id) => this.rows.has(id)).map((id) => [id, this.rows.get(id)!.contentHash]));
  }
  async upsert(_connection: string, _collection: string, _job: string, rows: EntityRow[]): Promise<void> {
    for (const row of rows) this.rows.set(row.entityId, row);
    this.upserted.push(rows.map((row) => row.entityId));
  }
  async delete(_connection: string, entityIds: string[]): Promise<number> {
    return entityIds.filter((id) => this.rows.delete(id)).length;
  }
  async count(): Promise<number> {
    return this.rows.size;
  }
  async *ids(): AsyncGenerator<string[]> {
    yield [...this.rows.keys()];
  }
}

/** An index whose first write waits until released; the order of writes is recorded. */
class GatedIndex {
  readonly added: string[] = [];
  private release!: () => void;
  private readonly gate = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  private first = true;

  async add(_collection: string, chunks: ChunkRecord[]): Promise<void> {
    if (this.first) {
      this.first = false;
      await this.gate;
    }
    this.added.push(chunks[0]!.entityId);
  }
  async deleteEntities(): Promise<void> {}
  async optimize(): Promise<void> {}
  open(): void {
    this.release();
  }
}

describe('the sync pipeline reads and embeds ahead of a slow index write', () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-pipeline-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  test('while the first batch waits on the index, three more are read and embedded; then all are written in order', async () => {
    const batchSize = 10;
    const entities = new MemoryEntities();
    const index = new GatedIndex();
    let embeddedBatches = 0;
    const embedder: Embedder = {
      modelName: 'test',
      dimensions: 4,
      embed: async (texts) => {
        embeddedBatches++;
        return texts.map(() => new Float32Array([1, 0, 0, 0]));
      },
      close: async () => undefined,
    };
    const pipeline = new SyncPipeline({
      entities: entities as unknown as EntityStore,
      vectors: index as unknown as VectorIndex,
      embedder,
      blobs: new FileBlobStore(directory),
      maxEntities: 1000,
      batchSize,
    });
    const settings = { seed: 1, size_mix: 'small', hierarchy_depth: 0, code_files: false, revision: 0 } as const;
    const running = pipeline.run({
      jobId: 'job',
      syncId: 'connection',
      collectionId: 'collection',
      sourceConnectionId: 'connection',
      sourceName: 'stub',
      config: layerSyncConfigs(),
      source: {
        complete: true,
        nextCursor: () => null,
        items: (async function* () {
          for (let i = 0; i < 8 * batchSize; i++) yield stubEntity(i, settings);
        })(),
      },
      orphansPossible: false,
      signal: new AbortController().signal,
      onProgress: async () => undefined,
    });

    // The first batch's write is held: the batch itself and three after it are embedded, no more.
    const deadline = Date.now() + 5000;
    while (embeddedBatches < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(embeddedBatches).toBe(4);
    expect(index.added).toEqual([]);
    expect(entities.upserted).toEqual([]);

    index.open();
    const counts = await running;
    expect(counts).toMatchObject({ inserted: 80, deleted: 0, chunks: 80 });
    const firstOfEachBatch = Array.from({ length: 8 }, (_, batch) => `stub-${batch * batchSize}`);
    expect(index.added).toEqual(firstOfEachBatch);
    expect(entities.upserted.map((batch) => batch[0])).toEqual(firstOfEachBatch);
  });
});
