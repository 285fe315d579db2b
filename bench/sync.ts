/**
 * Full sync of N stub entities and an unchanged re-sync, in the embedded deployment with the default
 * embedder. Prints entities/s for both, the re-sync speed-up, peak memory, and the ratio of the full
 * sync's rate to the rate of embedding plus index writes alone (the pipeline's floor), and to that
 * floor with the index upkeep a sync's end pays (its final optimize) as a second figure; that optimize
 * runs after the job's COMPLETED (SyncPipeline.optimizeInBackground) and is timed on its own. Then the same
 * for a PostgreSQL table (a fresh database on the local server, TEST_POSTGRES_URL): rows/s of a full
 * sync, of an unchanged re-sync, and of the connector's reading alone.
 *
 * While the full sync runs, one client searches the collection (instant hybrid through REST) every
 * `--search-every-ms` (200; 0: no searches during the sync), so the peak memory is that of a server syncing and serving search; after it, the latency of
 * that search at the synced size, and the main thread's event-loop delay during the sync (how long a
 * request may wait for the thread the sync also runs on). `--search-breakdown`: the client cycles
 * hybrid, keyword alone, semantic alone, a search of an empty collection (HTTP, auth, GraphQL: no
 * index work, so it measures the wait for the main thread) and a hybrid search of another collection
 * of 20,000 entities synced and compacted before (no writes of its own: what sharing the CPU with
 * the sync costs a search, apart from the state of a table being written), each with its own p50/p95.
 * `--memory-curve` prints the process's resident memory sampled every `--sample-seconds` during the
 * full sync (the server runs in this process), as it goes. `--cpu-profile-dir DIR` writes the main
 * thread's CPU profile of each full sync (stub, PostgreSQL) and of the stub's unchanged re-sync to
 * DIR, for Chrome DevTools or any .cpuprofile reader: the sync's own window, without the start-up and the floor.
 * The server syncs in batches of its default size (CATCHMENT_SYNC_BATCH_SIZE), or `--batch-size N`; the
 * floor embeds and writes 2,000 entities a call either way.
 *
 *   npm run bench:sync [-- --entities 100000 --postgres-rows 100000]   (--postgres-rows 0 skips it)
 *   npm run bench:sync -- --entities 1000000 --memory-curve --search-every-ms 0 --postgres-rows 0 --no-resync
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createSourceHttpClient } from '../src/connectors/contract/http-client.js';
import { parseConfig, parseCredentials } from '../src/connectors/contract/schemas.js';
import postgresql from '../src/connectors/postgresql/index.js';
import { stubEntity } from '../src/connectors/stub/index.js';
import { chunkText } from '../src/modules/sync/chunker.js';
import { createLogger } from '../src/platform/logger.js';
import { createTestDatabase, startTestServer } from '../test/support/harness.js';
import { api, syncStub, waitForJob } from '../test/support/sync-helpers.js';
import { WebClient } from '../src/platform/http/web-client.js';
import { chunkIdOf } from '../src/platform/vectors/vector-index.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    size: { type: 'string', default: 'small' },
    'postgres-rows': { type: 'string', default: '100000' },
    'memory-curve': { type: 'boolean', default: false },
    'sample-seconds': { type: 'string', default: '5' },
    'no-resync': { type: 'boolean', default: false },
    'search-every-ms': { type: 'string', default: '200' },
    'search-breakdown': { type: 'boolean', default: false },
    'cpu-profile-dir': { type: 'string' },
    'heap-profile-dir': { type: 'string' },
    'batch-size': { type: 'string' },
  },
});
const count = Number(values.entities);
const config = { entity_count: count, seed: 7, size_mix: values.size, hierarchy_depth: 2, code_files: false, delay_ms: 0, revision: 0 };

/** Resident memory of this process (the server and its threads run in it), now and at its peak, in MiB. */
function residentMemory(): { now: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { now: field('VmRSS'), peak: field('VmHWM') };
}

/**
 * A profile of the main thread taken through the inspector between `start` and `stop(name)`, written
 * as `name`.`extension` under `directory` (nothing without one).
 */
