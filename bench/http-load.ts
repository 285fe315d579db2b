/**
 * A load generator in a process of its own, as wrk or autocannon would be: it sends JSON POSTs over
 * keep-alive connections (node:http, one connection per client) and times each from the request's
 * start to the end of its parsed body. bench:search runs its client in the server's process too (as
 * the baseline measured); there the client's request building, response parsing and JSON
 * land on the server's main thread (undici fetch: ~0.27 ms of main-thread CPU a request, hot, about
 * twice that right after a LanceDB query has had both cores). From here, the server's CPU figures
 * hold the server's work only.
 *
 * The parent forks this file and sends `LoadRequest`s over IPC; each is answered with a `LoadResult`.
 * Nothing crosses the IPC channel while a run is under way.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { timeConcurrently } from './stats.js';
import { fileURLToPath } from 'node:url';

export interface LoadRequest {
  /** Absolute URL of the endpoint. */
  url: string;
  headers: Record<string, string>;
  /** One request body per request, sent in order. */
  bodies: string[];
  /** Clients sending at once, each on its own connection. */
  concurrency: number;
  /** A response must have a non-empty array under this key (the search's `results`). */
  nonEmpty?: string;
}

export interface LoadResult {
  /** Milliseconds per request, sorted. */
  latencies: number[];
  seconds: number;
}

type Reply = { ok: true; result: LoadResult } | { ok: false; error: string };

function post(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Runs one load request: `concurrency` clients take the next body until none is left. */
async function run({ url, headers, bodies, concurrency, nonEmpty }: LoadRequest): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  try {
    return await timeConcurrently(bodies, concurrency, async (body) => {
      const { status, text } = await post(agent, target, headers, body);
      const failed = () => new Error(`${body} answered ${status} with ${text.slice(0, 200)}`);
      // Before parsing: an error answer need not be JSON (a proxy's or express's HTML page), and its status is the news.
      if (status !== 200) throw failed();
      const list = nonEmpty === undefined ? [0] : (JSON.parse(text) as Record<string, unknown>)[nonEmpty];
      if (!Array.isArray(list) || list.length === 0) throw failed();
    });
  } finally {
    agent.destroy();
  }
}

/** The parent's handle on a forked load generator. */
export class HttpLoadGenerator {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<HttpLoadGenerator> {
    // The parent's execArgv (its TypeScript loader) is inherited.
    const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the load generator exited with code ${code} before it was ready`)));
    });
    return new HttpLoadGenerator(child);
  }

  run(load: LoadRequest): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the load generator exited with code ${code}`));
      this.child.once('exit', onExit);
      this.child.once('message', (reply: Reply) => {
        this.child.off('exit', onExit);
        if (reply.ok) resolve(reply.result);
        else reject(new Error(`load generator: ${reply.error}`));
      });
      this.child.send(load);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}

if (process.argv.includes('--serve') && process.send) {
  process.on('message', (load: LoadRequest) => {
    run(load).then(
      (result) => process.send!({ ok: true, result } satisfies Reply),
      (error: unknown) => process.send!({ ok: false, error: error instanceof Error ? error.message : String(error) } satisfies Reply),
    );
  });
  // The parent disconnecting is the end.
  process.on('disconnect', () => process.exit(0));
  process.send('ready');
}
