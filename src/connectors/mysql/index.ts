import mysql from 'mysql2/promise';
import { z } from 'zod';
import { CredentialsRejectedError, SourceUnreachableError, type Connector } from '../connector.js';
import type { Column, ColumnKind, PageRequest, Row, SqlDialect, SqlSession, SqlTarget, SqlTimeouts, Table } from '../sql/sql-session.js';
import { sqlConfigFields, type SqlConfig, type SqlCredentials, type SqlCursor } from '../sql/sql-settings.js';
import { sqlConnectorBase } from '../sql/sql-source.js';

/**
 * `mysql` (MySQL and MariaDB): rows of tables as entities, like `postgresql` (see
 * ../sql/sql-source.ts). A schema is a MySQL database; by default the connection's own. Pages are
 * keyset queries in primary-key order; dates, big integers and decimals arrive as the server's
 * text, in a UTC session, so nothing is rounded or shifted.
 */

const quote = (identifier: string) => `\`${identifier.replaceAll('`', '``')}\``;
const tableName = (table: Table) => `${quote(table.schema)}.${quote(table.name)}`;

const TEXT_TYPES = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum', 'set']);
const BINARY_TYPES = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'bit', 'geometry', 'point', 'linestring', 'polygon']);

function kindOf(dataType: string, charset: string | null): ColumnKind {
  if (charset === 'binary' || BINARY_TYPES.has(dataType)) return 'binary';
  if (TEXT_TYPES.has(dataType)) return 'text';
  if (dataType === 'date') return 'date';
  if (dataType === 'datetime') return 'timestamp';
  if (dataType === 'timestamp') return 'timestamptz'; // stored in UTC, read in a UTC session
  return 'other';
}

/** Server errors of a refused login: bad user or password, no access to the database, unknown database. */
const REFUSED = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'ER_HOST_NOT_PRIVILEGED', 'ER_NOT_SUPPORTED_AUTH_MODE']);

type Rows<T> = (T & mysql.RowDataPacket)[];

class MysqlSession implements SqlSession {
  /** A query failed (timed out, perhaps still running on the server) or the socket was dropped: closing politely would wait forever. */
  private abandoned = false;

  constructor(
    private readonly connection: mysql.Connection,
    private readonly timeoutMs: number,
  ) {}

  private async query<T>(sql: string, values: unknown[] = []): Promise<Rows<T>> {
    try {
      const [rows] = await this.connection.query<Rows<T>>({ sql, values, timeout: this.timeoutMs });
      return rows;
    } catch (error) {
      this.abandoned = true;
      throw error;
    }
  }

  async setUtc(): Promise<void> {
    await this.query("SET time_zone = '+00:00'");
  }

  async tables(schemas: string[]): Promise<Table[]> {
    const wanted = schemas.length ? schemas : [(await this.query<{ name: string | null }>('SELECT DATABASE() AS name'))[0]?.name].filter((name): name is string => !!name);
    if (wanted.length === 0) return [];
    const tables = await this.query<{ schema_name: string; table_name: string }>(
      `SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS table_name FROM information_schema.TABLES
        WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN (?) ORDER BY TABLE_SCHEMA, TABLE_NAME`,
      [wanted],
    );
    const columns = await this.query<{ schema_name: string; table_name: string; column_name: string; data_type: string; column_type: string; charset: string | null }>(
      `SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS table_name, COLUMN_NAME AS column_name, DATA_TYPE AS data_type, COLUMN_TYPE AS column_type, CHARACTER_SET_NAME AS charset
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN (?) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
      [wanted],
    );
    const keys = await this.query<{ schema_name: string; table_name: string; column_name: string }>(
      `SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS table_name, COLUMN_NAME AS column_name FROM information_schema.KEY_COLUMN_USAGE
        WHERE CONSTRAINT_NAME = 'PRIMARY' AND TABLE_SCHEMA IN (?) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
      [wanted],
    );
    const same = (table: { schema_name: string; table_name: string }) => (row: { schema_name: string; table_name: string }) => row.schema_name === table.schema_name && row.table_name === table.table_name;
    return tables.map((table) => ({
      schema: table.schema_name,
      name: table.table_name,
      columns: columns.filter(same(table)).map((column): Column => ({ name: column.column_name, type: column.column_type, kind: kindOf(String(column.data_type).toLowerCase(), column.charset) })),
      primaryKey: keys.filter(same(table)).map((key) => key.column_name),
    }));
  }

