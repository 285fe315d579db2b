import { createHash } from 'node:crypto';
import type { Logger } from '../../platform/logger.js';
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import {
  CredentialsRejectedError,
  SourceConfigError,
  SourceUnreachableError,
  type Breadcrumb,
  type Connector,
  type SourceEntity,
  type SourceItem,
  type SourceRun,
  type SyncContext,
} from '../connector.js';
import { sqlCredentials, sqlCursor, type SqlConfig, type SqlCredentials, type SqlCursor } from './sql-settings.js';

/**
 * What the `postgresql` and `mysql` sources share: connection settings, which tables a connection
 * reads, how a row becomes an entity, and the run itself (keyset pages in primary-key order, full or
 * by a cursor column). Each source supplies a dialect: how to connect, list tables and fetch pages.
 */

/** How a column's values are rendered in `fields` and whether it is text worth searching. */
export type ColumnKind = 'text' | 'date' | 'timestamp' | 'timestamptz' | 'binary' | 'other';

export interface Column {
  name: string;
  /** The server's type name, as usable in a cast (PostgreSQL) or shown (MySQL). */
  type: string;
  kind: ColumnKind;
}

export interface Table {
  schema: string;
  name: string;
  /** In table order. */
  columns: Column[];
  /** Column names of the primary key, in key order; empty when the table has none. */
  primaryKey: string[];
}

export type Row = Record<string, unknown>;

export interface PageRequest {
  table: Table;
  /** Primary-key values of the previous page's last row (as the dialect returned them), or null for the first page. */
  after: unknown[] | null;
  limit: number;
  /** Only rows whose `column` is at least `value` (the text of a previous maximum). */
  since: { column: string; value: string } | null;
  /** Only the primary-key columns. */
  keysOnly: boolean;
}

export interface SqlSession {
  /** Base tables the user may read, in `schemas` (every user schema, or the connection's database for MySQL, when empty). */
  tables(schemas: string[]): Promise<Table[]>;
  /** Rows in primary-key order after `after`, at most `limit`. */
  page(request: PageRequest): Promise<Row[]>;
  /** The largest value of a column as the server writes it in text (exact, for the next run's comparison); null for an empty table. */
  max(table: Table, column: string): Promise<string | null>;
  close(): Promise<void>;
  /** Drops the connection at once: a query in flight fails instead of running to its timeout. */
  destroy(): void;
}

/** Where to connect: either a URL (passed to the driver as is, so its options apply) or its parts. */
export interface SqlTarget {
  url: string | null;
  host: string;
  port: number;
  database: string;
  user: string;
  password: string | null;
}

export interface SqlTimeouts {
  connectMs: number;
  queryMs: number;
}

export interface SqlDialect<S extends SqlSession = SqlSession> {
  shortName: string;
  /** For messages: "PostgreSQL", "MySQL". */
  label: string;
  /** URL schemes accepted in the `url` credential, the first being the canonical one. */
  schemes: string[];
  defaultPort: number;
  /**
   * Opens a session. Throws CredentialsRejectedError when the server refuses the user, password or
   * database, and an Error saying the server cannot be reached otherwise.
   */
  connect(target: SqlTarget, timeouts: SqlTimeouts): Promise<S>;
}

