import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { tightenTree } from '../data-directory.js';
import type { Logger } from '../logger.js';
import { threadExecArgv, untilReady } from '../threads.js';
import { type DatabaseOrigin, PGLITE_THREAD_URL, pgliteThreadInit, type PgliteThreadInit, type PgliteThreadReply, type PgliteThreadRequest } from './pglite-thread.js';

/**
 * The embedded deployment's PostgreSQL: PGlite (WASM Postgres) files under the data directory,
 * served over the Postgres wire protocol so the ORM uses the ordinary `pg` driver. Both run in a
 * thread of their own (pglite-thread.ts).
 *
 * Only one process may open the files. The one that does writes `pglite.json` (its pid and address);
 * every other process (the CLI while the server runs) connects to that address instead.
 *
 * PGlite's wire server has no authentication, so it listens on a Unix socket, never on TCP: the
 * socket sits in the data directory (created 0700) or, when that path is too long for a socket
 * name, in a private 0700 directory under the system temp directory. Only the user who runs
 * Catchment can connect.
 */
export interface EmbeddedPostgres {
  url: string;
  close(): Promise<void>;
}

interface Lock {
  pid: number;
  url: string | null;
}

/** The longest another process waits for this one's database to start (see lockOwner) before it takes the directory for its own. */
const STARTUP_WAIT_MS = 60_000;
/**
 * The longest the database's thread may take to start: a start that hangs would hold the open (and a
 * restart the pool) until it ended. Well within STARTUP_WAIT_MS, so a start is given up, and its thread
 * ended, before another process that found its lock stops waiting for it. A new database loads its
 * template in ~2.5 s on a slow 2-core host; initdb (no template) takes ~7 s.
 */
const THREAD_START_TIMEOUT_MS = 45_000;

/** Restarts of a database thread that ended while serving, within RESTART_WINDOW_MS, after which the directory is let go (see `lost`). */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 10 * 60_000;

const PGLITE_DIRECTORY = 'pglite';

/** Thrown when a server role finds the data directory in use by another process (or already by this one). */
export class DataDirectoryInUseError extends Error {}

/**
 * The data directories this process serves, by resolved path, and their URLs. A lock naming this
 * process's pid is otherwise taken for a stale one (a container's server is pid 1 at every start), so
 * without this a second open in the same process would start a second PGlite on the same files.
 */
const servedHere = new Map<string, string>();

/** Whether an embedded database was ever created under `dataDir` (a running server's included). */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(path.join(dataDir, PGLITE_DIRECTORY));
}

/**
 * `join`: operator commands may use the database of the server that owns the directory; server
 * roles may not (their in-process queue and pub/sub would not reach the other process).
 */
