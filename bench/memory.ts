/**
 * Resident memory of the server as operators run it: `node bin/catchment.js start` (what `npm start`
 * runs) in a child process with a fresh data directory. Prints its memory idle (after `--idle-seconds`),
 * then during a full sync of `--entities` stub entities while one client searches (instant hybrid
 * through REST) every `--search-every-ms`, sampled every `--sample-seconds` (the curve), and the peak;
 * then `--searches-after` searches back to back once the sync is done. Each search's latency (request
 * to parsed answer) is timed: p50/p95 during the sync (per sample and overall) and after it.
 * Each sample reads the child's /proc (VmRSS, VmHWM, threads, smaps: anonymous memory, the native
 * libraries' code and data, other files) and its /metrics (V8 heap, external memory of JS objects).
 * Anonymous memory is split by what its mappings look like: glibc's main malloc heap ([heap]), its
 * thread arenas (64 MiB-aligned reservations of 64 MiB), WebAssembly memories (a committed part before
 * a reservation of gigabytes: PGlite's), JIT code (rwx), and the rest (V8's heap, blocks malloc maps on
 * their own from 128 KiB up such as Arrow buffers and the word-vector matrix, thread stacks). The RSS is
 * also read every 100 ms during the sync, and the highest gets a breakdown of its own: the peak
 * falls between samples (LanceDB's index upkeep at the end of a sync lasts a second or two). The
 * server's error-level log lines are printed as they come (a search that answered 500 says why).
 *
 *   npm run bench:memory [-- --entities 100000]              (0: idle only)
 *   npm run bench:memory -- --entities 1000000 --search-every-ms 1000 --sample-seconds 30
 *   npm run bench:memory -- --env MALLOC_ARENA_MAX=8          (A/B an environment variable of the child)
 *
 * Run `npm run build` first, or the child runs the TypeScript sources through swc (~130 MiB more).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { api, type Api, waitForJob } from '../test/support/sync-helpers.js';
import { envOption } from './env-option.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    'idle-seconds': { type: 'string', default: '15' },
    'sample-seconds': { type: 'string', default: '5' },
    'search-every-ms': { type: 'string', default: '200' },
    'searches-after': { type: 'string', default: '100' },
    env: { type: 'string', multiple: true, default: [] },
    'node-option': { type: 'string', multiple: true, default: [] },
  },
});
const entities = Number(values.entities);
const root = path.resolve(import.meta.dirname, '..');
const API_KEY = `ck_${'b'.repeat(40)}`;
const MIB = 1024 * 1024;

interface Sample {
  rss: number;
  peak: number;
  threads: number;
  /** Anonymous memory: the malloc heaps of every thread, V8's heaps, PGlite's WebAssembly memory. */
  anonymous: number;
  /** Parts of `anonymous`, see `mappings`. */
  mallocHeap: number;
  mallocArenas: number;
  wasmMemory: number;
  jitCode: number;
  /** Resident pages of shared libraries and native addons (.so, .node), code and data. */
  libraries: number;
  /** Other file-backed pages (the node binary, mapped data files). */
  files: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

function kib(text: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
}

interface Mapping {
  start: number;
  end: number;
  permissions: string;
  name: string;
  rss: number;
}

/** glibc's thread arenas: reservations of 64 MiB (HEAP_MAX_SIZE on 64-bit), aligned to their size. */
const ARENA_BYTES = 64 * MIB;

/** Resident bytes of the child by kind of mapping, from /proc/<pid>/smaps (see the header for the kinds). */
function mappings(pid: number) {
  const all: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      all.push({ start: Number.parseInt(header[1]!, 16), end: Number.parseInt(header[2]!, 16), permissions: header[3]!, name: header[4] ?? '', rss: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && all.length > 0) all[all.length - 1]!.rss = Number(rss[1]) * 1024;
  }
  const byLibrary = new Map<string, number>();
  const kinds = { anonymous: 0, mallocHeap: 0, mallocArenas: 0, wasmMemory: 0, jitCode: 0, libraries: 0, files: 0 };
  all.forEach((mapping, i) => {
    const { name, rss } = mapping;
    if (name === '' || name.startsWith('[')) {
      kinds.anonymous += rss;
      const next = all[i + 1];
      const reservationAfter = next !== undefined && next.start === mapping.end && next.permissions.startsWith('---') ? next : undefined;
      if (name === '[heap]') kinds.mallocHeap += rss;
      else if (name !== '') return;
      else if (mapping.start % ARENA_BYTES === 0 && (reservationAfter?.end ?? mapping.end) - mapping.start === ARENA_BYTES) kinds.mallocArenas += rss;
      else if (reservationAfter !== undefined && reservationAfter.end - reservationAfter.start >= 1024 * MIB) kinds.wasmMemory += rss;
      else if (mapping.permissions.startsWith('rwx')) kinds.jitCode += rss;
    } else if (/\.(so|node)(\.|$)/.test(name)) {
      kinds.libraries += rss;
      byLibrary.set(path.basename(name), (byLibrary.get(path.basename(name)) ?? 0) + rss);
    } else kinds.files += rss;
  });
  return { kinds, byLibrary };
}