export const timeoutsOf = (config: SqlConfig): SqlTimeouts => ({ connectMs: config.connect_timeout_seconds * 1000, queryMs: config.query_timeout_seconds * 1000 });

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** The connection target from the credentials; the URL's parts are read for messages and links. */
export function resolveTarget(dialect: SqlDialect, given: SqlCredentials | null): SqlTarget {
  const at = (field: string) => ['authentication', 'credentials', field];
  const credentials: Partial<SqlCredentials> = given ?? {};
  const url = text(credentials.url);
  if (url) {
    const mixed = (['host', 'database', 'user', 'password'] as const).filter((field) => text(credentials[field]) !== null);
    if (mixed.length) throw new ValidationError([{ loc: at('url'), msg: `Give either url or ${mixed.join(', ')}, not both`, type: 'value_error' }]);
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      // The URL itself may hold the password: it is never repeated in the message.
    }
    if (!parsed || !dialect.schemes.includes(parsed.protocol.replace(/:$/, ''))) {
      throw new ValidationError([{ loc: at('url'), msg: `Expected a URL like ${dialect.schemes[0]}://user:password@host:${dialect.defaultPort}/database`, type: 'url_parsing' }]);
    }
    const decode = (part: string) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    };
    const database = decode(parsed.pathname.replace(/^\//, ''));
    if (!database) throw new ValidationError([{ loc: at('url'), msg: 'The URL names no database (its path)', type: 'value_error' }]);
    return {
      url,
      host: decode(parsed.hostname.replace(/^\[|\]$/g, '')) || 'localhost',
      port: Number(parsed.port) || dialect.defaultPort,
      database,
      user: decode(parsed.username),
      password: parsed.password ? decode(parsed.password) : null,
    };
  }
  const issues: ValidationIssue[] = (['host', 'database', 'user'] as const)
    .filter((field) => text(credentials[field]) === null)
    .map((field) => ({ loc: at(field), msg: 'Field required (or give url)', type: 'missing' }));
  if (issues.length) throw new ValidationError(issues);
  return {
    url: null,
    host: text(credentials.host)!,
    port: credentials.port ?? dialect.defaultPort,
    database: text(credentials.database)!,
    user: text(credentials.user)!,
    password: credentials.password || null,
  };
}

/** Where a target's login goes, without its user or password: `postgresql://db.internal:5432/app`. */
function serverAddress(dialect: SqlDialect, target: SqlTarget): string {
  const host = target.host.toLowerCase();
  return `${dialect.schemes[0]}://${host.includes(':') ? `[${host}]` : host}:${target.port}/${target.database}`;
}

/**
 * The message of a driver error with the password and URL cut out: drivers may echo the
 * connection string (a malformed URL, an option they cannot parse), and messages reach job
 * records, logs and API answers.
 */
export function withoutSecrets(message: string, target: SqlTarget | null, credentials: SqlCredentials | null): string {
  const secrets = [target?.password, target?.url, credentials?.password, credentials?.url]
    .filter((secret): secret is string => typeof secret === 'string' && secret.length >= 3)
    .flatMap((secret) => [secret, encodeURIComponent(secret)])
    .sort((a, b) => b.length - a.length);
  return secrets.reduce((result, secret) => result.split(secret).join('[redacted]'), message);
}

/** Rethrows `error` with secrets removed from its message, keeping its class (CredentialsRejectedError, SourceConfigError…). */
function scrubbed(error: unknown, target: SqlTarget | null, credentials: SqlCredentials | null): unknown {
  if (!(error instanceof Error) || error instanceof ValidationError) return error;
  const message = withoutSecrets(error.message, target, credentials);
  if (message === error.message) return error;
  if (error instanceof SourceConfigError) return new SourceConfigError(error.field, message);
  if (error instanceof CredentialsRejectedError) return new CredentialsRejectedError(message);
  if (error instanceof SourceUnreachableError) return new SourceUnreachableError(message);
  const clean = new Error(message);
  clean.name = error.name;
  return clean;
}

/** Drops the session when `signal` aborts (a cancelled job, a search past its budget); returns the unsubscribe. */
function destroyOnAbort(session: SqlSession, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => undefined;
  const destroy = () => session.destroy();
  signal.addEventListener('abort', destroy, { once: true });
  return () => signal.removeEventListener('abort', destroy);
}

/** Opens a session for `work` and always closes it; errors leave without secrets. */
export async function withSession<S extends SqlSession, T>(
  dialect: SqlDialect<S>,
  credentials: SqlCredentials | null,
  config: SqlConfig,
  work: (session: S, target: SqlTarget) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  let target: SqlTarget | null = null;
  try {
    signal?.throwIfAborted();
    target = resolveTarget(dialect, credentials);
    const session = await dialect.connect(target, timeoutsOf(config));
    const unsubscribe = destroyOnAbort(session, signal);
    try {
      signal?.throwIfAborted();
      return await work(session, target);
    } catch (error) {
      signal?.throwIfAborted(); // the abort's reason, not the dropped connection's error
      throw error;
    } finally {
      unsubscribe();
      await session.close().catch(() => undefined);
    }
  } catch (error) {
    throw scrubbed(error, target, credentials);
  }
}