function inspectorProfile(directory: string | undefined, extension: string, begin: (session: Session) => Promise<void>, end: (session: Session) => Promise<{ profile: object }>) {
  const session = directory ? new Session() : null;
  session?.connect();
  return {
    start: async () => {
      if (session) await begin(session);
    },
    stop: async (name: string) => {
      if (!session || !directory) return;
      const { profile } = await end(session);
      mkdirSync(directory, { recursive: true });
      writeFileSync(path.join(directory, `${name}.${extension}`), JSON.stringify(profile));
    },
  };
}

/** The main thread's CPU profile (`--cpu-profile-dir`). */
const cpuProfile = inspectorProfile(
  values['cpu-profile-dir'],
  'cpuprofile',
  async (session) => {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  },
  (session) => session.post('Profiler.stop'),
);

/**
 * The main thread's allocations (`--heap-profile-dir`; V8's sampling heap profiler, objects a
 * collection freed since included: what the sync allocates, not what it keeps).
 */
const heapProfile = inspectorProfile(
  values['heap-profile-dir'],
  'heapprofile',
  async (session) => {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 64 * 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  },
  (session) => session.post('HeapProfiler.stopSampling'),
);

/**
 * A run's time is the job's own, from its creation (the `run` request) to its completion, as the
 * server records them: polling sets neither the resolution nor, since each poll is a request and two
 * statements in the server, takes from the sync. Polls are therefore few.
 */
const POLL_MS = 250;
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};
/**
 * CPU seconds of each of this process's threads by name (Linux: /proc/self/task), to tell the main
 * thread from the embedder's worker, LanceDB's runtime threads, V8's helpers and libuv's pool; a thread
 * that ended meanwhile is missing from the second reading.
 */
function threadCpu(): Map<string, number> {
  const ticks = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return ticks;
  }
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const [utime, stime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 13).map(Number);
      const key = task === String(process.pid) ? 'main' : name;
      ticks.set(key, (ticks.get(key) ?? 0) + (utime! + stime!) / 100);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ticks;
}
const threadCpuSince = (before: Map<string, number>) =>
  [...threadCpu()]
    .map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)] as const)
    .filter(([, seconds]) => seconds >= 0.01)
    .sort((a, b) => b[1] - a[1]);
const jobSeconds = (job: { created_at: string; completed_at: string }) => (Date.parse(job.completed_at) - Date.parse(job.created_at)) / 1000;

const QUERIES = ['vector search index', 'customer revenue growth', 'clinical trial patient dose', 'deploy cluster memory latency', 'design review meeting note', 'gene therapy evidence'];

