import weaviate, { ApiKey, Filters, Sorting, type ConnectToCustomOptions, type FilterValue, type WeaviateClient } from 'weaviate-client';
import { ValidationError } from '../../shared/errors.js';
import { checkChunks, type ChunkRecord, type FilterGroup, type ScoredChunk, type VectorIndex, type VectorQuery } from './vector-index.js';
import { property, weaviateFilter } from './weaviate/filters.js';
import { toChunk, toObject } from './weaviate/objects.js';
import { documentPageOfHits, effectiveStrategy, keywordWeightOf, MAX_QUERY_RESULTS, resultScore } from './weaviate/ranking.js';
import { type ChunkCollection, type ChunkProperties, DEFAULT_CLASS_NAME, ensureClass, KEYWORD_PROPERTIES, RESULT_PROPERTIES, tenantName, VECTOR_NAME } from './weaviate/schema.js';

/**
 * insertMany serializes objects one timer tick each and polls for completion every 500 ms, so one
 * call of any size above one object takes at least half a second: an add is cut into slices that
 * run concurrently. Slices stay far below the 10 MB gRPC message limit.
 */
const INSERT_SLICE_OBJECTS = 250;
const INSERT_SLICE_BYTES = 4 * 1024 * 1024;
const INSERT_CONCURRENCY = 4;
/** Entity ids per delete filter (one ContainsAny operand list). */
const DELETE_SLICE_IDS = 1000;

/** Client options for a WEAVIATE_URL: REST on its host and port (and path), gRPC on the same host. */
export function connectionOptions(settings: { url: string; apiKey?: string; grpcPort: number }): ConnectToCustomOptions {
  const url = new URL(settings.url);
  const secure = url.protocol === 'https:';
  const path = url.pathname.replace(/\/+$/, '');
  return {
    httpHost: url.hostname,
    httpPort: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    httpSecure: secure,
    ...(path === '' ? {} : { httpPath: path }),
    grpcHost: url.hostname,
    grpcPort: settings.grpcPort,
    grpcSecure: secure,
    ...(settings.apiKey ? { authCredentials: new ApiKey(settings.apiKey) } : {}),
  };
}

export interface WeaviateVectorIndexOptions {
  url: string;
  apiKey?: string;
  grpcPort: number;
  dimensions: number;
  /** The class holding the chunks (tests use their own). */
  className?: string;
}

/**
 * Weaviate through weaviate-client v3: searches, counts and deletes over gRPC, schema and tenants
 * over REST. Filters are translated to Weaviate filters and run inside Weaviate; scores and ties
 * are settled here so that pages are stable, as in the LanceDB adapter.
 */
export class WeaviateVectorIndex implements VectorIndex {
  private closed = false;

  private constructor(
    private readonly client: WeaviateClient,
    private readonly chunks: ChunkCollection,
    private readonly dimensions: number,
  ) {}

