import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { startServer } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { DatabaseUnreachableError } from '../../src/platform/db/wait-for-database.js';
import { capturingLogger, type LogLine } from '../support/capturing-logger.js';
import { createTestDatabase, REDIS_URL, TEST_ENCRYPTION_KEY, type TestDatabase } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { runCli } from '../support/process.js';

/**
 * Issue 12, finding 14: started against a PostgreSQL that accepts TCP and never answers, the
 * process hung forever without a log line; a refused port failed at once, so a database still
 * starting (a compose stack) failed the start. Start-up now tries with a timeout per attempt,
 * retries with growing pauses for CATCHMENT_DATABASE_CONNECT_TIMEOUT_SECONDS, logs every attempt
 * with the password masked, then fails with a clear error.
 */

const PASSWORD = 'hunter2-do-not-log';

/** A loopback server that accepts connections and never says a word. */
async function startSilentServer() {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await listen(server);
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => sockets.length,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const listen = (server: Server, port = 0) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

interface ConnectLogLine extends LogLine {
  attempt?: number;
  retryInMs?: number;
  database?: string;
}

const configFor = (databaseUrl: string, timeoutSeconds: number) =>
  loadConfig(
    {
      PORT: '0',
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      CATCHMENT_REDIS_PREFIX: `issue12-14-${Math.random().toString(36).slice(2, 8)}`,
      CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      CATCHMENT_DATABASE_CONNECT_TIMEOUT_SECONDS: String(timeoutSeconds),
    },
    '/nonexistent/.env',
  );

/** Starts the API in-process and returns how long it took to fail and what it logged. */
async function failedStart(databaseUrl: string, timeoutSeconds: number) {
  const { logger, lines, raw } = capturingLogger<ConnectLogLine>('info');
  const started = Date.now();
  const error = await startServer(configFor(databaseUrl, timeoutSeconds), logger, { api: true, worker: false }).then(
    async (running) => {
      await running.stop();
      throw new Error('start-up succeeded');
    },
    (failure: unknown) => failure as Error,
  );
  return { error, elapsedMs: Date.now() - started, lines, raw };
}

describe('issue 12-14: start-up against an unreachable PostgreSQL', () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let database: TestDatabase;

  beforeAll(async () => {
    [silent, database] = await Promise.all([startSilentServer(), createTestDatabase()]);
  });
  afterAll(async () => {
    await Promise.all([silent?.close(), database?.drop()]);
  });

  test('a server that accepts TCP and never answers: each attempt times out and is logged, and start-up fails within the configured time', async () => {
    const { error, elapsedMs, lines, raw } = await failedStart(`postgresql://catchment:${PASSWORD}@127.0.0.1:${silent.port}/catchment`, 3);
    expect(error).toBeInstanceOf(DatabaseUnreachableError);
    expect(error.message).toMatch(/could not be reached in 3 s \(\d+ attempts, the last: (timeout expired|Connection terminated due to connection timeout)\)/);
    expect(elapsedMs).toBeGreaterThanOrEqual(2900);
    expect(elapsedMs).toBeLessThan(6000);
    const attempts = lines.filter((line) => line.msg === 'connecting to PostgreSQL');
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.map((line) => line.attempt)).toEqual(attempts.map((_, index) => index + 1));
    expect(attempts[0]!.database).toBe(`postgresql://catchment:redacted@127.0.0.1:${silent.port}/catchment`);
    expect(silent.accepted()).toBe(attempts.length);
    expect([...raw, error.message].join('\n')).not.toContain(PASSWORD);
  });

  test('a refused port is retried with growing pauses until the time is spent, not given up at once', async () => {
    const port = await freePort();
    const { error, elapsedMs, lines } = await failedStart(`postgresql://catchment:${PASSWORD}@127.0.0.1:${port}/catchment`, 2);
    expect(error).toBeInstanceOf(DatabaseUnreachableError);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(elapsedMs).toBeGreaterThanOrEqual(1900);
    expect(elapsedMs).toBeLessThan(4000);
    const pauses = lines.filter((line) => line.msg === 'PostgreSQL is not reachable yet').map((line) => line.retryInMs!);
    expect(pauses.length).toBeGreaterThanOrEqual(3);
    expect(pauses.slice(0, 3)).toEqual([250, 500, 1000]);
  });

  test('a database that comes up during the wait is used: the server starts', async () => {
    const port = await freePort();
    const target = new URL(database.url);
    const upstreamPort = Number(target.port || 5432);
    // A proxy to the real PostgreSQL that starts listening a second and a half late.
    const proxy = createServer((client) => {
      const upstream = connect(upstreamPort, target.hostname);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    const late = setTimeout(() => void listen(proxy, port), 1500);
    const { logger, lines } = capturingLogger<ConnectLogLine>('info');
    target.host = `127.0.0.1:${port}`;
    try {
      const running = await startServer(configFor(target.toString(), 20), logger, { api: true, worker: false });
      await running.stop();
      expect(lines.filter((line) => line.msg === 'PostgreSQL is not reachable yet').length).toBeGreaterThanOrEqual(2);
      expect(lines.some((line) => line.msg === 'connected to PostgreSQL')).toBe(true);
    } finally {
      clearTimeout(late);
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  test('a database that does not exist fails at once: no retry can create it', async () => {
    const missing = new URL(database.url);
    missing.pathname = '/catchment_issue12_14_missing';
    const { error, elapsedMs, lines } = await failedStart(missing.toString(), 30);
    expect(error).toBeInstanceOf(DatabaseUnreachableError);
    expect(error.message).toMatch(/refused the connection: database "catchment_issue12_14_missing" does not exist/);
    expect(elapsedMs).toBeLessThan(3000);
    expect(lines.filter((line) => line.msg === 'connecting to PostgreSQL')).toHaveLength(1);
  });

  test('the process: `catchment start` logs its attempts, prints the reason and exits with 1', async () => {
    const result = await runCli(['start'], {
      DATABASE_URL: `postgresql://catchment:${PASSWORD}@127.0.0.1:${silent.port}/catchment`,
      CATCHMENT_DATABASE_CONNECT_TIMEOUT_SECONDS: '2',
      CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PORT: '0',
    });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr.trim().split('\n').at(-1)!).error).toMatch(/^PostgreSQL at postgresql:\/\/catchment:redacted@127\.0\.0\.1:\d+\/catchment could not be reached in 2 s/);
    expect(result.stdout.match(/"msg":"connecting to PostgreSQL"/g)!.length).toBeGreaterThanOrEqual(2);
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
  }, 60_000);
});
