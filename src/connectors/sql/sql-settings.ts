import { z } from 'zod';

/**
 * The settings both SQL sources share: their credentials (a URL, or its parts) and config fields.
 * Names in lists and the cursor column are trimmed, and blank ones dropped, when parsed.
 */

interface DialectNames {
  label: string;
  schemes: string[];
  defaultPort: number;
}

export function sqlCredentials(dialect: DialectNames) {
  return z.strictObject({
    url: z
      .string()
      .optional()
      .meta({ title: 'Connection URL', description: `${dialect.schemes[0]}://user:password@host:${dialect.defaultPort}/database (instead of the fields below; driver options in the query string apply).`, secret: true }),
    host: z.string().optional().meta({ title: 'Host' }),
    port: z.int().min(1).max(65535).default(dialect.defaultPort).meta({ title: 'Port' }),
    database: z.string().optional().meta({ title: 'Database' }),
    user: z.string().optional().meta({ title: 'User' }),
    password: z.string().optional().meta({ title: 'Password', secret: true }),
  });
}

export type SqlCredentials = z.infer<ReturnType<typeof sqlCredentials>>;

const names = z
  .array(z.string())
  .default([])
  .transform((list) => list.map((name) => name.trim()).filter((name) => name !== ''));

const DEFAULT_BATCH_SIZE = 1000;

/** The config fields both SQL sources have; a source adds its own to them. */
export function sqlConfigFields(dialect: Pick<DialectNames, 'label'>, schemasDescription: string) {
  return {
    schemas: names.meta({ title: 'Schemas', description: schemasDescription }),
    tables: names.meta({
      title: 'Tables',
      description: 'Tables to read, as "table" or "schema.table"; empty reads every table of the schemas. Tables without a primary key are skipped unless named here (then refused).',
    }),
    text_columns: names.meta({
      title: 'Text columns',
      description:
        'Columns that make up the searchable text, as "column", "table.column" or "schema.table.column". A table none of them names uses all its text columns. Every column is kept in the entity fields either way.',
    }),
    cursor_column: z
      .string()
      .optional()
      .transform((name) => name?.trim() || null)
      .meta({
        title: 'Cursor column',
        description:
          'A column every read table has that grows when a row changes (e.g. updated_at or a version number). Set: later runs read only rows whose value is at least the largest one the previous run saw. Unset: every run reads every row.',
      }),
    incremental_deletes: z
      .boolean()
      .default(true)
      .meta({ title: 'Detect deletions on incremental runs', description: 'With a cursor column, incremental runs also list the primary keys of every table (cheap) so deleted rows are removed; off, deletions wait for a full sync.' }),
    batch_size: z.int().min(1).max(50_000).default(DEFAULT_BATCH_SIZE).meta({ title: 'Rows per query' }),
    connect_timeout_seconds: z.int().min(1).max(300).default(10).meta({ title: 'Connect timeout (seconds)' }),
    query_timeout_seconds: z.int().min(1).max(3600).default(60).meta({ title: 'Query timeout (seconds)', description: `Longest a single ${dialect.label} query may run.` }),
  };
}

export type SqlConfig = z.output<z.ZodObject<ReturnType<typeof sqlConfigFields>>>;

/** A stored cursor: the column it was taken on, and by table key the largest value seen when the table was read (the server's text). */
export const sqlCursor = z.object({
  version: z.literal(1),
  column: z.string(),
  tables: z.record(z.string(), z.string().nullable()),
});

export type SqlCursor = z.infer<typeof sqlCursor>;