export async function openEmbeddedPostgres(options: {
  dataDir: string;
  logger: Logger;
  join: boolean;
  templateFile?: string;
  /** How the database's thread is made (a test keeps the Worker, to end it as a crash would). */
  newThread?: (url: URL, options: WorkerOptions) => Worker;
  /** The longest the thread may take to start (THREAD_START_TIMEOUT_MS; a test makes one that never does). */
  startTimeoutMs?: number;
}): Promise<EmbeddedPostgres> {
  const { dataDir, logger } = options;
  const served = servedHere.get(path.resolve(dataDir));
  if (served !== undefined) {
    if (!options.join) throw new DataDirectoryInUseError(`This process is already running Catchment on ${dataDir}`);
    return { url: served, close: async () => {} };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockFile = path.join(dataDir, 'pglite.json');
  const deadline = Date.now() + STARTUP_WAIT_MS;

  for (;;) {
    const lock = readLock(lockFile);
    const owner = lock && lock.pid !== process.pid ? await lockOwner(lockFile, lock, deadline) : 'gone';
    if (owner === 'changed') continue;
    if (lock && owner === 'serving') {
      if (!options.join) {
        throw new DataDirectoryInUseError(`Process ${lock.pid} is running Catchment on ${dataDir}: stop it first, or set another CATCHMENT_DATA_DIR`);
      }
      logger.debug({ pid: lock.pid }, 'joining the embedded database of a running process');
      return { url: lock.url!, close: async () => {} };
    }
    if (lock) rmSync(lockFile, { force: true }); // stale
    if (!tryWriteLock(lockFile, { pid: process.pid, url: null })) continue; // lost a race: look again
    break;
  }

  const socketDirectory = privateSocketDirectory(dataDir);
  let released = false;
  /**
   * Lets the directory go, once: its lock (while it still names this process) and the socket's directory.
   * (Once only: this process may have opened the directory again since, under a lock naming the same pid.)
   */
  const release = () => {
    if (released) return;
    released = true;
    servedHere.delete(path.resolve(dataDir));
    socketDirectory.remove();
    if (readLock(lockFile)?.pid === process.pid) rmSync(lockFile, { force: true });
  };
  const socket = path.join(socketDirectory.path, SOCKET_NAME);
  const url = `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDirectory.path)}`;
  const init = pgliteThreadInit({ directory: path.join(dataDir, PGLITE_DIRECTORY), templateFile: options.templateFile, socket, maxConnections: 32 });
  const newThread = options.newThread ?? ((url, workerOptions) => new Worker(url, workerOptions));
  /** When each restart of the thread (see `lost`) began, the earliest first, within RESTART_WINDOW_MS. */
  const restarts: number[] = [];
  let restarting: Promise<void> | null = null;
  let closing = false;
  /**
   * Starts the thread and serves: the socket a dead thread left removed, the files tightened (PGlite
   * writes a new database's files, and crash recovery its own, world-readable whatever the umask),
   * and the lock naming the address. A thread started whose files or lock could not be set is closed.
   */
  const startServing = async (): Promise<PgliteThread> => {
    rmSync(socket, { force: true });
    const thread = await startPgliteThread(init, newThread, options.startTimeoutMs ?? THREAD_START_TIMEOUT_MS, logger, lost);
    try {
      tightenTree(init.directory);
      writeLock(lockFile, { pid: process.pid, url });
    } catch (error) {
      await thread.close().catch(() => undefined);
      throw error;
    }
    return thread;
  };
  /**
   * The thread ended while serving (a crash: its files are as a killed PostgreSQL leaves them, which
   * the next open recovers). It is started again, so the pool's next connections reach a database;
   * past MAX_RESTARTS within RESTART_WINDOW_MS (or while closing) the directory is let go instead,
   * and queries fail until the process is restarted.
   */
  const lost = () => {
    const now = Date.now();
    while (restarts.length > 0 && now - restarts[0]! > RESTART_WINDOW_MS) restarts.shift();
    if (closing || restarts.length >= MAX_RESTARTS) {
      if (!closing) logger.error({ restarts: restarts.length }, 'the embedded database stopped again: it is not restarted; restart the process');
      release();
      return;
    }
    restarts.push(now);
    // The lock names no address while the thread starts again: another process finding this pid alive
    // waits for it (lockOwner) instead of taking the socket's silence for a dead server and the files with it.
    writeLock(lockFile, { pid: process.pid, url: null });
    restarting = startServing().then(
      (thread) => {
        serving = thread;
        logger.warn({ socket, origin: thread.origin }, 'embedded database restarted');
      },
      (error: unknown) => {
        logger.error({ err: error }, 'the embedded database could not be restarted');
        release();
      },
    );
  };
  let serving: PgliteThread | null = null;
  try {
    serving = await startServing(); // we hold the lock now
    servedHere.set(path.resolve(dataDir), url);
    logger.info({ socket, origin: serving.origin }, 'embedded database ready');
    return {
      url,
      close: async () => {
        closing = true;
        try {
          await restarting;
          await serving!.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    closing = true;
    await serving?.close().catch(() => undefined);
    release();
    throw error;
  }
}

interface PgliteThread {
  origin: DatabaseOrigin;
  /** Stops the wire server and closes the database; rejects when closing it failed. */
  close(): Promise<void>;
}

/**
 * Starts the database thread and waits until its wire server listens on `init.socket` (see untilReady:
 * a failed start rejects once its thread has ended). After that, the thread's end before `close()` is
 * the database's: logged as an error, and `lost` called (the pool's connections then fail).
 */
async function startPgliteThread(
  init: PgliteThreadInit,
  newThread: (url: URL, options: WorkerOptions) => Worker,
  startTimeoutMs: number,
  logger: Logger,
  lost: () => void,
): Promise<PgliteThread> {
  const thread = newThread(new URL(PGLITE_THREAD_URL), { workerData: init, name: 'catchment-pglite', execArgv: threadExecArgv(PGLITE_THREAD_URL) });
  /** How the thread's close went, as it said (null: closed), once it has. */
  let closeOutcome: Error | null | undefined;
  thread.on('message', (reply: PgliteThreadReply) => {
    if (reply.type === 'log') logger[reply.level]({ err: reply.error, templateFile: reply.templateFile }, reply.message);
    else if (reply.type === 'closed') {
      closeOutcome = reply.error === undefined ? null : new Error(reply.error);
      void thread.terminate(); // its files are closed (or could not be): nothing of its own is left to end
    }
  });
  const origin = await untilReady<PgliteThreadReply, DatabaseOrigin>(thread, 'the embedded database', startTimeoutMs, (reply: PgliteThreadReply) =>
    reply.type === 'ready' ? { ready: reply.origin } : reply.type === 'failed' ? { failed: reply.message } : undefined,
  );
  let state: 'serving' | 'closing' | 'ended' = 'serving';
  let closed: () => void = () => {};
  const whenClosed = new Promise<void>((done) => {
    closed = done;
  });
  const ended = (error: Error) => {
    if (state === 'ended') return; // 'error' is followed by 'exit'
    if (state === 'serving') {
      logger.error({ err: error }, 'the embedded database stopped');
      lost();
    } else if (closeOutcome === undefined) closeOutcome = error; // ended while closing, before saying how the close went
    state = 'ended';
    closed();
  };
  thread.on('error', ended);
  thread.on('exit', (code) => ended(new Error(`the embedded database's thread exited with code ${code}`)));
  return {
    origin,
    close: async () => {
      if (state === 'serving') {
        state = 'closing';
        thread.postMessage({ type: 'close' } satisfies PgliteThreadRequest);
      }
      await whenClosed;
      if (closeOutcome) throw closeOutcome;
    },
  };
}

/** libpq's socket file name inside the `host` directory (the `pg` driver looks for this name). */
const SOCKET_NAME = '.s.PGSQL.5432';
/** Unix socket paths are limited to 107 bytes on Linux (103 on macOS). */
const MAX_SOCKET_PATH = 100;

function privateSocketDirectory(dataDir: string): { path: string; remove(): void } {
  const inDataDir = path.resolve(dataDir);
  if (Buffer.byteLength(path.join(inDataDir, SOCKET_NAME)) <= MAX_SOCKET_PATH) return { path: inDataDir, remove: () => {} };
  const temporary = mkdtempSync(path.join(tmpdir(), 'catchment-pg-')); // mode 0700
  return { path: temporary, remove: () => rmSync(temporary, { recursive: true, force: true }) };
}

function readLock(file: string): Lock | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Lock;
  } catch {
    return null;
  }
}

/** Writes the lock (`wx`: only when there is none). */
function writeLock(file: string, lock: Lock, flag: 'w' | 'wx' = 'w'): void {
  writeFileSync(file, JSON.stringify(lock), { flag, mode: 0o600 });
}

function tryWriteLock(file: string, lock: Lock): boolean {
  try {
    writeLock(file, lock, 'wx');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * What became of the lock's owner. One that recorded its socket is `serving` if the socket answers;
 * one that has not yet is still starting PGlite (seconds), so we wait for it until `deadline`. A
 * lock whose socket does not answer, or whose pid never records one, is `gone`: its process died
 * and the pid may since belong to another program. `changed`: the lock went away or changed hands
 * while we waited.
 */
async function lockOwner(lockFile: string, lock: Lock, deadline: number): Promise<'serving' | 'gone' | 'changed'> {
  for (let current: Lock | null = lock; current?.pid === lock.pid; current = readLock(lockFile)) {
    if (!processAlive(current.pid)) return 'gone';
    if (current.url) {
      lock.url = current.url;
      return (await reachable(current.url)) ? 'serving' : 'gone';
    }
    if (Date.now() > deadline) return 'gone';
    await sleep(200);
  }
  return 'changed';
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function reachable(url: string): Promise<boolean> {
  const socketDirectory = new URL(url).searchParams.get('host');
  if (!socketDirectory) return Promise.resolve(false); // written by an older version, which listened on TCP
  return new Promise((resolve) => {
    const socket = connect({ path: path.join(socketDirectory, SOCKET_NAME) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
