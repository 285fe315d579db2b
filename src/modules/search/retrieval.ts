import type { Orm } from '../../platform/db/database.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { ChunkRecord, FilterGroup, VectorIndex, VectorQuery } from '../../platform/vectors/vector-index.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { invalidateOnWrites, TtlCache } from '../../shared/ttl-cache.js';
import { Collection } from '../collections/collection.entity.js';
import { embeddingMismatch } from '../collections/collection.service.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { FederatedSources } from './federated-sources.js';
import { withConditions } from './filter-rules.js';
import { fromChunk, reciprocalRankFusion, type RetrievalStrategy, type SearchResultView } from './search-result.js';

/** The collection a search runs over, resolved once per request. */
export interface SearchScope {
  collection: Collection;
  /** Connections whose chunks are in the index (deleted ones are gone from here at once). */
  indexedConnectionIds: string[];
  federated: SourceConnection[];
  sourceNames: string[];
}

export interface RetrieveRequest {
  text: string;
  strategy: RetrievalStrategy;
  filter: FilterGroup[];
  /** Documents: one result per entity, its best chunk. */
  limit: number;
  offset: number;
}

/** A chunk as stored, without its vector: what reading and listing return. */
export type StoredChunk = Omit<ChunkRecord, 'vector'>;

/**
 * What every search tier (instant, classic, agentic, legacy) needs of the collection: its scope, ranked
 * documents, and the chunks behind them. The tiers hold the rules of their own ranking; this holds
 * where results come from.
 */
export interface Retrieval {
  /** The collection, its searchable connections, and a check that its vectors match the embedder's. */
  scope(principal: Principal, readableId: string): Promise<SearchScope>;
  /**
   * One ranked list of documents (each entity once, shown by its best chunk, scored as a document):
   * the index's and, when the collection has federated connections, theirs, merged.
   */
  retrieve(scope: SearchScope, request: RetrieveRequest, signal?: AbortSignal): Promise<SearchResultView[]>;
  /** Chunks of the scope's live connections matching a filter. */
  count(scope: SearchScope, filter: FilterGroup[]): Promise<number>;
  /** Chunks of the scope's live connections matching a filter, by entity then chunk index, at most `limit`. */
  list(scope: SearchScope, filter: FilterGroup[], limit: number): Promise<StoredChunk[]>;
}

export interface IndexRetrievalDependencies {
  orm: Orm;
  vectors: () => Promise<VectorIndex>;
  embedder: () => Promise<Embedder>;
  keywordWeight: number;
  federated: FederatedSources;
  /** Defaults to SCOPE_CACHE_MS; 0 reads the database (and checks the index for lingering chunks) on every search. */
  scopeCacheMs?: number;
}

/**
 * How long a search scope (collection and connections) is reused without asking the database. Any
 * write this process makes through the ORM (a collection or connection created, changed or deleted)
 * drops it at once; writes of other API processes are seen within this time.
 */
export const SCOPE_CACHE_MS = 1000;
/** How long the answer of onlyLiveChunks is reused. */
const LIVE_ONLY_CACHE_MS = 1000;

/** The retrieval of synced collections: the vector index, plus federated sources asked at query time. */
export class IndexRetrieval implements Retrieval {
  /** Scopes by organization and readable id: every search starts with one. */
  private readonly scopes: TtlCache<SearchScope>;
  /** See onlyLiveChunks. */
  private readonly liveOnly: TtlCache<boolean>;

  constructor(private readonly deps: IndexRetrievalDependencies) {
    this.scopes = new TtlCache(deps.scopeCacheMs ?? SCOPE_CACHE_MS, 1000);
    this.liveOnly = new TtlCache(deps.scopeCacheMs === 0 ? 0 : LIVE_ONLY_CACHE_MS, 1000);
    // Connections are deleted by native queries, but in the transaction that records their event: 'all'.
    invalidateOnWrites(deps.orm, 'all', () => {
      this.scopes.invalidate();
      this.liveOnly.invalidate();
    });
  }

  async scope(principal: Principal, readableId: string): Promise<SearchScope> {
    const scope = await this.scopes.get(`${principal.organizationId}\u0000${readableId}`, () => this.loadScope(principal.organizationId, readableId));
    const mismatch = embeddingMismatch(scope.collection, await this.deps.embedder());
    if (mismatch) throw new ConflictError(mismatch);
    return { ...scope };
  }