  static async open(options: WeaviateVectorIndexOptions): Promise<WeaviateVectorIndex> {
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0) throw new Error(`Invalid vector dimensions: ${options.dimensions}`);
    const className = options.className ?? DEFAULT_CLASS_NAME;
    const client = await weaviate.connectToCustom(connectionOptions(options));
    try {
      await ensureClass(client, className);
    } catch (error) {
      await client.close();
      throw error;
    }
    return new WeaviateVectorIndex(client, client.collections.use<string, ChunkProperties>(className), options.dimensions);
  }

  // ---------------------------------------------------------------- writes

  async add(collectionId: string, chunks: ChunkRecord[]): Promise<void> {
    this.assertOpen();
    if (chunks.length === 0) return;
    checkChunks(chunks, this.dimensions);
    const tenant = this.tenant(collectionId);
    const slices = insertSlices(chunks.map(toObject));
    for (let start = 0; start < slices.length; start += INSERT_CONCURRENCY) {
      const results = await Promise.all(slices.slice(start, start + INSERT_CONCURRENCY).map((slice) => tenant.data.insertMany(slice)));
      const errors = results.flatMap((result) => Object.values(result.errors));
      if (errors.length > 0) {
        const sample = [...new Set(errors.map((error) => error.message))].slice(0, 3).join('; ');
        throw new Error(`Weaviate refused ${errors.length} of ${chunks.length} chunks: ${sample}`);
      }
    }
  }

  async deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void> {
    const unique = [...new Set(entityIds)];
    for (let start = 0; start < unique.length; start += DELETE_SLICE_IDS) {
      await this.deleteWhere(
        collectionId,
        Filters.and(property('source_connection_id').equal(sourceConnectionId), property('entity_id').containsAny(unique.slice(start, start + DELETE_SLICE_IDS))),
      );
    }
  }

  async deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void> {
    await this.deleteWhere(collectionId, property('source_connection_id').equal(sourceConnectionId));
  }

  async deleteCollection(collectionId: string): Promise<void> {
    this.assertOpen();
    const tenant = tenantName(collectionId);
    if ((await this.chunks.tenants.getByName(tenant)) === null) return;
    try {
      await this.chunks.tenants.remove(tenant);
    } catch (error) {
      // Another process may have removed it in between.
      if ((await this.chunks.tenants.getByName(tenant)) !== null) throw error;
    }
  }

  /** Weaviate maintains its HNSW and inverted indexes on every write: nothing to compact. */
  async optimize(_collectionId: string): Promise<void> {
    this.assertOpen();
  }

  /** Every write has ended when its call returns. */
  async settled(_collectionId: string): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }

  // ---------------------------------------------------------------- reads

  async count(collectionId: string, filter?: FilterGroup[]): Promise<number> {
    const filters = weaviateFilter(filter);
    if (filters === false) return 0;
    return this.read(collectionId, 0, async (tenant) => {
      const result = await tenant.aggregate.overAll(filters === true ? {} : { filters });
      return result.totalCount ?? 0;
    });
  }

  async search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]> {
    const filters = weaviateFilter(query.filter);
    const offset = Math.max(0, Math.floor(query.offset) || 0);
    const limit = Math.max(0, Math.floor(query.limit) || 0);
    if (limit === 0 || filters === false) return [];
    const text = query.text?.trim() ?? '';
    const strategy = effectiveStrategy(query.strategy, query.keywordWeight, text);
    // Chunk candidates enough to rank the documents up to the page's end, deeper while a few documents fill them.
    const hitsAt = (depth: number) => this.read(collectionId, [] as ScoredChunk[], async (tenant) => {
      const common = {
        limit: depth,
        ...(filters === true ? {} : { filters }),
        returnProperties: RESULT_PROPERTIES,
      };
      const scored = (ranking: VectorQuery['strategy'], objects: { properties: Partial<Record<string, unknown>>; metadata?: { distance?: number; score?: number } }[]) =>
        objects.map((object) => ({ chunk: toChunk(object.properties), score: resultScore(ranking, object.metadata) }));
      switch (strategy) {
        case 'none':
          return [];
        case 'semantic': {
          const result = await tenant.query.nearVector(this.queryVector(query), { ...common, targetVector: VECTOR_NAME, returnMetadata: ['distance'] });
          return scored('semantic', result.objects);
        }
        case 'keyword': {
          const result = await tenant.query.bm25(text, { ...common, queryProperties: KEYWORD_PROPERTIES, returnMetadata: ['score'] });
          return scored('keyword', result.objects);
        }
        case 'hybrid': {
          const result = await tenant.query.hybrid(text, {
            ...common,
            vector: this.queryVector(query),
            targetVector: VECTOR_NAME,
            alpha: 1 - keywordWeightOf(query.keywordWeight),
            fusionType: 'RelativeScore',
            queryProperties: KEYWORD_PROPERTIES,
            returnMetadata: ['score'],
          });
          return scored('hybrid', result.objects);
        }
      }
    });
    return documentPageOfHits(hitsAt, offset, limit);
  }

  async list(collectionId: string, filter: FilterGroup[], limit: number): Promise<Omit<ChunkRecord, 'vector'>[]> {
    const filters = weaviateFilter(filter);
    const max = Math.min(Math.max(0, Math.floor(limit) || 0), MAX_QUERY_RESULTS);
    if (max === 0 || filters === false) return [];
    return this.read(collectionId, [] as Omit<ChunkRecord, 'vector'>[], async (tenant) => {
      const result = await tenant.query.fetchObjects({
        limit: max,
        ...(filters === true ? {} : { filters }),
        sort: new Sorting<ChunkProperties>().byProperty('entity_id').byProperty('chunk_index'),
        returnProperties: RESULT_PROPERTIES,
      });
      return result.objects.map((object) => toChunk(object.properties));
    });
  }

  // ---------------------------------------------------------------- helpers

  private tenant(collectionId: string): ChunkCollection {
    this.assertOpen();
    return this.chunks.withTenant(tenantName(collectionId));
  }

  private queryVector(query: VectorQuery): number[] {
    const vector = query.vector;
    if (!vector) throw new Error(`A ${query.strategy} search needs a query vector`);
    if (vector.length !== this.dimensions) throw new Error(`Query vector has ${vector.length} dimensions; the index expects ${this.dimensions}`);
    return Array.from(vector);
  }

  /**
   * Runs a read on a collection's tenant; a collection never written (or deleted) reads as `empty`.
   * Weaviate answers a missing tenant with an error, told apart from others by asking for the tenant.
   */
  private async read<T>(collectionId: string, empty: T, run: (tenant: ChunkCollection) => Promise<T>): Promise<T> {
    try {
      return await run(this.tenant(collectionId));
    } catch (error) {
      if (error instanceof ValidationError || this.closed) throw error;
      if ((await this.chunks.tenants.getByName(tenantName(collectionId))) === null) return empty;
      throw error;
    }
  }

  /** Deletes what a filter matches, in as many rounds as Weaviate's per-call cap (QUERY_MAXIMUM_RESULTS) needs. */
  private async deleteWhere(collectionId: string, filter: FilterValue): Promise<void> {
    await this.read(collectionId, undefined, async (tenant) => {
      for (;;) {
        const result = await tenant.data.deleteMany(filter);
        if (result.failed > 0) throw new Error(`Weaviate failed to delete ${result.failed} of ${result.matches} chunks`);
        if (result.matches === 0) return;
        if (result.successful === 0) throw new Error(`Weaviate matched ${result.matches} chunks to delete but deleted none`);
      }
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('WeaviateVectorIndex is closed');
  }
}

/** Slices of objects for concurrent insertMany calls, bounded in count and approximate size. */
export function insertSlices<T extends { properties: ChunkProperties; vectors: Record<string, number[]> }>(objects: T[]): T[][] {
  const slices: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const object of objects) {
    const size =
      object.properties.text.length * 2 + object.properties.raw_source_fields.length + object.properties.breadcrumbs.length * 2 + 12 * object.vectors[VECTOR_NAME]!.length + 512;
    if (current.length > 0 && (current.length >= INSERT_SLICE_OBJECTS || bytes + size > INSERT_SLICE_BYTES)) {
      slices.push(current);
      current = [];
      bytes = 0;
    }
    current.push(object);
    bytes += size;
  }
  if (current.length > 0) slices.push(current);
  return slices;
}
