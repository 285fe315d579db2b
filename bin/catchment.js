#!/usr/bin/env node
// Runs the compiled build (dist/, `npm run build`) when it is current, so a production start loads neither
// swc nor TypeScript; otherwise the TypeScript sources through swc (decorator metadata included), so a
// changed source is never run from a stale build.
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildIsCurrent } from './build-inputs.js';

/**
 * glibc malloc settings the service runs with, each unless the operator set it. glibc reads them when
 * the process starts, so when one is missing the process replaces itself (execve: same pid, same
 * arguments) with it set. Other C libraries ignore them.
 * - MALLOC_ARENA_MAX: glibc gives threads that allocate at once arenas of their own (up to 8 per core)
 *   and hands little of them back: with LanceDB's tokio threads, PGlite's and the embedder's, resident
 *   memory grew without end over a long sync. Two arenas keep it flat at the same speed (README, Memory).
 * - MALLOC_MMAP_THRESHOLD_: blocks from 2 MiB up get pages of their own, returned when freed. glibc's
 *   default raises this threshold (to 32 MiB) once such a block is freed, which left ~100 MiB of freed
 *   blocks inside the main heap after PGlite's start when it ran on the main thread: an idle server
 *   288-313 MiB against 382-430 (bench:memory). At 128 KiB, the value until the database got its own
 *   thread, every block from 128 KiB up (a sync batch's Arrow buffers, the text encoded for files and
 *   sockets, LanceDB's buffers) was fresh pages, each 4 KiB a page fault (~6 µs of kernel time on a
 *   2-core VM). bench:memory, compiled, 100,000 entities with a search every 200 ms, alternated in one
 *   sitting (four runs each): 128 KiB 3,716-4,280 entities/s, server CPU 35-42 s, page faults (the
 *   whole benchmark) 1.19-1.32 million, searches after the sync p50 25-50 ms, idle 301-317 MiB, peak
 *   627-682 MiB; 4 MiB 5,163-6,737/s, 22.5-29 s, 0.56-0.65 million, 17-30 ms, 300-333, 611-683; 1 MiB
 *   4,496-4,548/s (two runs); 32 MiB peaked at 638-717 MiB. With the trim threshold below, six runs each
 *   alternated, 2 MiB / 4 MiB: 4,776-7,023 / 5,542-7,671 entities/s, peak 624-694 / 615-721 MiB
 *   (4 MiB passed the 700 asked in 2 of 18 runs with this trim threshold, in 1 of 8 without), idle
 *   308-332 / 304-330 MiB: 2 MiB.
 * - MALLOC_TRIM_THRESHOLD_: free memory at the top of the heap and of each arena is handed back once it
 *   passes 32 MiB. Setting the threshold above fixes this one at 128 KiB too, so memory freed there went
 *   back and was faulted in again at the next allocation. Same benchmark (mmap threshold 4 MiB), four
 *   runs each alternated, 128 KiB / 32 MiB: 4,905-6,361 / 5,791-6,569 entities/s, page faults
 *   0.54-0.69 / 0.44-0.51 million, idle 303-321 / 304-335 MiB.
 */
const MALLOC_DEFAULTS = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: String(2 * 2 ** 20), MALLOC_TRIM_THRESHOLD_: String(32 * 2 ** 20) };
const mallocUnset = Object.entries(MALLOC_DEFAULTS).filter(([name]) => process.env[name] === undefined);
/**
 * V8 settings, each unless the operator gave it (on the command line, or in NODE_OPTIONS where Node
 * allows it). V8 reads them when it starts, so they join the same restart.
 * - --max-semi-space-size=4: the young generation capped at 4 MiB per semi-space: a sync's short-lived
 *   objects otherwise grew it to tens of MiB that stay committed. Peak of a 100,000-entity sync while
 *   searching 759-761 MiB against 841-880, at the same rate (bench:memory).
 * - --heap-growing-percent=50: after a full collection the old generation may grow by half of what
 *   survived before the next one, where V8 otherwise lets a fast-allocating process grow it up to
 *   fourfold (committed pages it keeps). Peak of a 100,000-entity sync while searching 663-697 MiB
 *   against 722-768 (bench:memory, 4 and 6 runs, one sitting), for ~7 % of the sync's rate and ~10 % more
 *   CPU an entity; at 75: 687-710 MiB at the same rate, at 100: 706-712 (README, Memory benchmark).
 *   Node refuses this one in NODE_OPTIONS: it goes on the command line (`node --heap-growing-percent=…`).
 * - --liftoff-only: WebAssembly (PGlite, the embedded database) stays on V8's baseline compiler. Its
 *   optimizing compiler, given one of PGlite's functions (105 KB of code, hot from the first queries),
 *   takes ~335 ms and ~576 MiB for it: every start peaked at 795-833 MiB for a moment, against 385 with
 *   this (bench:memory), and the peak of a 100,000-entity sync while searching was 682 against 641 MiB,
 *   at the same rate; PGlite's own work runs slower (an unchanged re-sync ~20 % slower in bench:sync, a
 *   full sync ~8 %). A boolean, also refused in NODE_OPTIONS: `node --no-liftoff-only bin/catchment.js …`
 *   turns it off.
 */
const V8_DEFAULTS = { '--max-semi-space-size': '4', '--heap-growing-percent': '50', '--liftoff-only': null };
// By name, as V8 reads it: `--max_semi_space_size=16` names the same option, and `--no-liftoff-only` the boolean's.
const givenOptions = new Set(
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map((option) => option.split('=')[0].replaceAll('_', '-').replace(/^--no-/, '--')),
);
const v8Unset = Object.entries(V8_DEFAULTS)
  .filter(([option]) => !givenOptions.has(option))
  .map(([option, value]) => (value === null ? option : `${option}=${value}`));
if (process.platform === 'linux' && mallocUnset.length + v8Unset.length > 0 && typeof process.execve === 'function') {
  process.execve(process.execPath, [process.execPath, ...v8Unset, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...Object.fromEntries(mallocUnset) });
}

const root = fileURLToPath(new URL('..', import.meta.url));
if (buildIsCurrent(root)) {
  await import('../dist/main.js');
} else {
  // The package's own compiler settings, wherever the command runs from (swc-node reads the cwd's by default).
  process.env.SWC_NODE_PROJECT ??= fileURLToPath(new URL('../tsconfig.json', import.meta.url));
  register('@swc-node/register/esm', pathToFileURL(import.meta.filename));
  await import('../src/main.ts');
}
