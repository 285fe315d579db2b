import pg from 'pg';
import { z } from 'zod';
import { CredentialsRejectedError, SourceConfigError, SourceUnreachableError, type Connector, type FederatedHit } from '../connector.js';
import { rowEntity } from '../sql/sql-rows.js';
import { withSession, type Column, type ColumnKind, type PageRequest, type Row, type SqlDialect, type SqlSession, type SqlTarget, type SqlTimeouts, type Table } from '../sql/sql-session.js';
import { sqlConfigFields, type SqlCredentials, type SqlCursor } from '../sql/sql-settings.js';
import { sqlConnectorBase } from '../sql/sql-source.js';
import { planTables } from '../sql/sql-tables.js';

/**
 * `postgresql`: rows of a PostgreSQL database's tables as entities (see ../sql/sql-source.ts for
 * what is shared with `mysql`). Pages are keyset queries in primary-key order with the key values
 * passed back cast to their column types, so any key type pages exactly. Sessions run in UTC and
 * date/time values arrive as the server's text, so timestamps keep their microseconds.
 *
 * Federated mode (`federated_search: true`): nothing is synced; `search` asks the server itself
 * (`websearch_to_tsquery` and `ts_rank` over each table's text columns).
 */

const DATE_OIDS = [1082 /* date */, 1114 /* timestamp */, 1184 /* timestamptz */];

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (DATE_OIDS.includes(oid) ? (value: string) => value : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
const tableName = (table: Table) => `${quote(table.schema)}.${quote(table.name)}`;

function kindOf(base: string, category: string): ColumnKind {
  if (category === 'S' || category === 'E') return 'text'; // text, varchar, char, name, citext, enums
  if (base === 'date') return 'date';
  if (base === 'timestamp') return 'timestamp';
  if (base === 'timestamptz') return 'timestamptz';
  if (base === 'bytea') return 'binary';
  return 'other';
}

/** SQLSTATEs of a refused login: bad password, unknown role or no pg_hba entry, unknown database. */
const REFUSED = new Set(['28P01', '28000', '3D000']);

export class PostgresSession implements SqlSession {
  constructor(readonly client: pg.Client) {}

  async tables(schemas: string[]): Promise<Table[]> {
    const { rows } = await this.client.query<{ schema: string; name: string; columns: { name: string; type: string; base: string; category: string }[]; primary_key: string[] }>(
      `SELECT n.nspname AS schema, c.relname AS name,
         (SELECT coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod), 'base', b.typname, 'category', b.typcategory) ORDER BY a.attnum), '[]')
            FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
         (SELECT coalesce(json_agg(a.attname ORDER BY k.ord), '[]')
            FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
           WHERE i.indrelid = c.oid AND i.indisprimary) AS primary_key
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
        AND (cardinality($1::text[]) = 0 OR n.nspname = ANY($1::text[]))
        AND has_table_privilege(c.oid, 'SELECT')
      ORDER BY n.nspname, c.relname`,
      [schemas],
    );
    return rows.map((row) => ({
      schema: row.schema,
      name: row.name,
      columns: row.columns.map((column): Column => ({ name: column.name, type: column.type, kind: kindOf(column.base, column.category) })),
      primaryKey: row.primary_key,
    }));
  }

  async page({ table, after, limit, since, keysOnly }: PageRequest): Promise<Row[]> {
    const params: unknown[] = [];
    // Cast to the column's type: the value round-trips exactly whatever the key type.
    const param = (value: unknown, column: string) => {
      params.push(value);
      return `$${params.length}::${table.columns.find((c) => c.name === column)!.type}`;
    };
    const key = table.primaryKey.map(quote).join(', ');
    const conditions: string[] = [];
    if (after) conditions.push(`(${key}) > (${after.map((value, index) => param(value, table.primaryKey[index]!)).join(', ')})`);
    if (since) conditions.push(`${quote(since.column)} >= ${param(since.value, since.column)}`);
    const columns = keysOnly ? table.primaryKey : table.columns.map((column) => column.name);
    const where = conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
    const { rows } = await this.client.query<Row>(`SELECT ${columns.map(quote).join(', ')} FROM ${tableName(table)}${where} ORDER BY ${key} LIMIT ${Math.trunc(limit)}`, params);
    return rows;
  }

  async max(table: Table, column: string): Promise<string | null> {
    const { rows } = await this.client.query<{ max: string | null }>(`SELECT max(${quote(column)})::text AS max FROM ${tableName(table)}`);
    return rows[0]?.max ?? null;
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  destroy(): void {
    this.client.end().catch(() => undefined); // ends the socket now; a query in flight fails with "Connection terminated"
  }
}

export const postgresDialect: SqlDialect<PostgresSession> = {
  shortName: 'postgresql',
  label: 'PostgreSQL',
  schemes: ['postgresql', 'postgres'],
  defaultPort: 5432,

  async connect(target: SqlTarget, timeouts: SqlTimeouts): Promise<PostgresSession> {
    const client = new pg.Client({
      ...(target.url ? { connectionString: target.url } : { host: target.host, port: target.port, database: target.database, user: target.user, password: target.password ?? '' }),
      connectionTimeoutMillis: timeouts.connectMs,
      statement_timeout: timeouts.queryMs,
      // The client-side limit too: a server that stops answering never cancels anything itself.
      query_timeout: timeouts.queryMs + 1000,
      application_name: 'catchment',
      options: '-c TimeZone=UTC',
      types,
    });
    // A connection dropped between queries is reported by the next query; unhandled, this event would end the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      const { code, message } = error as { code?: string; message: string };
      if (code && REFUSED.has(code)) throw new CredentialsRejectedError(`PostgreSQL refused the connection: ${message}`);
      throw new SourceUnreachableError(`Cannot reach the PostgreSQL server at ${target.host}:${target.port}: ${message || code || 'connection failed'}`);
    }
    return new PostgresSession(client);
  },
};

const DEFAULT_TEXT_SEARCH_CONFIG = 'english';

const config = z.strictObject({
  ...sqlConfigFields(postgresDialect, 'Schemas to read; empty reads every schema except the system ones.'),
  federated_search: z.boolean().default(false).meta({ title: 'Federated search', description: 'Search the database at query time with its own full-text search instead of syncing its rows.' }),
  text_search_config: z
    .string()
    .default(DEFAULT_TEXT_SEARCH_CONFIG)
    .transform((name) => name.trim() || DEFAULT_TEXT_SEARCH_CONFIG)
    .meta({ title: 'Text search configuration', description: 'PostgreSQL text search configuration of federated search (its language: english, simple, german…).' }),
});

type PostgresConfig = z.output<typeof config>;

/** A text search configuration the server does not know is a config error, with the server's message. */
async function checkTextSearchConfig(session: PostgresSession, settings: PostgresConfig): Promise<void> {
  try {
    await session.client.query('SELECT $1::regconfig', [settings.text_search_config]);
  } catch (error) {
    throw new SourceConfigError('text_search_config', (error as Error).message);
  }
}

const RANK = '__catchment_rank';

const connector: Connector<PostgresConfig, SqlCredentials, SqlCursor> = {
  shortName: 'postgresql',
  name: 'PostgreSQL',
  description:
    'Rows of PostgreSQL tables as entities (schema and table as breadcrumbs, the primary key as id, text columns as text, every column in the fields). Full syncs remove deleted rows; a cursor column makes syncs incremental. Federated mode searches the database itself with its full-text search instead of syncing.',
  ...sqlConnectorBase(postgresDialect, checkTextSearchConfig),
  config,
  federatedSearch: false,
  outputEntityDefinitions: ['PostgresqlRow'],

  /**
   * Each table with text columns is asked for its best rows by `ts_rank` of its text columns
   * against `websearch_to_tsquery` (quotes, OR and -negation as in web search engines); the
   * tables' hits are merged by rank.
   */
  async search({ config: settings, credentials, signal, logger }, query) {
    const language = settings.text_search_config;
    const limit = Math.max(1, Math.trunc(query.limit));
    return withSession(postgresDialect, credentials, settings, async (session, target) => {
      const plans = await planTables(session, settings, logger, postgresDialect);
      const hits: FederatedHit[] = [];
      for (const plan of plans) {
        if (plan.textColumns.length === 0) continue;
        signal.throwIfAborted();
        const document = `to_tsvector($1::regconfig, concat_ws(' ', ${plan.textColumns.map((column) => `t.${quote(column.name)}::text`).join(', ')}))`;
        const { rows } = await session.client.query<Row>(
          `SELECT ${plan.table.columns.map((column) => `t.${quote(column.name)}`).join(', ')}, ts_rank(d.document, q.query) AS ${RANK}
             FROM ${tableName(plan.table)} AS t
            CROSS JOIN websearch_to_tsquery($1::regconfig, $2) AS q(query)
            CROSS JOIN LATERAL (SELECT ${document}) AS d(document)
            WHERE d.document @@ q.query
            ORDER BY ${RANK} DESC, ${plan.table.primaryKey.map((column) => `t.${quote(column)}`).join(', ')}
            LIMIT $3`,
          [language, query.text, limit],
        );
        for (const row of rows) hits.push({ entity: rowEntity(plan, row, { dialect: postgresDialect, target }), score: Number(row[RANK]) });
      }
      return hits.sort((a, b) => b.score - a.score).slice(0, limit);
    }, signal);
  },
};

export default connector;
