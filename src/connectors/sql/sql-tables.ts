import type { Logger } from '../../platform/logger.js';
import { SourceConfigError } from '../connector.js';
import type { Column, SqlDialect, SqlSession, Table } from './sql-session.js';
import type { SqlConfig } from './sql-settings.js';

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