/** How one table is read and turned into entities. */
export interface TablePlan {
  table: Table;
  /** Columns whose values (with their names) make the entity text. */
  textColumns: Column[];
  cursor: Column | null;
  /** Key of the table in cursors: schema/table, each part URI-encoded. */
  key: string;
}

const quoteList = (names: string[]) => names.map((name) => `"${name}"`).join(', ');

/**
 * The tables a connection reads, checked against the server: named schemas and tables must exist
 * and be readable, text columns must exist, the cursor column must be in every table read.
 */
export async function planTables(session: SqlSession, config: SqlConfig, logger: Logger, dialect: Pick<SqlDialect, 'shortName'>): Promise<TablePlan[]> {
  const all = await session.tables(config.schemas);
  const missingSchemas = config.schemas.filter((schema) => !all.some((table) => table.schema === schema));
  if (missingSchemas.length) throw new SourceConfigError('schemas', `No readable tables in schema ${quoteList(missingSchemas)} (missing, empty, or not readable by this user)`);

  let chosen: Table[];
  if (config.tables.length) {
    chosen = [];
    for (const wanted of config.tables) {
      const matches = all.filter((table) => table.name === wanted || `${table.schema}.${table.name}` === wanted);
      if (matches.length === 0) throw new SourceConfigError('tables', `Table "${wanted}" not found (or not readable by this user)`);
      if (matches.length > 1) throw new SourceConfigError('tables', `Table "${wanted}" is in several schemas (${quoteList(matches.map((table) => table.schema))}): name it as schema.table`);
      const [table] = matches as [Table];
      if (table.primaryKey.length === 0) throw new SourceConfigError('tables', `Table "${wanted}" has no primary key: rows need one to be entities with stable ids`);
      if (!chosen.includes(table)) chosen.push(table);
    }
  } else {
    chosen = all.filter((table) => table.primaryKey.length > 0);
    const skipped = all.filter((table) => table.primaryKey.length === 0);
    if (skipped.length) logger.warn({ source: dialect.shortName, tables: skipped.map((table) => `${table.schema}.${table.name}`) }, `${dialect.shortName}: tables without a primary key skipped`);
  }

  const textEntries = config.text_columns.map((entry) => {
    const parts = entry.split('.');
    return { entry, column: parts.at(-1)!, table: parts.length >= 2 ? parts.at(-2)! : null, schema: parts.length >= 3 ? parts.slice(0, -2).join('.') : null };
  });
  const unused = new Set(config.text_columns);
  const plans = chosen.map((table): TablePlan => {
    const named = textEntries.filter((entry) => (entry.table === null || entry.table === table.name) && (entry.schema === null || entry.schema === table.schema));
    const textColumns = named.map((entry) => table.columns.find((column) => column.name === entry.column)).filter((column): column is Column => column !== undefined);
    for (const entry of named) if (table.columns.some((column) => column.name === entry.column)) unused.delete(entry.entry);
    const cursor = config.cursor_column ? (table.columns.find((column) => column.name === config.cursor_column) ?? null) : null;
    return {
      table,
      textColumns: textColumns.length ? textColumns : table.columns.filter((column) => column.kind === 'text'),
      cursor,
      key: [table.schema, table.name].map(encodeURIComponent).join('/'),
    };
  });
  if (unused.size) throw new SourceConfigError('text_columns', `No table read has the column ${quoteList([...unused])}`);
  const withoutCursor = plans.filter((plan) => config.cursor_column && !plan.cursor);
  if (withoutCursor.length) {
    throw new SourceConfigError('cursor_column', `Column "${config.cursor_column}" is missing from ${quoteList(withoutCursor.map((plan) => `${plan.table.schema}.${plan.table.name}`))}: name the tables to read, or drop the cursor column`);
  }
  return plans;
}

// ---------------------------------------------------------------------------------------------
// Rows → entities

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

// ---------------------------------------------------------------------------------------------
// Runs

/** The previous run's cursor when it was taken on the configured cursor column, else null (every row is read). */
function usableCursor(cursor: SqlCursor | null, config: SqlConfig): SqlCursor | null {
  return cursor && config.cursor_column && cursor.column === config.cursor_column ? cursor : null;
}

