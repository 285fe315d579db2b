import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Float64, Int32, Schema, Utf8 } from 'apache-arrow';
import { ValidationError } from '../../shared/errors.js';
import type { ChunkRecord, FilterCondition, FilterGroup, ScoredChunk, VectorIndex, VectorQuery } from './vector-index.js';

/** Every this many adds a table is compacted (each add is a fragment; many fragments slow queries and deletes). */
const OPTIMIZE_EVERY = 20;
const RRF_K = 60;

/** Columns for filterable fields; breadcrumbs filter on their JSON text (see `condition`). */
const COLUMN: Record<string, string> = {
  entity_id: 'entity_id',
  name: 'name',
  created_at: 'created_at',
  updated_at: 'updated_at',
  'service_system_metadata.entity_type': 'entity_type',
  'service_system_metadata.source_name': 'source_name',
  'service_system_metadata.original_entity_id': 'entity_id',
  'service_system_metadata.chunk_index': 'chunk_index',
  'service_system_metadata.sync_id': 'sync_id',
  'service_system_metadata.sync_job_id': 'sync_job_id',
};

/**
 * LanceDB files under the data directory: one table per collection, created on its first write,
 * with a full-text index on the chunk text for keyword and hybrid search.
 */
export class LanceDbVectorIndex implements VectorIndex {
  private readonly tables = new Map<string, Promise<lancedb.Table | null>>();
  private readonly writes = new Map<string, number>();
  private readonly ftsFresh = new Set<string>();

  private constructor(
    private readonly db: lancedb.Connection,
    private readonly dimensions: number,
  ) {}

  static async open(directory: string, dimensions: number): Promise<LanceDbVectorIndex> {
    return new LanceDbVectorIndex(await lancedb.connect(directory), dimensions);
  }

  private schema(): Schema {
    const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
    return new Schema([
      text('chunk_id'),
      text('source_connection_id'),
      text('entity_id'),
      new Field('chunk_index', new Int32(), false),
      text('name'),
      text('text'),
      new Field('vector', new FixedSizeList(this.dimensions, new Field('item', new Float32(), true)), false),
      text('entity_type'),
      text('source_name'),
      text('breadcrumbs'),
      new Field('created_at', new Float64(), true),
      new Field('updated_at', new Float64(), true),
      text('web_url'),
      text('url', true),
      text('sync_id'),
      text('sync_job_id'),
      text('raw_source_fields'),
      text('access'),
    ]);
  }

  private tableName(collectionId: string): string {
    return `chunks_${collectionId.replace(/[^a-zA-Z0-9]/g, '')}`;
  }

  private table(collectionId: string, create: boolean): Promise<lancedb.Table | null> {
    const cached = this.tables.get(collectionId);
    if (cached) return cached.then((table) => table ?? (create ? this.reopen(collectionId, true) : null));
    return this.reopen(collectionId, create);
  }

  private reopen(collectionId: string, create: boolean): Promise<lancedb.Table | null> {
    const name = this.tableName(collectionId);
    const opening = (async () => {
      if ((await this.db.tableNames()).includes(name)) return this.db.openTable(name);
      return create ? this.db.createEmptyTable(name, this.schema(), { existOk: true }) : null;
    })();
    this.tables.set(collectionId, opening);
    return opening;
  }

  async add(collectionId: string, chunks: ChunkRecord[]): Promise<void> {
    if (chunks.length === 0) return;
    const table = (await this.table(collectionId, true))!;
    const rows = chunks.map((chunk) => ({
      chunk_id: chunk.chunkId,
      source_connection_id: chunk.sourceConnectionId,
      entity_id: chunk.entityId,
      chunk_index: chunk.chunkIndex,
      name: chunk.name,
      text: chunk.text,
      vector: Array.from(chunk.vector),
      entity_type: chunk.entityType,
      source_name: chunk.sourceName,
      breadcrumbs: JSON.stringify(chunk.breadcrumbs),
      created_at: chunk.createdAt?.getTime() ?? null,
      updated_at: chunk.updatedAt?.getTime() ?? null,
      web_url: chunk.webUrl,
      url: chunk.url,
      sync_id: chunk.syncId,
      sync_job_id: chunk.syncJobId,
      raw_source_fields: JSON.stringify(chunk.rawSourceFields),
      access: JSON.stringify(chunk.access),
    }));
    await table.add(rows);
    this.ftsFresh.delete(collectionId);
    const writes = (this.writes.get(collectionId) ?? 0) + 1;
    this.writes.set(collectionId, writes);
    if (writes % OPTIMIZE_EVERY === 0) await table.optimize();
  }

