import { afterAll, expect, jest, test } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import pg from 'pg';
import { capturingLogger } from '../../../test/support/capturing-logger.js';
import { waitFor } from '../../../test/support/wait.js';
import { createLogger } from '../logger.js';
import { ormOptions } from './database.js';
import { DataDirectoryInUseError, openEmbeddedPostgres } from './embedded-postgres.js';

const logger = createLogger('silent');
const directories: string[] = [];
const scratch = () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-pg-test-'));
  directories.push(directory);
  return directory;
};
afterAll(() => directories.forEach((directory) => rmSync(directory, { recursive: true, force: true })));

/** What answers on a URL: PGlite's version string names it, the machine's PostgreSQL's does not. */
async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ version: string }>('select version()')).rows[0]!.version;
  } finally {
    await client.end();
  }
}

test('the embedded database is served on a Unix socket in the data directory (its URL names the socket directory, no port) to the pg driver and to MikroORM', async () => {
  const dataDir = scratch();
  const embedded = await openEmbeddedPostgres({ dataDir, logger, join: false });
  try {
    const url = new URL(embedded.url);
    expect(url.searchParams.get('host')).toBe(dataDir);
    expect(url.port).toBe('');
    expect(statSync(path.join(dataDir, '.s.PGSQL.5432')).isSocket()).toBe(true);
    expect(statSync(path.join(dataDir, 'pglite.json')).mode & 0o777).toBe(0o600);
    expect(await serverVersion(embedded.url)).toMatch(/PGlite/);
    // Shared buffers kept small: PostgreSQL's 128 MB default is resident memory in PGlite's heap.
    const settings = new pg.Client({ connectionString: embedded.url });
    await settings.connect();
    expect((await settings.query<{ shared_buffers: string }>('show shared_buffers')).rows[0]!.shared_buffers).toBe('16MB');
    expect((await settings.query<{ wal_buffers: string }>('show wal_buffers').finally(() => settings.end())).rows[0]!.wal_buffers).toBe('4MB');
    // MikroORM takes the socket directory from the options (it would otherwise connect to the URL's hostname).
    const orm = await MikroORM.init(ormOptions(embedded.url, 1));
    try {
      const [row] = await orm.em.getConnection().execute<{ version: string }[]>('select version()');
      expect(row!.version).toMatch(/PGlite/);
    } finally {
      await orm.close(true);
    }
    // An operator command joins through the recorded socket; a second server on the directory is refused,
    // in this process too (its lock names this pid, as a stale lock of an earlier run under the same pid would).
    const joined = await openEmbeddedPostgres({ dataDir, logger, join: true });
    expect(joined.url).toBe(embedded.url);
    await joined.close();
    await expect(openEmbeddedPostgres({ dataDir, logger, join: false })).rejects.toThrow(DataDirectoryInUseError);
    expect(await serverVersion(embedded.url)).toMatch(/PGlite/);
  } finally {
    await embedded.close();
  }
  expect(existsSync(path.join(dataDir, 'pglite.json'))).toBe(false);
});

test('a data directory too deep for a socket name gets a private temporary socket directory, removed on close', async () => {
  const dataDir = path.join(scratch(), 'a-rather-long-directory-name-'.repeat(3), 'catchment-data');
  mkdirSync(dataDir, { recursive: true });
  const embedded = await openEmbeddedPostgres({ dataDir, logger, join: false });
  const socketDirectory = new URL(embedded.url).searchParams.get('host')!;
  try {
    expect(socketDirectory.startsWith(tmpdir())).toBe(true);
    expect(statSync(socketDirectory).mode & 0o777).toBe(0o700);
    expect(await serverVersion(embedded.url)).toMatch(/PGlite/);
  } finally {
    await embedded.close();
  }
  expect(existsSync(socketDirectory)).toBe(false);
});

