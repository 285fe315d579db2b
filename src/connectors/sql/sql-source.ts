import type { Connector, SourceItem, SourceRun, SyncContext } from '../connector.js';
import { rowEntity, rowEntityId } from './sql-rows.js';
import { destroyOnAbort, resolveTarget, scrubbed, serverAddress, timeoutsOf, withSession, type PageRequest, type Row, type SqlDialect, type SqlSession, type SqlTarget } from './sql-session.js';
import { sqlCredentials, sqlCursor, type SqlConfig, type SqlCredentials, type SqlCursor } from './sql-settings.js';
import { planTables, type TablePlan } from './sql-tables.js';

/**
 * What the `postgresql` and `mysql` sources share: connection settings (`sql-settings.ts`), sessions
 * and the dialect each source supplies (`sql-session.ts`), which tables a connection reads
 * (`sql-tables.ts`), how a row becomes an entity (`sql-rows.ts`), and the run itself, here (keyset pages
 * in primary-key order, full or by a cursor column). Each source supplies a dialect: how to connect, list
 * tables and fetch pages.
 */

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