  async deleteEntities(collectionId: string, sourceConnectionId: string, entityIds: string[]): Promise<void> {
    if (entityIds.length === 0) return;
    const table = await this.table(collectionId, false);
    if (!table) return;
    await table.delete(`source_connection_id = ${literal(sourceConnectionId)} AND entity_id IN (${entityIds.map(literal).join(', ')})`);
    this.ftsFresh.delete(collectionId);
  }

  async deleteSourceConnection(collectionId: string, sourceConnectionId: string): Promise<void> {
    const table = await this.table(collectionId, false);
    if (!table) return;
    await table.delete(`source_connection_id = ${literal(sourceConnectionId)}`);
    this.ftsFresh.delete(collectionId);
  }

  async deleteCollection(collectionId: string): Promise<void> {
    const name = this.tableName(collectionId);
    this.tables.delete(collectionId);
    if ((await this.db.tableNames()).includes(name)) await this.db.dropTable(name);
  }

  async count(collectionId: string, filter?: FilterGroup[]): Promise<number> {
    const table = await this.table(collectionId, false);
    if (!table) return 0;
    const where = whereClause(filter);
    return where ? table.countRows(where) : table.countRows();
  }

  async search(collectionId: string, query: VectorQuery): Promise<ScoredChunk[]> {
    const table = await this.table(collectionId, false);
    if (!table) return [];
    const where = whereClause(query.filter);
    const depth = query.limit + query.offset;
    // Candidates beyond the page, so that equal scores at its edge resolve the same way on every page.
    const candidates = Math.min(depth * 2 + 50, depth + 1000);
    const semantic = async () => {
      let search = table.vectorSearch(Array.from(query.vector!)).distanceType('cosine').limit(candidates);
      if (where) search = search.where(where);
      return (await search.toArray()).map((row) => ({ row, score: 1 - Number(row._distance) }));
    };
    const keyword = async () => {
      await this.ensureFullText(collectionId, table);
      let search = table.search(query.text!, 'fts', 'text').limit(candidates) as lancedb.Query;
      if (where) search = search.where(where);
      return (await search.toArray()).map((row) => ({ row, score: Number(row._score) }));
    };
    let ranked: { row: Record<string, unknown>; score: number }[];
    if (query.strategy === 'semantic') ranked = await semantic();
    else if (query.strategy === 'keyword') ranked = await keyword();
    else ranked = fuse(await semantic(), await keyword());
    // Ties break by chunk id, so pages of one ranking never overlap or skip.
    ranked.sort((a, b) => b.score - a.score || String(a.row.chunk_id).localeCompare(String(b.row.chunk_id)));
    return ranked.slice(query.offset, depth).map(({ row, score }) => ({ chunk: toChunk(row), score }));
  }

  /** (Re)builds the full-text index when rows changed since it was built, so new rows are searchable. */
  private async ensureFullText(collectionId: string, table: lancedb.Table): Promise<void> {
    if (this.ftsFresh.has(collectionId)) return;
    await table.createIndex('text', { config: lancedb.Index.fts(), replace: true });
    this.ftsFresh.add(collectionId);
  }

  async optimize(collectionId: string): Promise<void> {
    const table = await this.table(collectionId, false);
    if (table) await table.optimize();
  }

  async close(): Promise<void> {
    this.tables.clear();
    this.db.close();
  }
}

