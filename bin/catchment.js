#!/usr/bin/env node
// Runs the compiled build (dist/, `npm run build`) when it is current, so a production start loads neither
// swc nor TypeScript; otherwise the TypeScript sources through swc (decorator metadata included), so a
// changed source is never run from a stale build.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The build is current when every source file and folder is older than its stamp (a folder's time
 * changes when a file in it is added, removed or renamed). A walk of a few hundred entries: milliseconds.
 */
function buildIsCurrent() {
  const stamp = `${root}dist/BUILT`;
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  const sources = `${root}src`;
  if (!existsSync(sources)) return true; // an install that ships the build alone
  if (statSync(sources).mtimeMs > built) return false;
  return readdirSync(sources, { recursive: true, withFileTypes: true }).every((entry) => !(entry.isFile() || entry.isDirectory()) || statSync(`${entry.parentPath}/${entry.name}`).mtimeMs <= built);
}

if (buildIsCurrent()) {
  await import('../dist/main.js');
} else {
  // The package's own compiler settings, wherever the command runs from (swc-node reads the cwd's by default).
  process.env.SWC_NODE_PROJECT ??= fileURLToPath(new URL('../tsconfig.json', import.meta.url));
  register('@swc-node/register/esm', pathToFileURL(import.meta.filename));
  await import('../src/main.ts');
}
