import type { ChunkRecord, FilterGroup, ScoredChunk, VectorIndex, VectorQuery } from './vector-index.js';

/**
 * The vector index for parts that hold one from their start (the sync worker): it opens the real index
 * on its first call, so a server that has not synced or searched yet loads neither LanceDB's native
 * library and threads nor Arrow (~30 MiB resident). Closing is the composition root's, which closes
 * the index only if it was opened.
 */
export class VectorIndexOnFirstUse implements VectorIndex {
  constructor(private readonly open: () => Promise<VectorIndex>) {}

  async add(collectionId: string, chunks: ChunkRecord[]): Promise<void> {
    return (await this.open()).add(collectionId, chunks);
  }

  async deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void> {
    return (await this.open()).deleteEntities(collectionId, sourceConnectionId, entityIds);
  }

  async deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void> {
    return (await this.open()).deleteSourceConnection(collectionId, sourceConnectionId);
  }

  async deleteCollection(collectionId: string): Promise<void> {
    return (await this.open()).deleteCollection(collectionId);
  }

  async count(collectionId: string, filter?: FilterGroup[]): Promise<number> {
    return (await this.open()).count(collectionId, filter);
  }

  async search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]> {
    return (await this.open()).search(collectionId, query);
  }

  async list(collectionId: string, filter: FilterGroup[], limit: number): Promise<Omit<ChunkRecord, 'vector'>[]> {
    return (await this.open()).list(collectionId, filter, limit);
  }

  async optimize(collectionId: string): Promise<void> {
    return (await this.open()).optimize(collectionId);
  }

  async settled(collectionId: string): Promise<void> {
    return (await this.open()).settled(collectionId);
  }

  async close(): Promise<void> {}
}
