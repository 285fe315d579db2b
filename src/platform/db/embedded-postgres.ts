import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { tightenTree } from '../data-directory.js';
import type { Logger } from '../logger.js';
import { defaultTemplateFile, keepAsTemplate, readTemplate } from './pglite-template.js';

/**
 * The embedded deployment's PostgreSQL: PGlite (WASM Postgres) files under the data directory,
 * served over the Postgres wire protocol so the ORM uses the ordinary `pg` driver.
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

const STARTUP_WAIT_MS = 60_000;

const PGLITE_DIRECTORY = 'pglite';

/**
 * Server settings of the embedded database. PostgreSQL's default 128 MB of shared buffers is memory
 * PGlite touches at start inside its WebAssembly heap: 270 MB of resident memory measured here,
 * before the first query (bench:sync reports the process's memory). One process with a small working
 * set (connection rows, entity hashes by connection) needs far less, and the operating system's page
 * cache still holds the files PGlite reads through Node. The WAL's buffers are set to 4 MB (they
 * default to a 32nd of the shared buffers, 512 kB): a sync's 2,000-row upsert writes about 1 MB of WAL,
 * which went to the files through Node in more, smaller writes (main thread in PGlite's file writes,
 * 100,000-entity bench:sync: 236 → 171–174 ms).
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB', '-c', 'wal_buffers=4MB'];

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
export async function openEmbeddedPostgres(options: { dataDir: string; logger: Logger; join: boolean; templateFile?: string }): Promise<EmbeddedPostgres> {
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
  try {
    const db = await openPglite(path.join(dataDir, PGLITE_DIRECTORY), options.templateFile, logger);
    // PGlite writes the files of a new database (and some of its caches) world-readable whatever the umask.
    tightenTree(path.join(dataDir, PGLITE_DIRECTORY));
    const socket = path.join(socketDirectory.path, SOCKET_NAME);
    rmSync(socket, { force: true }); // left by a process that died; we hold the lock now
    const server = new PGLiteSocketServer({ db, path: socket, maxConnections: 32 });
    await server.start();
    const url = `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDirectory.path)}`;
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, url } satisfies Lock), { mode: 0o600 });
    servedHere.set(path.resolve(dataDir), url);
    logger.info({ socket }, 'embedded database ready');
    return {
      url,
      close: async () => {
        servedHere.delete(path.resolve(dataDir));
        await server.stop();
        await db.close();
        socketDirectory.remove();
        rmSync(lockFile, { force: true });
      },
    };
  } catch (error) {
    socketDirectory.remove();
    rmSync(lockFile, { force: true });
    throw error;
  }
}

/**
 * PGlite on `directory`: an existing database as it is; a new one from the template (see
 * pglite-template.ts) when there is one, else made by initdb and then kept as the template.
 */
async function openPglite(directory: string, givenTemplateFile: string | undefined, logger: Logger): Promise<PGlite> {
  const startParams = [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS];
  if (existsSync(directory)) return PGlite.create(directory, { startParams });
  const templateFile = givenTemplateFile ?? defaultTemplateFile();
  const template = readTemplate(templateFile);
  if (template) {
    try {
      return await PGlite.create(directory, { startParams, loadDataDir: template });
    } catch (error) {
      logger.warn({ err: error, templateFile }, 'the template of a new embedded database could not be loaded: the database is made anew');
      rmSync(directory, { recursive: true, force: true });
    }
  }
  const db = await PGlite.create(directory, { startParams });
  try {
    await keepAsTemplate(db, templateFile);
  } catch (error) {
    // Best effort (a read-only install): the next new database is made by initdb too.
    logger.debug({ err: error, templateFile }, 'could not keep the new embedded database as a template');
  }
  return db;
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

function tryWriteLock(file: string, lock: Lock): boolean {
  try {
    writeFileSync(file, JSON.stringify(lock), { flag: 'wx', mode: 0o600 });
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
