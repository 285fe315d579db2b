import { createHash } from 'node:crypto';
import weaviate, {
  ApiKey,
  Filters,
  Sorting,
  generateUuid5,
  type Collection,
  type ConnectToCustomOptions,
  type FilterValue,
  type WeaviateClass,
  type WeaviateClient,
} from 'weaviate-client';
import { ValidationError } from '../../shared/errors.js';
import { type ChunkRanking, CONTAINER_WEIGHT, isContainerType, rankDocumentsDeepening } from './document-ranking.js';
import { finiteOr, translateFilter, type CheckedCondition } from './filter-conditions.js';
import { checkChunks, type ChunkRecord, type FilterGroup, type ScoredChunk, type VectorIndex, type VectorQuery } from './vector-index.js';

/** The Weaviate collection (class) holding every Catchment collection's chunks, one tenant each. */
export const DEFAULT_CLASS_NAME = 'CatchmentChunk';
/** The named vector of each chunk object (supplied by us: no vectorizer). */
const VECTOR_NAME = 'chunk';
/** Weaviate's default QUERY_MAXIMUM_RESULTS: offset + limit of one query may not exceed it. */
const MAX_QUERY_RESULTS = 10_000;
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

/**
 * Stored properties of a chunk object. `name` is the exact value (filters), `name_words` the same
 * text tokenized into words (BM25); breadcrumbs are kept as JSON for results and as three arrays for
 * filters; JSON columns are stored, not indexed.
 */
export type ChunkProperties = {
  chunk_id: string;
  source_connection_id: string;
  entity_id: string;
  chunk_index: number;
  name: string;
  name_words: string;
  text: string;
  entity_type: string;
  source_name: string;
  breadcrumbs: string;
  breadcrumb_entity_ids: string[];
  breadcrumb_names: string[];
  breadcrumb_entity_types: string[];
  created_at?: Date;
  updated_at?: Date;
  web_url: string;
  url?: string;
  sync_id: string;
  sync_job_id: string;
  raw_source_fields: string;
  access: string;
};
type PropertyName = keyof ChunkProperties;
type ChunkCollection = Collection<ChunkProperties, string>;

/** How each property is stored: exact tokens for filters, words for BM25, or stored only. */
const PROPERTY_INDEXING: Record<PropertyName, { dataType: 'text' | 'text[]' | 'int' | 'date'; index: 'exact' | 'words' | 'stored' }> = {
  chunk_id: { dataType: 'text', index: 'exact' },
  source_connection_id: { dataType: 'text', index: 'exact' },
  entity_id: { dataType: 'text', index: 'exact' },
  chunk_index: { dataType: 'int', index: 'exact' },
  name: { dataType: 'text', index: 'exact' },
  name_words: { dataType: 'text', index: 'words' },
  text: { dataType: 'text', index: 'words' },
  entity_type: { dataType: 'text', index: 'exact' },
  source_name: { dataType: 'text', index: 'exact' },
  breadcrumbs: { dataType: 'text', index: 'stored' },
  breadcrumb_entity_ids: { dataType: 'text[]', index: 'exact' },
  breadcrumb_names: { dataType: 'text[]', index: 'exact' },
  breadcrumb_entity_types: { dataType: 'text[]', index: 'exact' },
  created_at: { dataType: 'date', index: 'exact' },
  updated_at: { dataType: 'date', index: 'exact' },
  web_url: { dataType: 'text', index: 'stored' },
  url: { dataType: 'text', index: 'stored' },
  sync_id: { dataType: 'text', index: 'exact' },
  sync_job_id: { dataType: 'text', index: 'exact' },
  raw_source_fields: { dataType: 'text', index: 'stored' },
  access: { dataType: 'text', index: 'stored' },
};

/** BM25 runs over the chunk text and its entity's name, as LanceDB's full-text search does. */
const KEYWORD_PROPERTIES: PropertyName[] = ['text', 'name_words'];
/** What results carry: everything but the filter-only arrays, the word copy of the name and the vector. */
const RESULT_PROPERTIES = (Object.keys(PROPERTY_INDEXING) as PropertyName[]).filter(
  (name) => name !== 'name_words' && !name.startsWith('breadcrumb_'),
);