test('a lock left by a dead server whose pid now belongs to another program is stale, not "in use"', async () => {
  const dataDir = scratch();
  // pid 1 is alive (it is init here), but it serves no database on the recorded socket.
  writeFileSync(path.join(dataDir, 'pglite.json'), JSON.stringify({ pid: 1, url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dataDir)}` }));
  // A lock taken for live would end in DataDirectoryInUseError (the start is not timed: PGlite's own start-up varies with load).
  const embedded = await openEmbeddedPostgres({ dataDir, logger, join: false });
  try {
    expect(JSON.parse(readFileSync(path.join(dataDir, 'pglite.json'), 'utf8')).pid).toBe(process.pid);
    expect(await serverVersion(embedded.url)).toMatch(/PGlite/);
  } finally {
    await embedded.close();
  }
});

/** Runs `sql` on the embedded database at `url`. */
async function query<Row extends object>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

test('a new database made by initdb is kept as the template, and the next new data directory starts from it, with nothing of the first in it', async () => {
  const templateFile = path.join(scratch(), 'cache', 'pglite-template.tar.gz');
  // The database's thread tells where the database it opened came from; the server logs it.
  const info = jest.spyOn(logger, 'info');
  const origin = () => info.mock.calls.filter(([, message]) => message === 'embedded database ready').map(([fields]) => (fields as { origin: string }).origin);
  try {
    const first = await openEmbeddedPostgres({ dataDir: scratch(), logger, join: false, templateFile });
    try {
      expect(origin()).toEqual(['initdb']);
      expect(statSync(templateFile).size).toBeGreaterThan(1_000_000);
      await query(first.url, 'create table only_in_the_first (id int)');
    } finally {
      await first.close();
    }
    info.mockClear();
    const second = await openEmbeddedPostgres({ dataDir: scratch(), logger, join: false, templateFile });
    try {
      expect(origin()).toEqual(['template']);
      expect(await query(second.url, "select to_regclass('only_in_the_first') as found")).toEqual([{ found: null }]);
      // The server's own settings still apply to a database loaded from the template.
      expect(await query(second.url, 'show shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await second.close();
    }
  } finally {
    info.mockRestore();
  }
});

test('a template that cannot be loaded is reported and the new database is made by initdb', async () => {
  const templateFile = path.join(scratch(), 'pglite-template.tar.gz');
  writeFileSync(templateFile, 'not a tarball');
  const warn = jest.spyOn(logger, 'warn');
  try {
    const embedded = await openEmbeddedPostgres({ dataDir: scratch(), logger, join: false, templateFile });
    try {
      expect(await serverVersion(embedded.url)).toMatch(/PGlite/);
      expect(warn.mock.calls.map(([, message]) => message)).toContain('the template of a new embedded database could not be loaded: the database is made anew');
      // Made anew, it is kept as the template in place of the broken one.
      expect(statSync(templateFile).size).toBeGreaterThan(1_000_000);
    } finally {
      await embedded.close();
    }
  } finally {
    warn.mockRestore();
  }
});

test("the embedded database runs its queries off the main thread: a long one leaves this thread's event loop turning", async () => {
  const embedded = await openEmbeddedPostgres({ dataDir: scratch(), logger, join: false });
  try {
    await query(embedded.url, 'select 1');
    // Gaps between the turns of this thread's event loop while a query takes 2 s in the database. Half
    // its length is the bound: CI's parallel test files stalled this thread 374 ms once against 600 ms
    // and 300 before, where a query run on this thread would hold it for all of its 2 s.
    let longestGap = 0;
    let last = performance.now();
    const ticking = setInterval(() => {
      longestGap = Math.max(longestGap, performance.now() - last);
      last = performance.now();
    }, 10);
    try {
      const started = performance.now();
      await query(embedded.url, 'select pg_sleep(2)');
      expect(performance.now() - started).toBeGreaterThanOrEqual(2000);
    } finally {
      clearInterval(ticking);
    }
    expect(longestGap).toBeLessThan(1000);
  } finally {
    await embedded.close();
  }
});

/** A start that failed left `dataDir` free: no lock, and the next open serves on it. */
async function expectDirectoryFree(dataDir: string): Promise<void> {
  expect(existsSync(path.join(dataDir, 'pglite.json'))).toBe(false);
  const embedded = await openEmbeddedPostgres({ dataDir, logger, join: false });
  try {
    expect(await serverVersion(embedded.url)).toMatch(/PGlite/);
  } finally {
    await embedded.close();
  }
}

test('a database its thread cannot open fails the start with its reason and leaves the data directory free', async () => {
  const dataDir = scratch();
  writeFileSync(path.join(dataDir, 'pglite'), 'not a database directory');
  // The thread's own reason, not the bare exit that follows it.
  await expect(openEmbeddedPostgres({ dataDir, logger, join: false })).rejects.toThrow(/could not be opened \(Emscripten errno 54\)/);
  // The directory is free: with the files made right, the next start serves.
  rmSync(path.join(dataDir, 'pglite'));
  await expectDirectoryFree(dataDir);
});

test('a database thread that never says it is ready fails the start at its timeout, ended, and leaves the data directory free', async () => {
  const dataDir = scratch();
  const threads: Worker[] = [];
  // A thread that hangs in its start, as a PGlite stuck opening its files would.
  const newThread = () => {
    const thread = new Worker('setInterval(() => {}, 1000)', { eval: true });
    threads.push(thread);
    return thread;
  };
  const started = Date.now();
  const opening = openEmbeddedPostgres({ dataDir, logger, join: false, newThread, startTimeoutMs: 500 });
  let ended = false;
  threads[0]!.once('exit', () => (ended = true));
  await expect(opening).rejects.toThrow('the embedded database did not start within 0.5 s');
  expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  expect(ended).toBe(true); // the start rejected once its thread had ended
  await expectDirectoryFree(dataDir);
});

test('a database thread that ends while serving is started again on the same files (committed rows kept, same URL); one that ends a fourth time within ten minutes lets the data directory go', async () => {
  const dataDir = scratch();
  const { logger, lines } = capturingLogger('info');
  const threads: Worker[] = [];
  const newThread = (url: URL, options: WorkerOptions) => {
    const thread = new Worker(url, options);
    threads.push(thread);
    return thread;
  };
  const embedded = await openEmbeddedPostgres({ dataDir, logger, join: false, newThread });
  const restarted = () => lines.filter((line) => line.msg === 'embedded database restarted').length;
  // The service's pool, with connections open when the thread ends: they are dropped, and new ones reach the new thread.
  const orm = await MikroORM.init(ormOptions(embedded.url, 4));
  try {
    await query(embedded.url, 'create table kept (x int); insert into kept values (42)');
    await Promise.all([1, 2, 3].map(() => orm.em.getConnection().execute('select pg_sleep(0.05)')));
    const lock = () => JSON.parse(readFileSync(path.join(dataDir, 'pglite.json'), 'utf8')) as { pid: number; url: string | null };
    // Ended from outside, as a crash of its WebAssembly would end it.
    await threads[0]!.terminate();
    // While the thread starts again (a second or more), the lock names no address: another process waits for this one.
    await waitFor(() => lock().url === null, 1000);
    await waitFor(() => restarted() === 1, 30_000);
    expect(await query(embedded.url, 'select x from kept')).toEqual([{ x: 42 }]);
    expect(await orm.em.getConnection().execute('select x from kept')).toEqual([{ x: 42 }]);
    // The lock names the address again (it named none while the thread started: other processes wait).
    expect(lock()).toEqual({ pid: process.pid, url: embedded.url });
    expect(lines.filter((line) => line.msg === 'the embedded database stopped' && line.level === 50)).toHaveLength(1);
    expect(threads).toHaveLength(2);

    // Three restarts are allowed within ten minutes: two more six minutes later, then one at eleven
    // (the first has left the window); the end after it, the fourth in the window, is not restarted.
    const restartAgain = async (restarts: number) => {
      await threads.at(-1)!.terminate();
      await waitFor(() => restarted() === restarts, 30_000);
    };
    let clockAhead = 0;
    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + clockAhead);
    clockAhead = 6 * 60_000;
    await restartAgain(2);
    await restartAgain(3);
    clockAhead = 11 * 60_000;
    await restartAgain(4);
    expect(await query(embedded.url, 'select count(*)::int as n from kept')).toEqual([{ n: 1 }]);
    await threads.at(-1)!.terminate();
    await waitFor(() => lines.some((line) => line.msg.startsWith('the embedded database stopped again')), 10_000);
    expect(threads).toHaveLength(5);
    expect(existsSync(path.join(dataDir, 'pglite.json'))).toBe(false);
    await expect(query(embedded.url, 'select 1')).rejects.toThrow();
  } finally {
    jest.restoreAllMocks();
    await orm.close(true);
    await embedded.close();
  }
  // The directory is free, and its database holds what was committed.
  const next = await openEmbeddedPostgres({ dataDir, logger, join: false });
  try {
    expect(await query(next.url, 'select x from kept')).toEqual([{ x: 42 }]);
  } finally {
    await next.close();
  }
});

test('a close during a restart waits for it and closes the new thread; a restart that fails lets the data directory go', async () => {
  const dataDir = scratch();
  const { logger, lines } = capturingLogger('info');
  const threads: Worker[] = [];
  let refuseFrom = Number.POSITIVE_INFINITY;
  const newThread = (url: URL, options: WorkerOptions) => {
    if (threads.length >= refuseFrom) throw new Error('no thread for you');
    const thread = new Worker(url, options);
    threads.push(thread);
    return thread;
  };
  const exited = (thread: Worker) => new Promise((resolve) => thread.once('exit', resolve));

  const first = await openEmbeddedPostgres({ dataDir, logger, join: false, newThread });
  await threads[0]!.terminate();
  await waitFor(() => threads.length === 2); // the restart has begun
  const successorExited = exited(threads[1]!);
  await first.close();
  await successorExited;
  expect(existsSync(path.join(dataDir, 'pglite.json'))).toBe(false);

  refuseFrom = 3; // the next open's thread is the third; its restart's (a fourth) is refused
  const second = await openEmbeddedPostgres({ dataDir, logger, join: false, newThread });
  try {
    await threads[2]!.terminate();
    await waitFor(() => lines.some((line) => line.msg === 'the embedded database could not be restarted'));
    expect(existsSync(path.join(dataDir, 'pglite.json'))).toBe(false);
  } finally {
    await second.close();
  }
});