/** Reciprocal rank fusion of two rankings by chunk id. */
function fuse(...lists: { row: Record<string, unknown>; score: number }[][]) {
  const fused = new Map<string, { row: Record<string, unknown>; score: number }>();
  for (const list of lists) {
    list.forEach(({ row }, rank) => {
      const id = String(row.chunk_id);
      const entry = fused.get(id) ?? { row, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}

function toChunk(row: Record<string, unknown>): ScoredChunk['chunk'] {
  const date = (value: unknown) => (value === null || value === undefined ? null : new Date(Number(value)));
  return {
    chunkId: String(row.chunk_id),
    sourceConnectionId: String(row.source_connection_id),
    entityId: String(row.entity_id),
    chunkIndex: Number(row.chunk_index),
    name: String(row.name),
    text: String(row.text),
    entityType: String(row.entity_type),
    sourceName: String(row.source_name),
    breadcrumbs: JSON.parse(String(row.breadcrumbs)),
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    webUrl: String(row.web_url),
    url: row.url === null || row.url === undefined ? null : String(row.url),
    syncId: String(row.sync_id),
    syncJobId: String(row.sync_job_id),
    rawSourceFields: JSON.parse(String(row.raw_source_fields)),
    access: JSON.parse(String(row.access)),
  };
}

/** A SQL string literal (single quotes doubled). */
function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function whereClause(filter: FilterGroup[] | undefined): string | null {
  if (!filter || filter.length === 0) return null;
  return filter
    .map((group, g) => `(${group.conditions.map((condition, c) => condition_(condition, ['filter', g, 'conditions', c])).join(' AND ') || 'true'})`)
    .join(' OR ');
}

function condition_(condition: FilterCondition, loc: (string | number)[]): string {
  const { field, operator, value } = condition;
  const invalid = (msg: string) => new ValidationError([{ loc: [...loc, 'value'], msg, type: 'value_error' }]);
  const list = Array.isArray(value);
  if ((operator === 'in' || operator === 'not_in') !== list) throw invalid(`Operator ${operator} ${list ? 'takes a single value' : 'needs an array'}`);

  if (field.startsWith('breadcrumbs.')) {
    const key = field.slice('breadcrumbs.'.length);
    // JSON text holds `"key":"value"` with unescaped quotes only at key boundaries: no false matches.
    const has = (v: unknown) => `breadcrumbs LIKE ${literal(`%${JSON.stringify(key)}:${JSON.stringify(String(v))}%`.replace(/[_%]/g, (c, i, s) => (i === 0 || i === s.length - 1 ? c : `\\${c}`)))} ESCAPE '\\'`;
    switch (operator) {
      case 'equals':
        return has(value);
      case 'not_equals':
        return `NOT (${has(value)})`;
      case 'in':
        return `(${(value as unknown[]).map(has).join(' OR ')})`;
      case 'not_in':
        return `NOT (${(value as unknown[]).map(has).join(' OR ')})`;
      case 'contains':
        return `breadcrumbs LIKE ${literal(`%${JSON.stringify(key)}:"%${String(value).replace(/[\\_%"]/g, (c) => `\\${c}`)}%`)} ESCAPE '\\'`;
      default:
        throw invalid(`Operator ${operator} does not apply to ${field}`);
    }
  }

  const column = COLUMN[field];
  if (!column) throw new ValidationError([{ loc: [...loc, 'field'], msg: `Unknown field ${field}`, type: 'enum' }]);
  const isDate = column === 'created_at' || column === 'updated_at';
  const isInt = column === 'chunk_index';
  const sql = (v: unknown): string => {
    if (isDate) {
      const time = typeof v === 'number' ? v : Date.parse(String(v));
      if (!Number.isFinite(time)) throw invalid(`${field} needs a date-time`);
      return String(time);
    }
    if (isInt) {
      if (!Number.isInteger(v)) throw invalid(`${field} needs an integer`);
      return String(v);
    }
    return literal(String(v));
  };
  switch (operator) {
    case 'equals':
      return `${column} = ${sql(value)}`;
    case 'not_equals':
      return `${column} != ${sql(value)}`;
    case 'greater_than':
      return `${column} > ${sql(value)}`;
    case 'less_than':
      return `${column} < ${sql(value)}`;
    case 'greater_than_or_equal':
      return `${column} >= ${sql(value)}`;
    case 'less_than_or_equal':
      return `${column} <= ${sql(value)}`;
    case 'in':
      return `${column} IN (${(value as unknown[]).map(sql).join(', ')})`;
    case 'not_in':
      return `${column} NOT IN (${(value as unknown[]).map(sql).join(', ')})`;
    case 'contains':
      if (isDate || isInt) throw invalid(`Operator contains does not apply to ${field}`);
      return `${column} LIKE ${literal(`%${String(value).replace(/[\\_%]/g, (c) => `\\${c}`)}%`)} ESCAPE '\\'`;
    default:
      throw new ValidationError([{ loc: [...loc, 'operator'], msg: `Unknown operator ${String(operator)}`, type: 'enum' }]);
  }
}
