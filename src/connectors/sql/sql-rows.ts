import { createHash } from 'node:crypto';
import type { Breadcrumb, SourceEntity } from '../connector.js';
import { text, type Column, type ColumnKind, type Row, type SqlDialect, type SqlTarget, type Table } from './sql-session.js';
import type { TablePlan } from './sql-tables.js';

/** Rows → entities: how a row of a planned table becomes an entity, and how its column values are rendered. */

const TIMESTAMP = /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}(?::?\d{2}){0,2})?$/;

/** ISO 8601 text of a server timestamp (the sessions run in UTC), keeping its full precision. */
function isoTimestamp(value: string, kind: 'timestamp' | 'timestamptz'): string {
  const match = TIMESTAMP.exec(value);
  if (!match) return value; // infinity, BC dates: the server's text
  const [, day, time, zone] = match;
  const offset = zone === undefined ? (kind === 'timestamptz' ? 'Z' : '') : /^[+-]00(:?00)*$/.test(zone) ? 'Z' : zone.length === 3 ? `${zone}:00` : zone;
  return `${day}T${time}${offset}`;
}

/** A JSON-safe rendering of a column value: exact numbers as strings, dates as ISO text, bytes as a summary. */
export function jsonSafe(value: unknown, kind: ColumnKind = 'other'): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return kind === 'timestamp' || kind === 'timestamptz' ? isoTimestamp(value, kind) : value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'boolean') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return { byte_length: value.byteLength, sha256: createHash('sha256').update(value).digest('hex') };
  if (Array.isArray(value)) return value.map((item) => jsonSafe(item));
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, jsonSafe(item)]));
  return String(value);
}

/** A Date for createdAt/updatedAt from a rendered value; timestamps without a zone are read as UTC. */
function dateOf(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const iso = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(value) ? `${value}Z` : value;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Text of a primary-key part in entity ids: stable across runs for the same value. */
function keyText(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

const NAME_COLUMNS = ['name', 'title', 'subject', 'label', 'headline'];
const CREATED_COLUMNS = ['created_at', 'createdat', 'created', 'inserted_at'];
const UPDATED_COLUMNS = ['updated_at', 'updatedat', 'modified_at', 'last_modified', 'updated'];
const TEMPORAL = new Set<ColumnKind>(['date', 'timestamp', 'timestamptz']);

function columnNamed(table: Table, names: string[]): Column | undefined {
  return table.columns.find((column) => TEMPORAL.has(column.kind) && names.includes(column.name.toLowerCase()));
}

const valueText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** What an entity says of where its row lives. */
export interface RowOrigin {
  dialect: Pick<SqlDialect, 'shortName' | 'schemes'>;
  target: SqlTarget;
}

/** The entity id of a row: schema, table and primary-key values, each URI-encoded, joined by "/". */
export function rowEntityId(plan: TablePlan, row: Row): string {
  return [plan.key, ...plan.table.primaryKey.map((column) => encodeURIComponent(keyText(row[column])))].join('/');
}

/**
 * A row as an entity: breadcrumbs schema → table, the primary key as id, the text columns (with
 * their names) as text, every column JSON-safe in `fields`. Sync and federated search both use it,
 * so a row looks the same whichever way it was found.
 */
export function rowEntity(plan: TablePlan, row: Row, origin: RowOrigin): SourceEntity {
  const { shortName } = origin.dialect;
  const { table } = plan;
  const fields = Object.fromEntries(table.columns.map((column) => [column.name, jsonSafe(row[column.name], column.kind)]));
  const entityId = rowEntityId(plan, row);
  const keyParts = table.primaryKey.map((column) => keyText(row[column]));
  const nameColumn = table.columns.find((column) => column.kind === 'text' && NAME_COLUMNS.includes(column.name.toLowerCase()) && text(row[column.name]) !== null);
  const name = nameColumn ? text(row[nameColumn.name])!.slice(0, 200) : `${table.name} ${keyParts.join(', ')}`;
  const lines = plan.textColumns
    .filter((column) => row[column.name] !== null && row[column.name] !== undefined && valueText(fields[column.name]).trim() !== '')
    .map((column) => `${column.name}: ${valueText(fields[column.name])}`);
  const breadcrumbs: Breadcrumb[] = [
    { entityId: encodeURIComponent(table.schema), name: table.schema, entityType: `${shortName}_schema` },
    { entityId: plan.key, name: table.name, entityType: `${shortName}_table` },
  ];
  const created = columnNamed(table, CREATED_COLUMNS);
  const updated = plan.cursor && TEMPORAL.has(plan.cursor.kind) ? plan.cursor : columnNamed(table, UPDATED_COLUMNS);
  const { target } = origin;
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return {
    entityId,
    entityType: `${shortName}_row`,
    name,
    breadcrumbs,
    createdAt: created ? dateOf(fields[created.name]) : null,
    updatedAt: updated ? dateOf(fields[updated.name]) : null,
    text: lines.length ? lines.join('\n') : name,
    fields,
    webUrl: `${origin.dialect.schemes[0]}://${host}:${target.port}/${encodeURIComponent(target.database)}/${entityId}`,
  };
}
