import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startServer, type Roles, type RunningServer } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/platform/logger.js';

/** The PostgreSQL and Redis this machine runs; tests create and drop their own database. */
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export type Deployment = 'embedded' | 'servers';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Test databases are named `<prefix><pid>_<random>`, so a test can look for what its process left behind. */
export const TEST_DATABASE_PREFIX = 'catchment_test_';

/** The test databases this process created that still exist. */
export async function leftoverTestDatabases(): Promise<string[]> {
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const result = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${TEST_DATABASE_PREFIX}${process.pid}\\_%`]);
    return result.rows.map((row) => row.datname);
  } finally {
    await admin.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${TEST_DATABASE_PREFIX}${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface TestServerOptions {
  deployment: Deployment;
  env?: Record<string, string>;
  /** Share another server's database (several API processes on one database). */
  databaseUrl?: string;
  /** Redis prefix to share with another server (several processes of one deployment). */
  redisPrefix?: string;
  /** Another Redis than this machine's (servers deployment), e.g. one the test kills and restarts. */
  redisUrl?: string;
  dataDir?: string;
  roles?: Roles;
}

export interface TestServer {
  url: string;
  config: Config;
  running: RunningServer;
  dataDir: string;
  /** Key of the default organization created at first start. */
  apiKey: string;
  databaseUrl: string | undefined;
  redisPrefix: string;
  stop(): Promise<void>;
  /** Drops what `stop` would (database, data directory) for a server already stopped through `running`. */
  discard(): Promise<void>;
}

/** Starts a real server on a loopback port, embedded (PGlite) or on this machine's PostgreSQL and Redis. */
export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'catchment-test-'));
  let database: TestDatabase | null = null;
  const discard = async () => {
    await database?.drop();
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  // Every deployment under test gets its own Redis keys, so parallel test files never share a queue.
  const redisPrefix = options.redisPrefix ?? `catchment-test-${Math.random().toString(36).slice(2, 10)}`;
  const bootstrapKey = `ck_test_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  // A start that fails drops what it made (database, data directory) before the error surfaces.
  let config: Config;
  let running: RunningServer;
  let databaseUrl: string | undefined;
  try {
    database = options.deployment === 'servers' && !options.databaseUrl ? await createTestDatabase() : null;
    databaseUrl = options.databaseUrl ?? database?.url;
    config = loadConfig(
      {
        PORT: '0',
        CATCHMENT_DATA_DIR: dataDir,
        CATCHMENT_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
        CATCHMENT_BOOTSTRAP_API_KEY: bootstrapKey,
        ...(options.deployment === 'servers'
          ? { DATABASE_URL: databaseUrl!, REDIS_URL: options.redisUrl ?? REDIS_URL, CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, CATCHMENT_REDIS_PREFIX: redisPrefix }
          : {}),
        ...options.env,
      },
      '/nonexistent/.env',
    );
    running = await startServer(config, createLogger(config.logLevel), options.roles);
  } catch (error) {
    await discard().catch(() => {});
    throw error;
  }
  return {
    url: running.url,
    config,
    running,
    dataDir,
    apiKey: running.bootstrapApiKey ?? bootstrapKey,
    databaseUrl,
    redisPrefix,
    stop: async () => {
      await running.stop();
      await discard();
    },
    discard,
  };
}

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small client for the REST paths: JSON in, JSON out, any headers. */
export async function http<T = any>(
  baseUrl: string,
  method: string,
  pathAndQuery: string,
  options: { apiKey?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(baseUrl + pathAndQuery, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Runs a GraphQL operation over HTTP. */
export async function graphql<T = any>(
  baseUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  auth: { apiKey?: string; token?: string } = {},
): Promise<HttpResult<{ data?: T; errors?: { message: string; extensions?: Record<string, any> }[] }>> {
  return http(baseUrl, 'POST', '/graphql', { ...auth, body: { query, variables } });
}
