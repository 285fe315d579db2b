import type { Orm } from '../../platform/db/database.js';
import { translateFilter, type CheckedCondition } from '../../platform/vectors/filter-conditions.js';
import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import { NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { filterIssues } from '../search/filter-rules.js';
import type { Principal } from '../organizations/principal.js';
import type { CollectionService } from './collection.service.js';

export const ENTITY_PAGE = { default: 100, max: 1000 } as const;

export interface ListedEntity {
  entityId: string;
  name: string;
  entityType: string;
  sourceConnectionId: string;
  sourceName: string;
  breadcrumbs: { entityId: string; name: string; entityType: string }[];
  createdAt: Date | null;
  updatedAt: Date | null;
  syncedAt: Date;
  chunkCount: number;
}

export interface EntityListing {
  /** Entities matching the filter (all pages). */
  total: number;
  byType: { entityType: string; count: number }[];
  bySource: { sourceConnectionId: string; sourceName: string; count: number }[];
  items: ListedEntity[];
}

/** A SQL predicate with its parameters (`?` placeholders). */
interface Predicate {
  sql: string;
  params: unknown[];
}

/** Entity-table expressions of the spec's filterable fields (breadcrumbs are searched in the jsonb array). */
const COLUMNS: Record<string, string> = {
  entity_id: 'e.entity_id',
  'service_system_metadata.original_entity_id': 'e.entity_id',
  name: 'e.name',
  created_at: 'e.source_created_at',
  updated_at: 'e.source_updated_at',
  'service_system_metadata.entity_type': 'e.entity_type',
  'service_system_metadata.source_name': 'c.short_name',
  'service_system_metadata.sync_id': 'e.source_connection_id::text',
  'service_system_metadata.sync_job_id': 'e.last_job_id::text',
};
const BREADCRUMB_KEYS: Record<string, string> = { 'breadcrumbs.entity_id': 'entityId', 'breadcrumbs.name': 'name', 'breadcrumbs.entity_type': 'entityType' };
const COMPARISONS: Record<string, string> = { equals: '=', greater_than: '>', less_than: '<', greater_than_or_equal: '>=', less_than_or_equal: '<=' };

/**
 * What a collection holds, from the entity table: pages of entities under the spec's filter (the
 * search filter's rules and 422s), with exact counts by entity type and source connection.
 */
export class CollectionEntities {
  constructor(
    private readonly orm: Orm,
    private readonly collections: CollectionService,
  ) {}

  async list(principal: Principal, readableId: string, options: { filter?: FilterGroup[] | null; limit?: number | null; offset?: number | null }): Promise<EntityListing> {
    const limit = options.limit ?? ENTITY_PAGE.default;
    const offset = options.offset ?? 0;
    const issues = options.filter ? [...filterIssues(options.filter), ...chunkIndexIssues(options.filter)] : [];
    if (!Number.isInteger(limit) || limit < 1 || limit > ENTITY_PAGE.max) issues.push({ loc: ['limit'], msg: `must be between 1 and ${ENTITY_PAGE.max}`, type: 'value_error' });
    if (!Number.isInteger(offset) || offset < 0) issues.push({ loc: ['offset'], msg: 'must be 0 or more', type: 'value_error' });
    if (issues.length > 0) throw new ValidationError(issues);
    const collection = await this.collections.get(principal, readableId);
    if (!collection) throw NotFoundError.of('Collection', readableId);

    const where = whereClause(options.filter);
    // Through the collection's connections (their collection index, then the entity table's key): the
    // entity table has no index on its collection_id (see the migration entities_connection_trigger).
    const from = `from source_connections c join entities e on e.source_connection_id = c.id where c.collection_id = ?${where ? ` and (${where.sql})` : ''}`;
    const params = [collection.id, ...(where?.params ?? [])];
    const db = this.orm.em.getConnection();
    const [rows, counts] = await Promise.all([
      db.execute<EntityRowRead[]>(
        `select e.entity_id, e.name, e.entity_type, e.source_connection_id, c.short_name, e.breadcrumbs, e.source_created_at, e.source_updated_at, e.synced_at, e.chunk_count
         ${from} order by e.entity_id, e.source_connection_id limit ? offset ?`,
        [...params, limit, offset],
      ),
      db.execute<{ entity_type: string; source_connection_id: string; short_name: string; count: string }[]>(
        `select e.entity_type, e.source_connection_id, c.short_name, count(*) as count ${from} group by e.entity_type, e.source_connection_id, c.short_name`,
        params,
      ),
    ]);
    const byType = new Map<string, number>();
    const bySource = new Map<string, { sourceConnectionId: string; sourceName: string; count: number }>();
    for (const row of counts) {
      const count = Number(row.count);
      byType.set(row.entity_type, (byType.get(row.entity_type) ?? 0) + count);
      const source = bySource.get(row.source_connection_id) ?? { sourceConnectionId: row.source_connection_id, sourceName: row.short_name, count: 0 };
      source.count += count;
      bySource.set(row.source_connection_id, source);
    }
    return {
      total: counts.reduce((sum, row) => sum + Number(row.count), 0),
      byType: [...byType].map(([entityType, count]) => ({ entityType, count })).sort((a, b) => b.count - a.count || (a.entityType < b.entityType ? -1 : 1)),
      bySource: [...bySource.values()].sort((a, b) => b.count - a.count || (a.sourceConnectionId < b.sourceConnectionId ? -1 : 1)),
      items: rows.map(listedEntity),
    };
  }
}

interface EntityRowRead {
  entity_id: string;
  name: string;
  entity_type: string;
  source_connection_id: string;
  short_name: string;
  breadcrumbs: { entityId: string; name: string; entityType: string }[] | string;
  source_created_at: Date | string | null;
  source_updated_at: Date | string | null;
  synced_at: Date | string;
  chunk_count: number;
}

function listedEntity(row: EntityRowRead): ListedEntity {
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  const breadcrumbs = typeof row.breadcrumbs === 'string' ? JSON.parse(row.breadcrumbs) : row.breadcrumbs;
  return {
    entityId: row.entity_id,
    name: row.name,
    entityType: row.entity_type,
    sourceConnectionId: row.source_connection_id,
    sourceName: row.short_name,
    breadcrumbs: (breadcrumbs ?? []).map((crumb: { entityId: string; name: string; entityType: string }) => ({ entityId: crumb.entityId, name: crumb.name, entityType: crumb.entityType })),
    createdAt: date(row.source_created_at),
    updatedAt: date(row.source_updated_at),
    syncedAt: new Date(row.synced_at),
    chunkCount: Number(row.chunk_count),
  };
}

/** The filter as SQL on the entity table: groups ORed, conditions ANDed (the search filter's semantics). */
function whereClause(filter: FilterGroup[] | null | undefined): Predicate | null {
  const groups = translateFilter(filter, conditionSql);
  if (!groups) return null;
  const params: unknown[] = [];
  const sql = groups
    .map((conditions) => {
      if (conditions.length === 0) return '(true)';
      for (const condition of conditions) params.push(...condition.params);
      return `(${conditions.map((condition) => `(${condition.sql})`).join(' and ')})`;
    })
    .join(' or ');
  return { sql, params };
}

/** chunk_index filters chunks (search results); listed entities are whole. */
function chunkIndexIssues(filter: FilterGroup[]): ValidationIssue[] {
  return filter.flatMap((group, g) =>
    (Array.isArray(group?.conditions) ? group.conditions : []).flatMap((condition, c) =>
      condition?.field === 'service_system_metadata.chunk_index'
        ? [{ loc: ['filter', g, 'conditions', c, 'field'], msg: 'chunk_index applies to search results (chunks), not to listed entities', type: 'value_error' }]
        : [],
    ),
  );
}

function conditionSql({ field, kind, operator, values }: CheckedCondition): Predicate {
  const value = (v: string | number | Date) => (v instanceof Date ? v.toISOString() : v);
  const placeholder = kind === 'date' ? '?::timestamptz' : '?';
  const breadcrumbKey = BREADCRUMB_KEYS[field];
  if (breadcrumbKey) {
    // Any breadcrumb matches: equals and contains test membership, as in the vector indexes.
    const has = (v: string | number | Date): Predicate => ({ sql: `exists (select 1 from jsonb_array_elements(e.breadcrumbs) b where b->>'${breadcrumbKey}' = ?)`, params: [value(v)] });
    const anyOf = (list: (string | number | Date)[]): Predicate =>
      list.length === 0 ? { sql: 'false', params: [] } : { sql: list.map((v) => has(v).sql).join(' or '), params: list.map(value) };
    switch (operator) {
      case 'not_equals':
        return { sql: `not ${has(values[0]!).sql}`, params: [value(values[0]!)] };
      case 'in':
        return anyOf(values);
      case 'not_in': {
        const any = anyOf(values);
        return { sql: `not (${any.sql})`, params: any.params };
      }
      default:
        return has(values[0]!);
    }
  }
  const column = COLUMNS[field]!;
  const orNull = (sql: string) => (kind === 'date' ? `${column} is null or ${sql}` : sql);
  const comparison = COMPARISONS[operator];
  if (comparison) return { sql: `${column} ${comparison} ${placeholder}`, params: [value(values[0]!)] };
  switch (operator) {
    case 'not_equals':
      return { sql: orNull(`${column} <> ${placeholder}`), params: [value(values[0]!)] };
    case 'in':
      return values.length === 0 ? { sql: 'false', params: [] } : { sql: `${column} in (${values.map(() => placeholder).join(', ')})`, params: values.map(value) };
    case 'not_in':
      return values.length === 0 ? { sql: 'true', params: [] } : { sql: orNull(`${column} not in (${values.map(() => placeholder).join(', ')})`), params: values.map(value) };
    default: // contains
      return { sql: `strpos(${column}, ?) > 0`, params: [value(values[0]!)] };
  }
}