  async page({ table, after, limit, since, keysOnly }: PageRequest): Promise<Row[]> {
    const values: unknown[] = [];
    const conditions: string[] = [];
    const key = table.primaryKey;
    if (after) {
      // (a, b) > (x, y) spelled out, which every MySQL and MariaDB version turns into index ranges.
      const branches = key.map((column, index) => {
        const equal = key.slice(0, index).map((previous, j) => {
          values.push(after[j]);
          return `${quote(previous)} = ?`;
        });
        values.push(after[index]);
        return `(${[...equal, `${quote(column)} > ?`].join(' AND ')})`;
      });
      conditions.push(`(${branches.join(' OR ')})`);
    }
    if (since) {
      values.push(since.value);
      conditions.push(`${quote(since.column)} >= ?`);
    }
    const columns = keysOnly ? key : table.columns.map((column) => column.name);
    const where = conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
    return this.query<Row>(`SELECT ${columns.map(quote).join(', ')} FROM ${tableName(table)}${where} ORDER BY ${key.map(quote).join(', ')} LIMIT ${Math.trunc(limit)}`, values);
  }

  async max(table: Table, column: string): Promise<string | null> {
    const [row] = await this.query<{ max: string | null }>(`SELECT CAST(MAX(${quote(column)}) AS CHAR) AS max FROM ${tableName(table)}`);
    return row?.max ?? null;
  }

  async close(): Promise<void> {
    if (this.abandoned) this.connection.destroy();
    else await this.connection.end();
  }

  destroy(): void {
    this.abandoned = true;
    this.connection.destroy();
  }
}

const dialect: SqlDialect<MysqlSession> = {
  shortName: 'mysql',
  label: 'MySQL',
  schemes: ['mysql', 'mariadb'],
  defaultPort: 3306,

  async connect(target: SqlTarget, timeouts: SqlTimeouts): Promise<MysqlSession> {
    let connection: mysql.Connection;
    try {
      connection = await mysql.createConnection({
        ...(target.url ? { uri: target.url } : { host: target.host, port: target.port, database: target.database, user: target.user, password: target.password ?? '' }),
        connectTimeout: timeouts.connectMs,
        dateStrings: true,
        supportBigNumbers: true,
        bigNumberStrings: true,
        charset: 'UTF8MB4_GENERAL_CI',
      });
    } catch (error) {
      const { code, message } = error as { code?: string; message: string };
      if (code && REFUSED.has(code)) throw new CredentialsRejectedError(`MySQL refused the connection: ${message}`);
      throw new SourceUnreachableError(`Cannot reach the MySQL server at ${target.host}:${target.port}: ${message || code || 'connection failed'}`);
    }
    // A connection dropped between queries is reported by the next query; unhandled, this event would end the process.
    connection.on('error', () => undefined);
    const session = new MysqlSession(connection, timeouts.queryMs);
    try {
      await session.setUtc();
    } catch (error) {
      await session.close().catch(() => undefined);
      throw error;
    }
    return session;
  },
};

const connector: Connector<SqlConfig, SqlCredentials, SqlCursor> = {
  shortName: 'mysql',
  name: 'MySQL / MariaDB',
  description:
    'Rows of MySQL or MariaDB tables as entities (database and table as breadcrumbs, the primary key as id, text columns as text, every column in the fields). Full syncs remove deleted rows; a cursor column makes syncs incremental.',
  ...sqlConnectorBase(dialect),
  config: z.strictObject(sqlConfigFields(dialect, "Databases (MySQL's schemas) to read; empty reads the connection's database.")),
  federatedSearch: false,
  outputEntityDefinitions: ['MysqlRow'],
};

export default connector;