/** CPU seconds the child has used, all its threads, from /proc/<pid>/stat (user + system, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function v8Heap(url: string): Promise<{ heapUsed: number; heapTotal: number; external: number }> {
  const text = await fetch(`${url}/metrics`).then((response) => response.text());
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { heapUsed: metric('nodejs_heap_size_used_bytes'), heapTotal: metric('nodejs_heap_size_total_bytes'), external: metric('nodejs_external_memory_bytes') };
}

async function sample(pid: number, url: string): Promise<Sample> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const { kinds } = mappings(pid);
  return {
    rss: kib(status, 'VmRSS'),
    peak: kib(status, 'VmHWM'),
    threads: Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0),
    ...kinds,
    ...(await v8Heap(url)),
  };
}

/** The server's log lines of level error or fatal (its stdout is read here, not shown): what made a search answer 500. */
function printServerError(text: string): void {
  if (!/"level":(50|60)\b/.test(text)) return;
  let entry: { msg?: string; err?: { message?: string; stack?: string } };
  try {
    entry = JSON.parse(text);
  } catch {
    entry = { msg: text.slice(0, 500) }; // not a log entry after all
  }
  console.log(`server error: ${entry.msg ?? ''}: ${entry.err?.stack?.split('\n').slice(0, 4).join(' | ') ?? entry.err?.message ?? ''}`);
}

/** Queries taken in turn, so no answer is served from a cache of the previous one. */
const QUERIES = ['clinical trial patient dose', 'gene expression in tumour cells', 'vaccine immune response', 'protein binding site structure'];

/** Milliseconds of one instant hybrid search through REST; throws unless it answers 200. */
async function timedSearch(call: Api, turn: number): Promise<number> {
  const started = performance.now();
  const response = await call('POST', '/collections/bench-memory/search/instant', { query: QUERIES[turn % QUERIES.length], retrieval_strategy: 'hybrid', limit: 10 });
  if (response.status !== 200) throw new Error(`search answered ${response.status}`);
  return performance.now() - started;
}

/** "p50 / p95 ms (n searches)" of latencies, in any order. */
function latencySummary(latencies: readonly number[]): string {
  if (latencies.length === 0) return 'no searches';
  const sorted = [...latencies].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(1)} / p95 ${percentile(sorted, 95).toFixed(1)} ms (${sorted.length} searches)`;
}

const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)}`;
const line = (s: Sample) =>
  `RSS ${mib(s.rss)} MiB (peak ${mib(s.peak)}): anonymous ${mib(s.anonymous)} (malloc heap ${mib(s.mallocHeap)}, arenas ${mib(s.mallocArenas)}, WebAssembly memory ${mib(s.wasmMemory)}, JIT code ${mib(s.jitCode)}, other ${mib(s.anonymous - s.mallocHeap - s.mallocArenas - s.wasmMemory - s.jitCode)}), libraries ${mib(s.libraries)}, other files ${mib(s.files)}; V8 heap ${mib(s.heapUsed)}/${mib(s.heapTotal)}, external ${mib(s.external)}; ${s.threads} threads`;

