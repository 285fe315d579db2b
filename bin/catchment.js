#!/usr/bin/env node
// Runs the compiled build (dist/, `npm run build`) when it is current, so a production start loads neither
// swc nor TypeScript; otherwise the TypeScript sources through swc (decorator metadata included), so a
// changed source is never run from a stale build.
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildIsCurrent } from './build-inputs.js';

/**
 * glibc's malloc gives threads that allocate at once arenas of their own (up to 8 per core) and hands
 * little of them back: with LanceDB's tokio threads, PGlite's and the embedder's, resident memory grew
 * without end over a long sync. Two arenas keep it flat at the same speed (README, Memory). glibc reads
 * the variable when the process starts, so unless the operator set it the process replaces itself
 * (execve: same pid, same arguments) with it set. Other C libraries ignore it.
 */
const MALLOC_ARENAS = '2';
if (process.platform === 'linux' && process.env.MALLOC_ARENA_MAX === undefined && typeof process.execve === 'function') {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, MALLOC_ARENA_MAX: MALLOC_ARENAS });
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
