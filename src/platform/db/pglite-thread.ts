/**
 * The embedded database's own thread: PGlite (WASM Postgres) and its wire server run in a worker
 * thread, so the queries of a sync and of every API request execute beside the main thread instead of
 * on it. On the main thread PGlite's WebAssembly took ~720 ms of an unchanged 100,000-entity re-sync's
 * ~3.2 s there (bench:sync's CPU profile), and every request waited behind whatever query ran.
 *
 * This module is loaded twice: normally (by embedded-postgres.ts and pglite-template.ts, on the main
 * thread) and as the entry file of the database thread. Node loads the worker file itself, outside any
 * test or build tooling, so the file must stay self-contained: only `node:` and package imports, and
 * only erasable TypeScript syntax, so Node's built-in type stripping can run the `.ts` source as well
 * as the compiled `.js`.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
// Types only: the thread loads PGlite itself (runThread), so the main thread, which imports this module
// for its messages, never loads PGlite's JavaScript (megabytes of it, in the main thread's heap).
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** URL of this module, used to start it as the database thread (the `.ts` source or the compiled `.js`). */
export const PGLITE_THREAD_URL: string = import.meta.url;

const THREAD_KIND = 'catchment-pglite-thread';

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

/** What the database thread is started with. */
export interface PgliteThreadInit {
  kind: typeof THREAD_KIND;
  /** PGlite's files. */
  directory: string;
  /** The template a new database starts from (see pglite-template.ts): defaultTemplateFile() when not given. */
  templateFile?: string;
  /** The Unix socket the wire server listens on. */
  socket: string;
  maxConnections: number;
}

/** The main thread's one request: stop serving and close the database. */
export type PgliteThreadRequest = { type: 'close' };

export type PgliteThreadReply =
  | { type: 'ready'; origin: DatabaseOrigin }
  | { type: 'failed'; message: string }
  | { type: 'closed'; error?: string }
  | { type: 'log'; level: 'warn' | 'debug'; message: string; error: string; templateFile: string };

/** Where the opened database came from: the directory's own files, the template, or a new initdb. */
export type DatabaseOrigin = 'existing' | 'template' | 'initdb';

export function pgliteThreadInit(options: Omit<PgliteThreadInit, 'kind'>): PgliteThreadInit {
  return { kind: THREAD_KIND, ...options };
}

/**
 * node_modules/.cache/catchment/pglite-<version>.tar.gz under the package (src/ and dist/ sit at the
 * same depth), named by the PGlite release its files are of: another one makes its own. Named only
 * when a new database is made (a module resolution and a file read: not at every start), and never by
 * a server deployment with DATABASE_URL.
 */
export function defaultTemplateFile(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite'); // …/@electric-sql/pglite/dist/index.cjs
  const { version } = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return path.join(fileURLToPath(new URL('../../../', import.meta.url)), 'node_modules', '.cache', 'catchment', `pglite-${version}.tar.gz`);
}

/** The template kept in `file`, or null when there is none (or it cannot be read). */
function readTemplate(file: string): Blob | null {
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    return null;
  }
}

/**
 * Keeps the files of `db`, a database initdb has just made, as the template in `file`. Written under
 * another name and renamed, so a process reading it meanwhile (tests start many) never reads half of one.
 */
export async function keepAsTemplate(db: PGlite, file: string): Promise<void> {
  const dump = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, dump);
  renameSync(partial, file);
}

type Log = (reply: Extract<PgliteThreadReply, { type: 'log' }>) => void;

/**
 * PGlite on `directory`: an existing database as it is; a new one from the template when there is
 * one, else made by initdb and then kept as the template.
 */
async function openPglite(directory: string, templateFile: string | undefined, log: Log): Promise<{ db: PGlite; origin: DatabaseOrigin }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const startParams = [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS];
  if (existsSync(directory)) return { db: await PGlite.create(directory, { startParams }), origin: 'existing' };
  templateFile ??= defaultTemplateFile();
  const template = readTemplate(templateFile);
  if (template) {
    try {
      return { db: await PGlite.create(directory, { startParams, loadDataDir: template }), origin: 'template' };
    } catch (error) {
      log({ type: 'log', level: 'warn', message: 'the template of a new embedded database could not be loaded: the database is made anew', error: (error as Error).stack ?? String(error), templateFile });
      rmSync(directory, { recursive: true, force: true });
    }
  }
  const db = await PGlite.create(directory, { startParams });
  try {
    await keepAsTemplate(db, templateFile);
  } catch (error) {
    // Best effort (a read-only install): the next new database is made by initdb too.
    log({ type: 'log', level: 'debug', message: 'could not keep the new embedded database as a template', error: String(error), templateFile });
  }
  return { db, origin: 'initdb' };
}

/**
 * What a start's failure says. PGlite's file system throws Emscripten's ErrnoError, which has no
 * message, only an errno of Emscripten's own numbering (54: not a directory).
 */
function failureReason(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  const errno = (error as { errno?: unknown } | null)?.errno;
  if (typeof errno === 'number') return `the database's files could not be opened (Emscripten errno ${errno})`;
  return String(error);
}

async function runThread(init: PgliteThreadInit): Promise<void> {
  const port = parentPort!;
  const reply = (message: PgliteThreadReply) => port.postMessage(message);
  let db: PGlite | null = null;
  let origin: DatabaseOrigin;
  let server: PGLiteSocketServer;
  try {
    ({ db, origin } = await openPglite(init.directory, init.templateFile, reply));
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    server = new PGLiteSocketServer({ db, path: init.socket, maxConnections: init.maxConnections });
    await server.start();
  } catch (error) {
    await db?.close().catch(() => undefined);
    reply({ type: 'failed', message: failureReason(error) });
    return;
  }
  const opened = db;
  port.on('message', (request: PgliteThreadRequest) => {
    if (request.type !== 'close') return;
    void (async () => {
      try {
        await server.stop();
        await opened.close();
        reply({ type: 'closed' });
      } catch (error) {
        reply({ type: 'closed', error: (error as Error).stack ?? String(error) });
      }
    })();
  });
  reply({ type: 'ready', origin });
}

if (!isMainThread && (workerData as { kind?: unknown } | null)?.kind === THREAD_KIND) void runThread(workerData as PgliteThreadInit);
