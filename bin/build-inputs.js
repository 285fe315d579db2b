// What the compiled build (dist/) is made from: the modules bin/build.js compiles, and whether a build
// is still current for bin/catchment.js. Plain JavaScript: both run before any TypeScript loader.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Files whose change changes the build besides src/: the compiler settings and the dependencies. */
export const BUILD_SETTINGS = ['tsconfig.json', 'package.json', '.swcrc'];

/**
 * Modules only tests (and benches, which run the sources) import: tests, fixtures, the contracts run
 * against each adapter, the fake servers of the sources (`test-*.ts`) and the connector test kit.
 * Left out of dist/: an installed service never loads them.
 */
export function isTestHelper(fileName) {
  return /\.(test|fixture|contract)\.ts$/.test(fileName) || /^test-.*\.ts$/.test(fileName) || fileName.endsWith('-testing.ts');
}

/** The TypeScript modules under `root`/src that the build compiles, as absolute paths. */
export function modulesToCompile(root) {
  return readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !isTestHelper(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * The build under `root` is current when its stamp (dist/BUILT) is newer than every module it compiles,
 * every source folder (a folder's time changes when a file in it is added, removed or renamed) and the
 * compiler settings; an edited test leaves it current. A walk of a few hundred entries: milliseconds.
 */
export function buildIsCurrent(root) {
  const stamp = path.join(root, 'dist', 'BUILT');
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  const newer = (file) => existsSync(file) && statSync(file).mtimeMs > built;
  if (BUILD_SETTINGS.some((name) => newer(path.join(root, name)))) return false;
  const sources = path.join(root, 'src');
  if (!existsSync(sources)) return true; // an install that ships the build alone
  if (newer(sources)) return false;
  const counts = (entry) => entry.isDirectory() || (entry.isFile() && !isTestHelper(entry.name));
  return readdirSync(sources, { recursive: true, withFileTypes: true }).every((entry) => !counts(entry) || !newer(path.join(entry.parentPath, entry.name)));
}