const dataDir = mkdtempSync(path.join(tmpdir(), 'catchment-memory-'));
const extraEnv = envOption(values.env);
const child = spawn(process.execPath, [...values['node-option'], path.join(root, 'bin/catchment.js'), 'start'], {
  cwd: root,
  env: {
    ...process.env,
    NODE_OPTIONS: '',
    ...extraEnv,
    CATCHMENT_DATA_DIR: dataDir,
    PORT: '0',
    CATCHMENT_BOOTSTRAP_API_KEY: API_KEY,
    CATCHMENT_RATE_LIMIT_REQUESTS: '0',
    CATCHMENT_LOG_LEVEL: 'warn',
    CATCHMENT_SYNC_MAX_ENTITIES: String(Math.max(1_000_000, entities * 2)),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
process.once('exit', () => child.kill('SIGTERM')); // also when this bench dies of an error: no server left behind
try {
  const url = await new Promise<string>((resolve, reject) => {
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const text of lines) {
        const listening = /listening on (\S+)/.exec(text);
        if (listening) resolve(listening[1]!);
        printServerError(text);
      }
    });
    void exited.then((code) => reject(new Error(`the server exited with code ${code} before listening`)));
  });
  const pid = child.pid!;
  const build = existsSync(path.join(root, 'dist/BUILT')) && readFileSync(`/proc/${pid}/maps`, 'utf8').includes('swc') ? 'sources through swc' : 'compiled build (dist/)';
  console.log(`server pid ${pid} (${build}), data in ${dataDir}; environment: ${JSON.stringify(extraEnv)}, node options: ${JSON.stringify(values['node-option'])}`);
  console.log(`started: ${line(await sample(pid, url))}`);
  await sleep(Number(values['idle-seconds']) * 1000);
  const idle = await sample(pid, url);
  console.log(`idle:    ${line(idle)}`);
  const libraries = [...mappings(pid).byLibrary].sort((a, b) => b[1] - a[1]).slice(0, 6);
  console.log(`idle, largest libraries: ${libraries.map(([name, bytes]) => `${name} ${mib(bytes)}`).join(', ')} MiB`);

  if (entities > 0) {
    // The peak from here on: the start's transient peak (PGlite creating the database) is not the sync's.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const call = api(url, API_KEY);
    await call('POST', '/collections', { name: 'Bench memory', readable_id: 'bench-memory' });
    const config = { entity_count: entities, seed: 7, size_mix: 'small', hierarchy_depth: 2, code_files: false, delay_ms: 0, revision: 0 };
    const created = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'bench-memory', authentication: { credentials: { token: 'bench' } }, config, sync_immediately: false })).body;
    const started = performance.now();
    const cpuBefore = cpuSeconds(pid);
    const job = (await call('POST', `/source-connections/${created.id}/run`)).body;
    let syncing = true;
    let peak = idle;
    /** Latencies of searches since the last sample, and of those before it. */
    const latencies: number[] = [];
    const during: number[] = [];
    const sampling = (async () => {
      while (syncing) {
        await sleep(Number(values['sample-seconds']) * 1000);
        if (!syncing) break;
        let jobs: { id: string; entities_inserted: number }[];
        let now: Sample;
        try {
          jobs = (await call('GET', `/source-connections/${created.id}/jobs`)).body;
          now = await sample(pid, url);
        } catch (error) {
          console.log(`a sample failed (${(error as Error).message}); the next one is taken as usual`); // a keep-alive socket closed under us
          continue;
        }
        if (now.rss > peak.rss) peak = now;
        const done = jobs.find((candidate) => candidate.id === job.id)?.entities_inserted ?? 0;
        const window = latencies.splice(0);
        during.push(...window);
        console.log(`${((performance.now() - started) / 1000).toFixed(0).padStart(6)} s ${String(done).padStart(8)} entities  ${line(now)}; search ${latencySummary(window)}`);
      }
    })();
    /** The highest RSS read every 100 ms, with a breakdown taken as it was reached. */
    let highest = idle;
    let highestAt = 0;
    const watching = (async () => {
      while (syncing) {
        await sleep(100);
        if (kib(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') <= highest.rss + 2 * MIB) continue;
        try {
          const now = await sample(pid, url);
          if (now.rss > highest.rss) {
            highest = now;
            highestAt = (performance.now() - started) / 1000;
          }
        } catch {
          // as for the samples: a closed keep-alive socket; the next read tries again
        }
      }
    })();
    const searchEveryMs = Number(values['search-every-ms']);
    const failedSearches: string[] = [];
    const searching = (async () => {
      for (let turn = 0; syncing && searchEveryMs > 0; turn++) {
        try {
          latencies.push(await timedSearch(call, turn));
        } catch (error) {
          failedSearches.push((error as Error).message);
        }
        await sleep(searchEveryMs);
      }
    })();
    const finished = await waitForJob(call, created.id, job.id, ['COMPLETED', 'FAILED'], 12 * 3_600_000);
    // Read before the loops end: the sampler sleeps --sample-seconds between samples, so the time after
    // it had rounded every run up to a multiple of them (100,000 entities: 20 s, where the job took ~16).
    // The job's own times, as bench:sync reads them.
    const seconds = (Date.parse(finished.completed_at) - Date.parse(finished.created_at)) / 1000;
    const cpu = cpuSeconds(pid) - cpuBefore;
    if (finished.status === 'FAILED') console.log(`the sync failed: ${finished.error}`);
    syncing = false;
    await Promise.all([sampling, searching, watching]);
    during.push(...latencies);
    const after = await sample(pid, url);
    console.log(`sync ${finished.status}: ${entities} entities in ${seconds.toFixed(0)} s (${(entities / seconds).toFixed(0)}/s), server CPU ${cpu.toFixed(1)} s (${((cpu / entities) * 1e6).toFixed(0)} µs per entity, searches included); search meanwhile ${latencySummary(during)}${failedSearches.length ? `, ${failedSearches.length} failed (${[...new Set(failedSearches)].join(', ')})` : ''}`);
    const afterwards: number[] = [];
    for (let turn = 0; turn < Number(values['searches-after']); turn++) afterwards.push(await timedSearch(call, turn));
    console.log(`search after the sync, one client back to back: ${latencySummary(afterwards)}`);
    console.log(`largest sample during the sync: ${line(peak)}`);
    console.log(`highest RSS read every 100 ms (at ${highestAt.toFixed(1)} s of ${seconds.toFixed(1)}): ${line(highest)}`);
    console.log(`after the sync: ${line(after)}`);
    console.log(`peak RSS (VmHWM) of the server: ${mib(after.peak)} MiB`);
  }
} finally {
  child.kill('SIGTERM');
  await exited;
  rmSync(dataDir, { recursive: true, force: true });
}