const server = await startTestServer({
  deployment: 'embedded',
  // The stub's folders add a tenth to the count: a million entities passes the default guardrail (1,000,000) otherwise.
  env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', ...(values['batch-size'] ? { CATCHMENT_SYNC_BATCH_SIZE: values['batch-size'] } : {}), CATCHMENT_LOG_LEVEL: 'warn', CATCHMENT_SYNC_MAX_ENTITIES: String(Math.max(1_000_000, count * 2)) },
});
try {
  const call = api(server.url, server.apiKey);
  const collectionId: string = (await call('POST', '/collections', { name: 'Bench sync', readable_id: 'bench-sync' })).body.id;
  const embedder = await server.running.core.embedder();
  await embedder.embed(['warm up']); // the model loads on the first embed: not inside the timed sync
  // LanceDB's library loads on the first sync or search (about 1 s of the main thread through swc at
  // 20,000 entities): not inside the timed sync either, as the floor, measured after it, does not pay it.
  await server.running.core.vectors();

  const created = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'bench-sync', authentication: { credentials: { token: 'bench' } }, config, sync_immediately: false })).body;
  const search = async (strategy = 'hybrid', collection = 'bench-sync') => {
    const t = performance.now();
    const response = await call('POST', `/collections/${collection}/search/instant`, { query: QUERIES[Math.floor(Math.random() * QUERIES.length)], retrieval_strategy: strategy, limit: 10 });
    if (response.status !== 200) throw new Error(`search answered ${response.status}: ${JSON.stringify(response.body).slice(0, 200)}`);
    return performance.now() - t;
  };
  if (values['search-breakdown']) {
    await call('POST', '/collections', { name: 'Bench empty', readable_id: 'bench-empty' });
    const stillCollectionId: string = (await call('POST', '/collections', { name: 'Bench still', readable_id: 'bench-still' })).body.id;
    await syncStub(call, 'bench-still', { ...config, entity_count: 20_000, seed: 8 }, 600_000);
    await (await server.running.core.vectors()).settled(stillCollectionId); // its optimize, after its COMPLETED
  }
  // The peak from here on: a start's transient peak (PGlite's first start, compiling its WebAssembly) is not the sync's.
  writeFileSync('/proc/self/clear_refs', '5');
  const memoryAtStart = residentMemory();
  const curve: { seconds: number; rss: number; jobEntities: number }[] = [];
  let t0 = performance.now();
  // CPU of the whole process (server threads included): on a shared host it varies less than the wall time.
  await cpuProfile.start();
  await heapProfile.start();
  let cpuAtStart = process.cpuUsage();
  const threadsAtStart = threadCpu();
  const first = (await call('POST', `/source-connections/${created.id}/run`)).body;
  let syncing = true;
  const sampler = setInterval(() => {
    void call('GET', `/source-connections/${created.id}/jobs`).then((jobs) => {
      const job = Array.isArray(jobs.body) ? jobs.body.find((j: { id: string }) => j.id === first.id) : undefined;
      const point = { seconds: (performance.now() - t0) / 1000, rss: residentMemory().now, jobEntities: job?.entities_inserted ?? 0 };
      curve.push(point);
      // Printed as it goes: a run of a million entities is long. The main thread's V8 heap and the
      // buffers outside it tell what grows on the JavaScript side from what grows in native libraries.
      const heap = process.memoryUsage();
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
      if (values['memory-curve']) {
        console.log(`memory: ${point.seconds.toFixed(0).padStart(6)} s  ${String(point.jobEntities).padStart(8)} entities  ${point.rss.toFixed(0)} MiB RSS  (main thread's heap ${mib(heap.heapUsed)} used of ${mib(heap.heapTotal)}, ${mib(heap.external)} external, ${mib(heap.arrayBuffers)} in array buffers)`);
      }
    });
  }, Number(values['sample-seconds']) * 1000);
  // One client searching while the sync runs (it shares the process, so it takes from the sync).
  const searchEveryMs = Number(values['search-every-ms']);
  const kinds = values['search-breakdown'] ? ['hybrid', 'keyword', 'semantic', 'empty', 'still'] : ['hybrid'];
  const duringSync = new Map(kinds.map((kind) => [kind, [] as number[]]));
  const eventLoopDelay = monitorEventLoopDelay({ resolution: 10 });
  eventLoopDelay.enable();
  const searching = (async () => {
    for (let i = 0; syncing && searchEveryMs > 0; i++) {
      const kind = kinds[i % kinds.length]!;
      duringSync.get(kind)!.push(await (kind === 'empty' || kind === 'still' ? search('hybrid', `bench-${kind}`) : search(kind)));
      await new Promise((resolve) => setTimeout(resolve, searchEveryMs));
    }
  })();
  const full = await waitForJob(call, created.id, first.id, ['COMPLETED', 'FAILED'], 6 * 3_600_000, POLL_MS);
  const fullSeconds = jobSeconds(full);
  const fullCpu = cpuSeconds(cpuAtStart);
  const fullThreads = threadCpuSince(threadsAtStart);
  // The optimize a sync's end leaves running (compaction, the full-text and vector indexes brought up
  // to the new rows): timed on its own, and searched through and included in the peak as before.
  const upkeepAfterStarted = performance.now();
  const upkeepAfterCpuAtStart = process.cpuUsage();
  await (await server.running.core.vectors()).settled(collectionId);
  const upkeepAfterSeconds = (performance.now() - upkeepAfterStarted) / 1000;
  const upkeepAfterCpu = cpuSeconds(upkeepAfterCpuAtStart);
  await cpuProfile.stop('stub-full-sync');
  await heapProfile.stop('stub-full-sync');
  syncing = false;
  eventLoopDelay.disable();
  clearInterval(sampler);
  await searching;
  const memoryAfterSync = residentMemory();
  if (full.status !== 'COMPLETED') throw new Error(`full sync failed: ${full.error}`);
  const afterSync: number[] = [];
  for (let i = 0; i < 200; i++) afterSync.push(await search());

  let resyncSeconds = Number.NaN;
  let resyncCpu = Number.NaN;
  let resync = { entities_skipped: 0, entities_updated: 0, entities_inserted: 0 };
  if (!values['no-resync']) {
    await cpuProfile.start();
    const resyncCpuAtStart = process.cpuUsage();
    const again = (await call('POST', `/source-connections/${created.id}/run?force_full_sync=true`)).body;
    const done = await waitForJob(call, created.id, again.id, ['COMPLETED', 'FAILED'], 6 * 3_600_000, POLL_MS);
    resyncCpu = cpuSeconds(resyncCpuAtStart);
    await cpuProfile.stop('stub-unchanged-resync');
    resync = done;
    resyncSeconds = jobSeconds(done);
  }

  // The floor: embedding and index writes alone, for the same texts, into another collection.
  const vectors = await server.running.core.vectors();
  const sample = Math.min(count, 20_000);
  t0 = performance.now();
  const floorCpuAtStart = process.cpuUsage();
  const floorThreadsAtStart = threadCpu();
  for (let start = 0; start < sample; start += 2000) {
    const entities = Array.from({ length: Math.min(2000, sample - start) }, (_, k) => stubEntity(start + k, config as never));
    const pieces = entities.flatMap((entity) => chunkText(entity.text, entity.language).map((text, index) => ({ entity, text, index })));
    const embedded = await embedder.embed(pieces.map((p) => `${p.entity.name}\n${p.text}`));
    await vectors.add(
      'bench-floor',
      pieces.map((p, i) => ({
        chunkId: chunkIdOf('floor', p.entity.entityId, p.index),
        sourceConnectionId: 'floor',
        entityId: p.entity.entityId,
        chunkIndex: p.index,
        name: p.entity.name,
        text: p.text,
        vector: embedded[i]!,
        entityType: p.entity.entityType,
        sourceName: 'stub',
        breadcrumbs: [],
        createdAt: p.entity.createdAt,
        updatedAt: p.entity.updatedAt,
        webUrl: p.entity.webUrl,
        url: null,
        syncId: 'floor',
        syncJobId: 'floor',
        rawSourceFields: p.entity.fields,
        access: { viewers: null, isPublic: true },
      })),
    );
  }
  const floorSeconds = (performance.now() - t0) / 1000;
  const floorRate = sample / floorSeconds;
  const floorCpu = cpuSeconds(floorCpuAtStart);
  const floorThreads = threadCpuSince(floorThreadsAtStart);
  // A second floor, with the index upkeep a sync's end pays (compaction, folding the last rows into the
  // full-text and vector indexes): the first one above stays as it was, comparable across versions.
  const upkeepStarted = performance.now();
  const upkeepCpuAtStart = process.cpuUsage();
  await vectors.optimize('bench-floor');
  const upkeepFloorRate = sample / (floorSeconds + (performance.now() - upkeepStarted) / 1000);
  const upkeepFloorCpu = floorCpu + cpuSeconds(upkeepCpuAtStart);
  await vectors.deleteCollection('bench-floor');

  const total = full.entities_inserted;
  const fullRate = total / fullSeconds;
  const resyncRate = (resync.entities_skipped + resync.entities_updated + resync.entities_inserted) / resyncSeconds;
  console.log(`\nstub entities: ${count} (${total} with folders), size mix ${values.size}, chunks written ${full.chunks_written}`);
  console.log(`full sync:        ${fullSeconds.toFixed(1)} s  ${fullRate.toFixed(0)} entities/s  (CPU ${fullCpu.toFixed(1)} s, ${((fullCpu / total) * 1e6).toFixed(0)} µs an entity)`);
  console.log(
    `index upkeep after COMPLETED: ${upkeepAfterSeconds.toFixed(1)} s (CPU ${upkeepAfterCpu.toFixed(1)} s); run to the upkeep's end ${(total / (fullSeconds + upkeepAfterSeconds)).toFixed(0)} entities/s, CPU ${(((fullCpu + upkeepAfterCpu) / total) * 1e6).toFixed(0)} µs an entity`,
  );
  if (!values['no-resync']) console.log(`unchanged resync: ${resyncSeconds.toFixed(1)} s  ${resyncRate.toFixed(0)} entities/s  (${(resyncRate / fullRate).toFixed(1)}× the full sync; skipped ${resync.entities_skipped}, updated ${resync.entities_updated}; CPU ${resyncCpu.toFixed(1)} s, ${((resyncCpu / total) * 1e6).toFixed(0)} µs an entity)`);
  console.log(`embed + index floor: ${floorRate.toFixed(0)} entities/s  → full sync runs at ${((fullRate / floorRate) * 100).toFixed(0)} % of it  (floor CPU ${((floorCpu / sample) * 1e6).toFixed(0)} µs an entity)`);
  const perEntity = (threads: (readonly [string, number])[], entities: number) => threads.map(([name, seconds]) => `${name} ${((seconds / entities) * 1e6).toFixed(0)}`).join(', ');
  if (fullThreads.length > 0) console.log(`CPU by thread, µs an entity: full sync ${perEntity(fullThreads, total)}; floor ${perEntity(floorThreads, sample)}`);
  console.log(`embed + index + upkeep floor (with the final optimize): ${upkeepFloorRate.toFixed(0)} entities/s  → full sync runs at ${((fullRate / upkeepFloorRate) * 100).toFixed(0)} % of it  (CPU ${((upkeepFloorCpu / sample) * 1e6).toFixed(0)} µs an entity)`);
  afterSync.sort((a, b) => a - b);
  for (const [kind, latencies] of duringSync) {
    latencies.sort((a, b) => a - b);
    const what =
      kind === 'empty' ? 'searches of an empty collection (no index work)' : kind === 'still' ? 'hybrid queries of a collection of 20,000 entities not being written' : `${kind} queries`;
    console.log(`search during the sync: ${latencies.length} ${what}, p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms`);
  }
  const delayMs = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(0);
  console.log(`main thread's event-loop delay during the sync: p50 ${delayMs(eventLoopDelay.percentile(50))} ms, p95 ${delayMs(eventLoopDelay.percentile(95))} ms, max ${delayMs(eventLoopDelay.max)} ms`);
  console.log(`search after it (${full.chunks_written} chunks): p50 ${percentile(afterSync, 50).toFixed(1)} ms, p95 ${percentile(afterSync, 95).toFixed(1)} ms`);
  console.log(`resident memory: ${memoryAtStart.now.toFixed(0)} MiB before the sync, ${memoryAfterSync.now.toFixed(0)} MiB after it, peak ${memoryAfterSync.peak.toFixed(0)} MiB while syncing and searching (this process runs the sources through swc: ~110 MiB more than the compiled build)`);
  if (values['memory-curve']) console.log(`memory curve: ${curve.map((point) => point.rss.toFixed(0)).join(' ')} MiB`);

  const rows = Number(values['postgres-rows']);
  if (rows > 0) {
    const database = await createTestDatabase();
    try {
      const source = new pg.Client({ connectionString: database.url });
      await source.connect();
      try {
        await source.query('CREATE TABLE tickets (id int PRIMARY KEY, title text NOT NULL, body text NOT NULL, priority int NOT NULL, updated_at timestamptz NOT NULL)');
        // About 240 bytes of text a row, like the small stub entities.
        await source.query(
          `INSERT INTO tickets SELECT i, 'Ticket ' || i,
             (SELECT string_agg(w[1 + (i * 7 + k * 13) % array_length(w, 1)], ' ') FROM generate_series(1, 32) AS k),
             i % 5, now() - i * interval '1 minute'
           FROM generate_series(1, $1::int) AS i, (SELECT string_to_array('data sync vector search index query collection source entity chunk embed cursor schedule worker cancel pipeline hash update insert delete folder document report meeting note design review plan customer revenue growth market product', ' ') AS w) AS words`,
          [rows],
        );
      } finally {
        await source.end();
      }
      await call('POST', '/collections', { name: 'Bench PostgreSQL', readable_id: 'bench-postgres' });
      const connection = (await call('POST', '/source-connections', { short_name: 'postgresql', readable_collection_id: 'bench-postgres', authentication: { credentials: { url: database.url } }, sync_immediately: false })).body;
      await cpuProfile.start();
      cpuAtStart = process.cpuUsage();
      const pgThreadsAtStart = threadCpu();
      const pgFirst = (await call('POST', `/source-connections/${connection.id}/run`)).body;
      const pgFull = await waitForJob(call, connection.id, pgFirst.id, ['COMPLETED', 'FAILED'], 3_600_000, POLL_MS);
      const pgFullSeconds = jobSeconds(pgFull);
      const pgFullCpu = cpuSeconds(cpuAtStart);
      const pgFullThreads = threadCpuSince(pgThreadsAtStart);
      await cpuProfile.stop('postgresql-full-sync');
      if (pgFull.status !== 'COMPLETED') throw new Error(`PostgreSQL sync failed: ${pgFull.error}`);
      const pgAgain = (await call('POST', `/source-connections/${connection.id}/run`)).body;
      const pgResync = await waitForJob(call, connection.id, pgAgain.id, ['COMPLETED', 'FAILED'], 3_600_000, POLL_MS);
      const pgResyncSeconds = jobSeconds(pgResync);
      // The connector alone: keyset pages turned into entities, no pipeline.
      t0 = performance.now();
      let read = 0;
      const config = parseConfig(postgresql, {}).value;
      const credentials = parseCredentials(postgresql, { url: database.url }).value;
      const signal = new AbortController().signal;
      const logger = createLogger('warn');
      const http = createSourceHttpClient({ connector: postgresql, config, credentials, tokens: null, allowPrivateNetworks: false, signal, logger });
      const context = { config, credentials, tokens: null, http, cursor: null, resuming: false, checkpoint: () => {}, signal, logger };
      const run = postgresql.sync(context, { localFolderRoots: [], webClient: new WebClient({ allowPrivateNetworks: false }) });
      for await (const item of run.items) if ('entityId' in item) read++;
      const readSeconds = (performance.now() - t0) / 1000;
      console.log(`\nPostgreSQL table: ${rows} rows (~240 bytes of text each), chunks written ${pgFull.chunks_written}`);
      console.log(`full sync:        ${pgFullSeconds.toFixed(1)} s  ${(pgFull.entities_inserted / pgFullSeconds).toFixed(0)} rows/s  (inserted ${pgFull.entities_inserted}; CPU ${pgFullCpu.toFixed(1)} s, ${((pgFullCpu / pgFull.entities_inserted) * 1e6).toFixed(0)} µs a row)`);
      if (pgFullThreads.length > 0) console.log(`CPU by thread, µs a row: ${perEntity(pgFullThreads, pgFull.entities_inserted)}`);
      console.log(`unchanged resync: ${pgResyncSeconds.toFixed(1)} s  ${(pgResync.entities_skipped / pgResyncSeconds).toFixed(0)} rows/s  (skipped ${pgResync.entities_skipped}, updated ${pgResync.entities_updated})`);
      console.log(`connector reading alone: ${readSeconds.toFixed(1)} s  ${(read / readSeconds).toFixed(0)} rows/s`);
    } finally {
      await database.drop();
    }
  }
  console.log(`peak RSS of the whole run: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
} finally {
  await server.stop();
}