/**
 * The class definition (Weaviate REST schema). Multi-tenant: a Catchment collection is a tenant,
 * which Weaviate keeps as its own shard (own HNSW and inverted indexes), so collections stay
 * isolated, a collection's delete drops one shard, and thousands of collections cost no schema
 * growth (Weaviate advises against thousands of classes). Tenants are created on first write and
 * activated on access.
 */
export function chunkClassSchema(className: string): WeaviateClass {
  return {
    class: className,
    description: 'Catchment chunks; one tenant per Catchment collection',
    multiTenancyConfig: { enabled: true, autoTenantCreation: true, autoTenantActivation: true },
    vectorConfig: {
      [VECTOR_NAME]: { vectorizer: { none: {} }, vectorIndexType: 'hnsw', vectorIndexConfig: { distance: 'cosine' } },
    },
    properties: (Object.entries(PROPERTY_INDEXING) as [PropertyName, (typeof PROPERTY_INDEXING)[PropertyName]][]).map(([name, { dataType, index }]) => {
      const text = dataType === 'text' || dataType === 'text[]';
      return {
        name,
        dataType: [dataType],
        ...(text ? { tokenization: index === 'words' ? ('word' as const) : ('field' as const) } : {}),
        indexFilterable: index === 'exact',
        indexSearchable: index === 'words',
      };
    }),
  };
}

/** A collection's tenant name. Tenant names allow [A-Za-z0-9_-]{1,64}: UUIDs as they are, other ids hashed. */
export function tenantName(collectionId: string): string {
  if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(collectionId)) return collectionId;
  return `h_${createHash('sha256').update(collectionId, 'utf8').digest('hex').slice(0, 62)}`;
}

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

/** A chunk as stored: the properties and the deterministic object id (UUIDv5 of the chunk id). */
export function toObject(chunk: ChunkRecord): { id: string; properties: ChunkProperties; vectors: Record<string, number[]> } {
  const properties: ChunkProperties = {
    chunk_id: chunk.chunkId,
    source_connection_id: chunk.sourceConnectionId,
    entity_id: chunk.entityId,
    chunk_index: chunk.chunkIndex,
    name: chunk.name,
    name_words: chunk.name,
    text: chunk.text,
    entity_type: chunk.entityType,
    source_name: chunk.sourceName,
    breadcrumbs: JSON.stringify(chunk.breadcrumbs),
    breadcrumb_entity_ids: chunk.breadcrumbs.map((b) => b.entity_id),
    breadcrumb_names: chunk.breadcrumbs.map((b) => b.name),
    breadcrumb_entity_types: chunk.breadcrumbs.map((b) => b.entity_type),
    web_url: chunk.webUrl,
    sync_id: chunk.syncId,
    sync_job_id: chunk.syncJobId,
    raw_source_fields: JSON.stringify(chunk.rawSourceFields ?? {}),
    access: JSON.stringify(chunk.access),
  };
  // Absent, not null: Weaviate has no null values, and NotEqual (the complement of Equal) still matches absent dates.
  if (isValidDate(chunk.createdAt)) properties.created_at = chunk.createdAt;
  if (isValidDate(chunk.updatedAt)) properties.updated_at = chunk.updatedAt;
  if (chunk.url !== null) properties.url = chunk.url;
  return { id: generateUuid5(chunk.chunkId), properties, vectors: { [VECTOR_NAME]: Array.from(chunk.vector) } };
}

/** A stored object's properties back as a chunk (without its vector). */
export function toChunk(properties: Partial<Record<string, unknown>>): ScoredChunk['chunk'] {
  const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));
  const date = (value: unknown) => (value instanceof Date ? value : value === undefined || value === null ? null : new Date(String(value)));
  return {
    chunkId: text(properties.chunk_id),
    sourceConnectionId: text(properties.source_connection_id),
    entityId: text(properties.entity_id),
    chunkIndex: Number(properties.chunk_index),
    name: text(properties.name),
    text: text(properties.text),
    entityType: text(properties.entity_type),
    sourceName: text(properties.source_name),
    breadcrumbs: JSON.parse(text(properties.breadcrumbs) || '[]') as ScoredChunk['chunk']['breadcrumbs'],
    createdAt: date(properties.created_at),
    updatedAt: date(properties.updated_at),
    webUrl: text(properties.web_url),
    url: properties.url === undefined || properties.url === null ? null : String(properties.url),
    syncId: text(properties.sync_id),
    syncJobId: text(properties.sync_job_id),
    rawSourceFields: JSON.parse(text(properties.raw_source_fields) || '{}') as Record<string, unknown>,
    access: JSON.parse(text(properties.access) || '{"viewers":null,"isPublic":null}') as ScoredChunk['chunk']['access'],
  };
}

