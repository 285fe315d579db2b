import type { Orm } from '../../platform/db/database.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { FilterGroup, ScoredChunk, VectorIndex } from '../../platform/vectors/vector-index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { Collection } from '../collections/collection.entity.js';
import { PAGE_LIMIT } from '../collections/collection.service.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import type { Principal } from '../organizations/principal.js';

export type RetrievalStrategy = 'semantic' | 'keyword' | 'hybrid';

/** The spec's SearchResult, in camelCase (the REST facade writes it in snake_case). */
export interface SearchResultView {
  entityId: string;
  name: string;
  relevanceScore: number;
  breadcrumbs: { entityId: string; name: string; entityType: string }[];
  createdAt: Date | null;
  updatedAt: Date | null;
  textualRepresentation: string;
  serviceSystemMetadata: { sourceName: string; entityType: string; chunkIndex: number; originalEntityId: string; syncId: string | null; syncJobId: string | null };
  access: { viewers: string[] | null; isPublic: boolean | null };
  webUrl: string;
  url: string | null;
  rawSourceFields: Record<string, unknown>;
}

export interface InstantSearchInput {
  query: string;
  retrievalStrategy?: RetrievalStrategy | null;
  filter?: FilterGroup[] | null;
  limit?: number | null;
  offset?: number | null;
}

/** Search over a collection's synced chunks. Scoped to the caller's organization. */
export class SearchService {
  constructor(
    private readonly orm: Orm,
    private readonly vectors: () => Promise<VectorIndex>,
    private readonly embedder: () => Promise<Embedder>,
    private readonly keywordWeight: number,
  ) {}

  async instant(principal: Principal, readableId: string, input: InstantSearchInput): Promise<SearchResultView[]> {
    const limit = input.limit ?? PAGE_LIMIT.default;
    const offset = input.offset ?? 0;
    const strategy = input.retrievalStrategy ?? 'hybrid';
    const issues = [];
    if (!Number.isInteger(limit) || limit < PAGE_LIMIT.min || limit > PAGE_LIMIT.max) issues.push({ loc: ['limit'], msg: 'Input should be between 1 and 1000', type: 'range' });
    if (!Number.isInteger(offset) || offset < 0) issues.push({ loc: ['offset'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
    if (input.query.trim() === '') issues.push({ loc: ['query'], msg: 'String should not be empty', type: 'string_too_short' });
    issues.push(...filterIssues(input.filter ?? []));
    if (issues.length) throw new ValidationError(issues);

    const em = this.orm.em.fork();
    const collection = await em.findOne(Collection, { organization: principal.organizationId, readableId });
    if (!collection) throw NotFoundError.of('Collection', readableId);
    const embedder = await this.embedder();
    if (collection.embeddingModelName !== embedder.modelName || collection.vectorSize !== embedder.dimensions) {
      throw new ConflictError(
        `Collection "${readableId}" was embedded with ${collection.embeddingModelName} (${collection.vectorSize} dimensions) but the service now embeds with ${embedder.modelName} (${embedder.dimensions}); search it with the same model or re-create it`,
      );
    }
    // Chunks of deleted connections may linger until the worker's cleanup: never return them.
    const live = await em.find(SourceConnection, { collection: collection.id }, { fields: ['id'] });
    if (live.length === 0) return [];
    const scope = { field: 'service_system_metadata.sync_id' as const, operator: 'in' as const, value: live.map((c) => c.id) };
    const filter = input.filter?.length ? input.filter.map((group) => ({ conditions: [...group.conditions, scope] })) : [{ conditions: [scope] }];
    const vector = strategy === 'keyword' ? undefined : (await embedder.embed([input.query]))[0];
    const index = await this.vectors();
    const hits = await index.search(collection.id, { strategy, vector, text: input.query, filter, limit, offset, keywordWeight: this.keywordWeight });
    return hits.map(toResult);
  }
}

function toResult({ chunk, score }: ScoredChunk): SearchResultView {
  return {
    entityId: chunk.entityId,
    name: chunk.name,
    relevanceScore: score,
    breadcrumbs: chunk.breadcrumbs.map((b) => ({ entityId: b.entity_id, name: b.name, entityType: b.entity_type })),
    createdAt: chunk.createdAt,
    updatedAt: chunk.updatedAt,
    textualRepresentation: chunk.text,
    serviceSystemMetadata: {
      sourceName: chunk.sourceName,
      entityType: chunk.entityType,
      chunkIndex: chunk.chunkIndex,
      originalEntityId: chunk.entityId,
      syncId: chunk.syncId,
      syncJobId: chunk.syncJobId,
    },
    access: chunk.access,
    webUrl: chunk.webUrl,
    url: chunk.url,
    rawSourceFields: chunk.rawSourceFields,
  };
}

const FILTERABLE_FIELDS = new Set([
  'entity_id', 'name', 'created_at', 'updated_at', 'breadcrumbs.entity_id', 'breadcrumbs.name', 'breadcrumbs.entity_type',
  'service_system_metadata.entity_type', 'service_system_metadata.source_name', 'service_system_metadata.original_entity_id',
  'service_system_metadata.chunk_index', 'service_system_metadata.sync_id', 'service_system_metadata.sync_job_id',
]);
const OPERATORS = new Set(['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal', 'in', 'not_in']);
const scalar = (value: unknown) => typeof value === 'string' || typeof value === 'boolean' || Number.isInteger(value);

/** The spec's rules for filters, checked once here for every index adapter. */
export function filterIssues(filter: FilterGroup[]) {
  const issues: { loc: (string | number)[]; msg: string; type: string }[] = [];
  filter.forEach((group, g) => {
    group.conditions.forEach((condition, c) => {
      const loc = ['filter', g, 'conditions', c];
      if (!FILTERABLE_FIELDS.has(condition.field)) issues.push({ loc: [...loc, 'field'], msg: `Unknown filterable field "${condition.field}"`, type: 'enum' });
      if (!OPERATORS.has(condition.operator)) issues.push({ loc: [...loc, 'operator'], msg: `Unknown operator "${condition.operator}"`, type: 'enum' });
      const list = condition.operator === 'in' || condition.operator === 'not_in';
      const value = condition.value as unknown;
      const valid = list
        ? Array.isArray(value) && value.length > 0 && (value.every((v) => typeof v === 'string') || value.every((v) => Number.isInteger(v)))
        : scalar(value);
      if (!valid) issues.push({ loc: [...loc, 'value'], msg: list ? 'in and not_in take a non-empty array of strings or of integers' : 'Use a string, integer or boolean (arrays only with in and not_in)', type: 'value_error' });
    });
  });
  return issues;
}
