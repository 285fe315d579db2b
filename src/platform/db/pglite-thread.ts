/**
 * The embedded database's own thread: PGlite (PostgreSQL compiled to WebAssembly) and its wire server,
 * listening on the Unix socket the parent names. Every statement of the embedded deployment runs its
 * WebAssembly here, not on the main thread, where it took about a quarter of a sync's main-thread time
 * (20,000 stub entities, `--cpu-prof`) in slices of tens of milliseconds that requests waited behind.
 * Clients reach it over the socket exactly as they reached the in-process server.
 *
 * Node loads this file itself as a worker's entry, outside any test or build tooling, so it stays
 * self-contained: only `node:` and package imports, and only erasable TypeScript syntax, so Node's
 * built-in type stripping runs the `.ts` source as well as the compiled `.js`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** What the parent gives the thread. */
export interface PgliteThreadInit {
  /** Marks the thread's data: loaded any other way (a build, a test's import), the module starts nothing. */
  kind: 'catchment-pglite-thread';
  /** PGlite's files. */
  directory: string;
  /** Server settings (`-c name=value`), after PGlite's default start parameters. */
  settings: string[];
  /** The Unix socket to serve on (libpq's `.s.PGSQL.5432`). */
  socket: string;
  maxConnections: number;
}

/** What the parent asks of a running thread. */
export type PgliteThreadRequest = { type: 'close' };

/** What the thread tells the parent: it serves, it failed to start, or it closed (with what went wrong). */
export type PgliteThreadReply = { type: 'ready' } | { type: 'failed'; message: string } | { type: 'closed'; error: string | null };

const messageOf = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

async function serve(init: PgliteThreadInit): Promise<void> {
  const port = parentPort!;
  let db: PGlite;
  let server: PGLiteSocketServer;
  try {
    db = await PGlite.create(init.directory, { startParams: [...PGlite.defaultStartParams, ...init.settings] });
    server = new PGLiteSocketServer({ db, path: init.socket, maxConnections: init.maxConnections });
    await server.start();
  } catch (error) {
    port.postMessage({ type: 'failed', message: messageOf(error) } satisfies PgliteThreadReply);
    return;
  }
  port.on('message', (request: PgliteThreadRequest) => {
    if (request.type !== 'close') return;
    void (async () => {
      let error: string | null = null;
      try {
        await server.stop();
        await db.close();
      } catch (failure) {
        error = messageOf(failure);
      }
      port.postMessage({ type: 'closed', error } satisfies PgliteThreadReply);
      port.close();
    })();
  });
  port.postMessage({ type: 'ready' } satisfies PgliteThreadReply);
  collectGarbage();
}

/**
 * One full collection once the server serves. A new database is made by a first WebAssembly instance
 * (initdb) whose ~300 MiB of memory is garbage once the real one runs; an idle thread allocates
 * nothing, so nothing collects it: the server's RSS stayed at ~640 MiB for seconds to minutes after
 * a first start, 317–328 MiB once collected. `gc` is exposed to one throwaway context only.
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  gc();
}

if (!isMainThread && (workerData as PgliteThreadInit | undefined)?.kind === 'catchment-pglite-thread') void serve(workerData as PgliteThreadInit);