/**
 * One result's score, higher is better: 1 − cosine distance for nearVector (as LanceDB), the BM25
 * score for keyword, the fused score for hybrid (relative-score fusion: each list min-max normalised
 * and weighted, the same fusion as LanceDB's, so scores lie in [0, 1]).
 */
export function resultScore(strategy: VectorQuery['strategy'], metadata: { distance?: number; score?: number } | undefined): number {
  if (strategy === 'semantic') return finiteOr(1 - Number(metadata?.distance), -1);
  return finiteOr(Number(metadata?.score), 0);
}

/** Weaviate's chunk hits (its own fusion for hybrid) as the one ranking documents are ranked from; `cut` when the hits stopped at the query's limit. */
function hitRanking(hits: ScoredChunk[], cut: boolean): ChunkRanking<ScoredChunk> {
  return { candidates: hits.map((hit) => ({ chunkKey: hit.chunk.chunkId, score: hit.score, item: hit })), weight: 1, value: (score: number) => score, cut };
}

/** Containers count at CONTAINER_WEIGHT, as in LanceDB's ranking. */
const hitWeight = (hit: ScoredChunk) => (isContainerType(hit.chunk.entityType) ? CONTAINER_WEIGHT : 1);

/**
 * The page of documents ranked from Weaviate's chunk hits, as LanceDB ranks them (document-ranking.ts):
 * one hit per entity, its best chunk, scored as its document. `hitsAt(depth)` reads that many hits
 * (Weaviate's own fusion for hybrid); fewer than asked means the ranking holds every match.
 */