/** Rows of a table in primary-key order, a page at a time (never the whole table in memory). */
async function* keysetRows(session: SqlSession, plan: TablePlan, options: { since: PageRequest['since']; keysOnly: boolean; limit: number; signal: AbortSignal }): AsyncGenerator<Row> {
  let after: unknown[] | null = null;
  for (;;) {
    options.signal.throwIfAborted();
    const rows = await session.page({ table: plan.table, after, limit: options.limit, since: options.since, keysOnly: options.keysOnly });
    for (const row of rows) yield row;
    if (rows.length < options.limit) return;
    const last = rows.at(-1)!;
    after = plan.table.primaryKey.map((column) => last[column]);
  }
}

/**
 * A run over every planned table. Without a usable cursor every row is read (`complete`, so rows
 * gone from the source are deleted). With one, only rows whose cursor column is at least the
 * previous run's maximum are read; the maximum is taken before the rows, and the comparison
 * includes it, so a row changed while the run reads is read again next time rather than missed
 * (unchanged re-reads are skipped by the content hash). With `incremental_deletes`, every primary
 * key is then listed as a keep marker, so the run stays complete and deleted rows go.
 */
export function sqlSync(dialect: SqlDialect, context: SyncContext<SqlConfig, SqlCredentials, SqlCursor>): SourceRun<SqlCursor> {
  const { config } = context;
  const previous = usableCursor(context.cursor, config);
  const next: SqlCursor | null = config.cursor_column ? { version: 1, column: config.cursor_column, tables: {} } : null;
  const { signal, logger } = context;

  async function* items(): AsyncGenerator<SourceItem> {
    signal.throwIfAborted();
    let target: SqlTarget | null = null;
    let session: SqlSession | null = null;
    let unsubscribe: () => void = () => undefined;
    try {
      target = resolveTarget(dialect, context.credentials);
      session = await dialect.connect(target, timeoutsOf(config));
      unsubscribe = destroyOnAbort(session, signal);
      const plans = await planTables(session, config, logger, dialect);
      for (const plan of plans) {
        const since = previous && plan.cursor && typeof previous.tables[plan.key] === 'string' ? { column: plan.cursor.name, value: previous.tables[plan.key]! } : null;
        if (next && plan.cursor) next.tables[plan.key] = await session.max(plan.table, plan.cursor.name);
        const changed = new Set<string>();
        for await (const row of keysetRows(session, plan, { since, keysOnly: false, limit: config.batch_size, signal })) {
          const entity = rowEntity(plan, row, { dialect, target });
          if (since) changed.add(entity.entityId);
          yield entity;
        }
        if (since && config.incremental_deletes) {
          for await (const row of keysetRows(session, plan, { since: null, keysOnly: true, limit: Math.max(config.batch_size, 5000), signal })) {
            const id = rowEntityId(plan, row);
            if (!changed.has(id)) yield { keep: id };
          }
        }
      }
      logger.debug({ source: dialect.shortName, tables: plans.length, incremental: previous !== null }, `${dialect.shortName}: run read`);
    } catch (error) {
      signal.throwIfAborted();
      throw scrubbed(error, target, context.credentials);
    } finally {
      unsubscribe();
      await session?.close().catch(() => undefined);
    }
  }

  return {
    complete: previous === null || config.incremental_deletes,
    nextCursor: () => next,
    items: items(),
  };
}

/** The Connector members both SQL sources share. */
export function sqlConnectorBase<S extends SqlSession, Config extends SqlConfig>(
  dialect: SqlDialect<S>,
  /** Checks of the source's own config fields, in the validation session. */
  validateMore: (session: S, config: Config) => Promise<void> = async () => undefined,
): Pick<Connector<Config, SqlCredentials, SqlCursor>, 'validate' | 'sync' | 'auth' | 'cursor' | 'supportedAuthProviders' | 'supportsContinuous' | 'labels' | 'credentialTargets'> {
  return {
    auth: { kind: 'fields', credentials: sqlCredentials(dialect) },
    cursor: sqlCursor,
    supportedAuthProviders: [],
    supportsContinuous: true,
    labels: ['database'],
    credentialTargets: (_config, credentials) => [serverAddress(dialect, resolveTarget(dialect, credentials))],
    async validate({ config, credentials, logger }) {
      await withSession(dialect, credentials, config, async (session) => {
        await planTables(session, config, logger, dialect);
        await validateMore(session, config);
      });
    },
    sync: (context) => sqlSync(dialect, context),
  };
}
