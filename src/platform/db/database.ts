import pg from 'pg';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../logger.js';
import { openEmbeddedPostgres } from './embedded-postgres.js';
import { entities } from './entities.js';
import { CONNECT_ATTEMPT_TIMEOUT_MS, waitForDatabase } from './wait-for-database.js';
import { migrations } from '../../migrations/index.js';

export type Orm = MikroORM;

export interface Database {
  orm: Orm;
  /** `embedded` (PGlite under the data directory) or `postgres` (DATABASE_URL). */
  kind: 'embedded' | 'postgres';
  ping(): Promise<void>;
  /** Applies pending migrations; returns the names of those applied. */
  migrate(): Promise<string[]>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  logger: Logger;
  /** Embedded only: use the database of the process that owns the data directory (operator commands). */
  joinRunningServer: boolean;
  /** External PostgreSQL only: how long start-up keeps trying to reach it. */
  connectTimeoutSeconds: number;
}

/** Arbitrary constant: the PostgreSQL advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK = 0x63617463; // "catc"

export function ormOptions(clientUrl: string, poolMax: number): Options {
  return {
    clientUrl,
    // A Unix socket directory (`?host=/dir`, the embedded database): the pg driver reads it from the URL
    // but MikroORM would take the URL's hostname over it, so it is passed on its own.
    host: new URL(clientUrl).searchParams.get('host') ?? undefined,
    entities,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    // The migrations' own triggers (the entity rows of a deleted connection: migration entities_connection_trigger)
    // are not in the entity metadata; the schema diff is not to drop them.
    schemaGenerator: { ignoreTriggers: true },
    pool: { min: 0, max: poolMax },
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    debug: false,
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) await waitForDatabase(options.databaseUrl, { timeoutMs: options.connectTimeoutSeconds * 1000, logger: options.logger });
  const embedded = options.databaseUrl
    ? null
    : await openEmbeddedPostgres({ dataDir: options.dataDir, logger: options.logger, join: options.joinRunningServer });
  const url = options.databaseUrl ?? embedded!.url;
  // A PostgreSQL server that never answers fails a new connection instead of holding its query forever.
  // Not PGlite's: it makes other connections wait while one is in a transaction, as long as that takes (0: no limit).
  const connectTimeoutMs = embedded ? 0 : CONNECT_ATTEMPT_TIMEOUT_MS;
  let orm: Orm;
  try {
    // PGlite runs one query at a time whatever the pool size: a small pool avoids needless queueing.
    orm = await MikroORM.init({ ...ormOptions(url, embedded ? 4 : 10), driverOptions: { connectionTimeoutMillis: connectTimeoutMs } });
  } catch (error) {
    await embedded?.close();
    throw error;
  }
  return {
    orm,
    kind: embedded ? 'embedded' : 'postgres',
    ping: async () => {
      await orm.em.getConnection().execute('select 1');
    },
    migrate: () => migrateWithLock(orm, new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs })),
    close: async () => {
      await orm.close(true);
      await embedded?.close();
    },
  };
}

/**
 * Applies pending migrations. Several processes may start at once against one database: a
 * session-level advisory lock, held on a connection of its own, makes them take turns, and the
 * later ones find nothing left to do. (Not a transaction-scoped lock: PGlite serves only the
 * connection inside a transaction, so the migrator's own connections would wait forever.)
 */
async function migrateWithLock(orm: Orm, lockConnection: pg.Client): Promise<string[]> {
  await lockConnection.connect();
  try {
    await lockConnection.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await orm.migrator.up();
    return applied.map((migration) => migration.name);
  } finally {
    await lockConnection.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await lockConnection.end();
  }
}