export async function documentPageOfHits(hitsAt: (depth: number) => Promise<ScoredChunk[]>, offset: number, limit: number): Promise<ScoredChunk[]> {
  const ranked = await rankDocumentsDeepening(
    offset + limit,
    async (depth) => {
      const hits = await hitsAt(depth);
      return [hitRanking(hits, hits.length >= depth)];
    },
    hitWeight,
    MAX_QUERY_RESULTS,
  );
  return ranked.slice(offset, offset + limit).map(({ best, score }) => ({ chunk: best.item.chunk, score }));
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

/** Creates the class if missing (another process may win the race) and checks an existing one. */
async function ensureClass(client: WeaviateClient, className: string): Promise<void> {
  if (!(await client.collections.exists(className))) {
    try {
      await client.collections.createFromSchema(chunkClassSchema(className));
      return;
    } catch (error) {
      if (!(await client.collections.exists(className))) throw error;
    }
  }
  // The REST schema, as createFromSchema wrote it.
  const existing = (await client.collections.exportToJson(className)) as WeaviateClass;
  const problems: string[] = [];
  if (!existing.multiTenancyConfig?.enabled) problems.push('multi-tenancy is off');
  if (!existing.vectorConfig?.[VECTOR_NAME]) problems.push(`it has no "${VECTOR_NAME}" vector`);
  const present = new Map((existing.properties ?? []).map((p) => [p.name, p]));
  for (const [name, { dataType, index }] of Object.entries(PROPERTY_INDEXING)) {
    const found = present.get(name);
    if (!found) problems.push(`property ${name} is missing`);
    else if (found.dataType?.[0] !== dataType) problems.push(`property ${name} is ${String(found.dataType?.[0])}, not ${dataType}`);
    else if (index === 'exact' && found.indexFilterable === false) problems.push(`property ${name} is not filterable`);
  }
  if (problems.length > 0) {
    throw new Error(`Weaviate class ${className} was not made by this version of Catchment (${problems.join('; ')}): delete it and resync, or set another class`);
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

/**
 * The search to run. Hybrid at a weight of 0 or 1 is the pure ranking (Weaviate would still fuse
 * normalised scores); a query without words has nothing for BM25 to match.
 */
export function effectiveStrategy(strategy: VectorQuery['strategy'], keywordWeight: number | undefined, text: string): VectorQuery['strategy'] | 'none' {
  switch (strategy) {
    case 'semantic':
      return 'semantic';
    case 'keyword':
      return text === '' ? 'none' : 'keyword';
    case 'hybrid': {
      const weight = keywordWeightOf(keywordWeight);
      if (text === '' || weight <= 0) return 'semantic';
      return weight >= 1 ? 'keyword' : 'hybrid';
    }
    default:
      throw new ValidationError([{ loc: ['retrieval_strategy'], msg: `Unknown retrieval strategy ${String(strategy)}`, type: 'enum' }]);
  }
}

function keywordWeightOf(weight: number | undefined): number {
  return typeof weight === 'number' && Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0.5;
}

function isValidDate(value: Date | null): value is Date {
  return value instanceof Date && Number.isFinite(value.getTime());
}

// ---------------------------------------------------------------- filters

/** A filter on one stored property (the client's filter builder, detached from any connection). */
const property = (name: PropertyName) => weaviate.filter.byProperty(name);

/**
 * A translated filter: a Weaviate filter, or `true` (matches everything: no filter to send) or
 * `false` (matches nothing: no query to run). The constants come from empty groups and empty
 * in / not_in lists, which Weaviate's And/Or cannot express.
 */
export type WeaviateFilter = FilterValue | boolean;

/**
 * The spec's filter as a Weaviate filter: groups ORed, conditions inside a group ANDed. Throws
 * ValidationError (loc `filter.<g>.conditions.<c>.<field|operator|value>`), with the same rules
 * and messages as the LanceDB adapter.
 */
export function weaviateFilter(filter: FilterGroup[] | null | undefined): WeaviateFilter {
  const groups = translateFilter(filter, conditionFilter);
  return groups ? anyOf(groups.map(allOf)) : true;
}

function allOf(parts: WeaviateFilter[]): WeaviateFilter {
  if (parts.includes(false)) return false;
  const filters = parts.filter((part): part is FilterValue => part !== true);
  return filters.length === 0 ? true : filters.length === 1 ? filters[0]! : Filters.and(...filters);
}

function anyOf(parts: WeaviateFilter[]): WeaviateFilter {
  if (parts.includes(true)) return true;
  const filters = parts.filter((part): part is FilterValue => part !== false);
  return filters.length === 0 ? false : filters.length === 1 ? filters[0]! : Filters.or(...filters);
}

/**
 * Weaviate's Like has no escape: `*` and `?` are wildcards. A literal one in the searched text
 * becomes `?` (any one character), which can only widen the match by that character.
 */
export function likePattern(value: string): string {
  return `*${value.replace(/[*?]/g, '?')}*`;
}

function conditionFilter({ column, kind, operator, values }: CheckedCondition): WeaviateFilter {
  const target = property(column as PropertyName);
  const textual = kind === 'string' || kind === 'list';

  switch (operator) {
    case 'equals':
      // On a text[] property ContainsAny is membership; Equal on text/int/date is exact.
      return kind === 'list' ? target.containsAny(values as string[]) : target.equal(values[0]!);
    case 'contains':
      return kind === 'list' ? target.containsAny(values as string[]) : target.like(likePattern(values[0] as string));
    case 'not_equals':
      // Weaviate's NotEqual is the complement of Equal: absent dates match, and an array matches when no element equals.
      return target.notEqual(values[0]!);
    case 'in':
      if (values.length === 0) return false;
      return textual ? target.containsAny(values as string[]) : anyOf(values.map((v) => target.equal(v)));
    case 'not_in':
      // ContainsNone needs Weaviate 1.33; an AND of NotEquals works on every version.
      return allOf(values.map((v) => target.notEqual(v)));
    case 'greater_than':
      return target.greaterThan(values[0] as number | Date);
    case 'greater_than_or_equal':
      return target.greaterOrEqual(values[0] as number | Date);
    case 'less_than':
      return target.lessThan(values[0] as number | Date);
    default: // less_than_or_equal
      return target.lessOrEqual(values[0] as number | Date);
  }
}
