/**
 * The vector and keyword index of synced chunks, partitioned by collection. LanceDB files under the
 * data directory in the embedded deployment; Weaviate when WEAVIATE_URL is set. Both adapters pass
 * the same contract suite (vector-index.contract.ts).
 */
export interface ChunkBreadcrumb {
  entity_id: string;
  name: string;
  entity_type: string;
}

/**
 * A chunk's id: `${sourceConnectionId}:${entityId}:${chunkIndex}`. Indexes rely on the form (adapters
 * refuse other ids): the chunk's entity is its id up to the last colon, so a ranking needs to read
 * only this one column to fuse per entity.
 */
export function chunkIdOf(sourceConnectionId: string, entityId: string, chunkIndex: number): string {
  return `${sourceConnectionId}:${entityId}:${chunkIndex}`;
}

/**
 * The entity id and chunk index a chunk id holds, given its connection id (entity ids may hold
 * colons; the connection id's length says where the entity id starts). The inverse of `chunkIdOf`.
 */
export function entityOfChunkId(chunkId: string, sourceConnectionId: string): { entityId: string; chunkIndex: number } {
  const last = chunkId.lastIndexOf(':');
  return { entityId: chunkId.slice(sourceConnectionId.length + 1, last), chunkIndex: Number(chunkId.slice(last + 1)) };
}

/** The entity part of a chunk id (connection and entity ids): what chunks of one entity share. */
export function entityKeyOfChunkId(chunkId: string): string {
  return chunkId.slice(0, chunkId.lastIndexOf(':'));
}

/** What every adapter checks before it writes chunks: vectors of its size, ids of the `chunkIdOf` form. */
export function checkChunks(chunks: readonly ChunkRecord[], dimensions: number): void {
  for (const chunk of chunks) {
    if (chunk.vector.length !== dimensions) {
      throw new Error(`Chunk ${chunk.chunkId} has a ${chunk.vector.length}-dimensional vector; the index expects ${dimensions}`);
    }
    if (chunk.chunkId !== chunkIdOf(chunk.sourceConnectionId, chunk.entityId, chunk.chunkIndex)) {
      throw new Error(`Chunk id ${chunk.chunkId} is not of the form <source connection id>:<entity id>:<chunk index>`);
    }
  }
}

/** One chunk of one entity, as written by a sync and returned by search. */
export interface ChunkRecord {
  /** Unique within the collection: `chunkIdOf(sourceConnectionId, entityId, chunkIndex)`. */
  chunkId: string;
  sourceConnectionId: string;
  entityId: string;
  chunkIndex: number;
  name: string;
  /** The chunk's text (what keyword search matches and search results return). */
  text: string;
  vector: Float32Array;
  entityType: string;
  /** Source short name. */
  sourceName: string;
  breadcrumbs: ChunkBreadcrumb[];
  createdAt: Date | null;
  updatedAt: Date | null;
  webUrl: string;
  /** Download URL for file entities. */
  url: string | null;
  syncId: string;
  syncJobId: string;
  rawSourceFields: Record<string, unknown>;
  access: { viewers: string[] | null; isPublic: boolean | null };
}

export type FilterableField =
  | 'entity_id'
  | 'name'
  | 'created_at'
  | 'updated_at'
  | 'breadcrumbs.entity_id'
  | 'breadcrumbs.name'
  | 'breadcrumbs.entity_type'
  | 'service_system_metadata.entity_type'
  | 'service_system_metadata.source_name'
  | 'service_system_metadata.original_entity_id'
  | 'service_system_metadata.chunk_index'
  | 'service_system_metadata.sync_id'
  | 'service_system_metadata.sync_job_id';

export type FilterOperator =
  | 'equals'
  | 'not_equals'
  | 'contains'
  | 'greater_than'
  | 'less_than'
  | 'greater_than_or_equal'
  | 'less_than_or_equal'
  | 'in'
  | 'not_in';

export interface FilterCondition {
  field: FilterableField;
  operator: FilterOperator;
  value: string | number | boolean | string[] | number[];
}

/** Conditions inside a group are ANDed; groups are ORed. */
export interface FilterGroup {
  conditions: FilterCondition[];
}

export interface VectorQuery {
  strategy: 'semantic' | 'keyword' | 'hybrid';
  /** Needed for semantic and hybrid. */
  vector?: Float32Array;
  /** Needed for keyword and hybrid. */
  text?: string;
  filter?: FilterGroup[];
  limit: number;
  offset: number;
  /**
   * Hybrid only: weight of the keyword ranking in the fusion (0–1, the rest goes to vectors). How
   * much vectors deserve depends on the embedder: the built-in word vectors are far weaker than BM25.
   */
  keywordWeight?: number;
}

export interface ScoredChunk {
  chunk: Omit<ChunkRecord, 'vector'>;
  /** Higher is more relevant; comparable within one result list. */
  score: number;
}

export interface VectorIndex {
  /** Adds chunks (their chunkIds must not exist yet: delete an entity's old chunks before re-adding). */
  add(collectionId: string, chunks: ChunkRecord[]): Promise<void>;
  /** Removes every chunk of these entities of one connection. */
  deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void>;
  deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void>;
  deleteCollection(collectionId: string): Promise<void>;
  count(collectionId: string, filter?: FilterGroup[]): Promise<number>;
  search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]>;
  /**
   * Chunks matching a filter, without ranking, ordered by entity then chunk index (what agents read
   * and what navigation returns). At most `limit`.
   */
  list(collectionId: string, filter: FilterGroup[], limit: number): Promise<Omit<ChunkRecord, 'vector'>[]>;
  /** Compacts and refreshes keyword indexes; called after a sync's writes. */
  optimize(collectionId: string): Promise<void>;
  /**
   * Resolves once the writes and upkeep already asked of the collection have ended, failed or not (a
   * sync's end leaves its optimize running: see SyncPipeline.optimizeInBackground).
   */
  settled(collectionId: string): Promise<void>;
  close(): Promise<void>;
}
