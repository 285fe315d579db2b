import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { CredentialsRejectedError, SourceConfigError, SourceUnreachableError } from '../connector.js';
import type { SqlConfig, SqlCredentials } from './sql-settings.js';

/**
 * Sessions with a SQL server: what a dialect supplies (how to connect, list tables and fetch pages),
 * where to connect from the credentials, and opening a session whose errors leave without secrets.
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

/** A value's trimmed text; null when it is not a string or is blank. */
export const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

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
export function serverAddress(dialect: SqlDialect, target: SqlTarget): string {
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
export function scrubbed(error: unknown, target: SqlTarget | null, credentials: SqlCredentials | null): unknown {
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
export function destroyOnAbort(session: SqlSession, signal: AbortSignal | undefined): () => void {
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