  /**
   * One query when the collection has connections (they come with their collection; their cursors,
   * which can be large, stay in the database), a second one only to tell an empty collection from a
   * missing one.
   */
  private async loadScope(organizationId: string, readableId: string): Promise<SearchScope> {
    const em = this.deps.orm.em.fork();
    const connections = (await em.find(
      SourceConnection,
      { organization: organizationId, collection: { organization: organizationId, readableId } },
      { populate: ['collection'], exclude: ['cursor'], orderBy: { createdAt: 'asc', id: 'asc' } },
    )) as SourceConnection[];
    const collection = connections[0]?.collection ?? (await em.findOne(Collection, { organization: organizationId, readableId }));
    if (!collection) throw NotFoundError.of('Collection', readableId);
    const federated = connections.filter((c) => this.deps.federated.isFederated(c));
    return {
      collection,
      indexedConnectionIds: connections.filter((c) => !federated.includes(c)).map((c) => c.id),
      federated,
      sourceNames: [...new Set(connections.map((c) => c.shortName))],
    };
  }

  /** Federated sources' documents join the index's by reciprocal rank fusion (their scores are not comparable). */
  async retrieve(scope: SearchScope, request: RetrieveRequest, signal?: AbortSignal): Promise<SearchResultView[]> {
    const { text, limit, offset } = request;
    const federated = scope.federated.length > 0;
    const depth = offset + limit;
    const [indexed, ...sources] = await Promise.all([
      this.searchIndex(scope, { ...request, limit: federated ? depth : limit, offset: federated ? 0 : offset }),
      ...(federated ? [this.deps.federated.search(scope.federated, text, depth, request.filter.length ? request.filter : null, signal)] : []),
    ]);
    const lists = sources[0] ?? [];
    if (lists.length === 0) return federated ? indexed.slice(offset, depth) : indexed;
    return reciprocalRankFusion([{ results: indexed }, ...lists.map((results) => ({ results }))]).slice(offset, depth);
  }

  async count(scope: SearchScope, filter: FilterGroup[]): Promise<number> {
    if (scope.indexedConnectionIds.length === 0) return 0;
    return (await this.deps.vectors()).count(scope.collection.id, this.live(scope, filter));
  }

  async list(scope: SearchScope, filter: FilterGroup[], limit: number): Promise<StoredChunk[]> {
    if (scope.indexedConnectionIds.length === 0) return [];
    return (await this.deps.vectors()).list(scope.collection.id, this.live(scope, filter), limit);
  }

  /** Only live connections' chunks (direct index reads: chunks of a deleted connection may linger). */
  private live(scope: SearchScope, filter: FilterGroup[]): FilterGroup[] {
    return withConditions(filter, { field: 'service_system_metadata.sync_id', operator: 'in', value: scope.indexedConnectionIds });
  }

  private async searchIndex(scope: SearchScope, request: RetrieveRequest): Promise<SearchResultView[]> {
    const query = await this.indexQuery(scope, request);
    if (!query) return [];
    const hits = await (await this.deps.vectors()).search(scope.collection.id, query);
    return hits.map(fromChunk);
  }

  /**
   * The index query of one ranked list over the scope's synced chunks (null when there is nothing
   * to search), with the query embedded. Public so that benchmarks time exactly what searches send.
   */
  async indexQuery(scope: SearchScope, { text, strategy, filter, limit, offset }: RetrieveRequest): Promise<VectorQuery | null> {
    if (scope.indexedConnectionIds.length === 0 || limit === 0) return null;
    const [vector, onlyLive] = await Promise.all([
      strategy === 'keyword' ? undefined : this.deps.embedder().then(async (embedder) => (await embedder.embed([text]))[0]),
      this.onlyLiveChunks(scope),
    ]);
    // Chunks of deleted connections may linger until the worker's cleanup: never return them.
    const scoped = onlyLive ? filter : this.live(scope, filter);
    return { strategy, vector, text, filter: scoped, limit, offset, keywordWeight: this.deps.keywordWeight };
  }

  /**
   * Whether the collection's index holds chunks of the scope's live connections only: then the
   * sync_id condition that keeps deleted connections' lingering chunks out selects every row, and
   * is left out (evaluating it is a scan of the column on every query: ~4 ms of a 100,000-chunk
   * hybrid query). Asked with a filtered count (~2 ms), remembered briefly per set of live
   * connections: a deleted connection changes the set (and this process's deletes drop the cache),
   * and no chunk of a deleted connection is written after it (its syncs are stopped first). The
   * TTL bounds what a sync that failed to stop in time could still write.
   */
  private async onlyLiveChunks(scope: SearchScope): Promise<boolean> {
    const live = scope.indexedConnectionIds;
    return this.liveOnly.get(`${scope.collection.id}\u0000${live.join(',')}`, async () => {
      const index = await this.deps.vectors();
      const foreign = await index.count(scope.collection.id, [{ conditions: [{ field: 'service_system_metadata.sync_id', operator: 'not_in', value: live }] }]);
      return foreign === 0;
    });
  }
}
