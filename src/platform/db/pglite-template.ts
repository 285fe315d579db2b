import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepAsTemplate } from './pglite-thread.js';

/**
 * A new embedded database starts from a template: the files of a database PGlite's initdb has just
 * made, nothing in it yet, kept once per PGlite version. initdb runs inside PGlite's WebAssembly: the
 * first start in a new data directory took ~7 s of CPU and peaked at ~850 MiB of resident memory
 * (a later start of the same directory: ~280 MiB); loading the template takes ~2.5 s and ~370 MiB.
 * `npm run build` makes it (bin/build.js); a database made without one leaves it for the next.
 */

/**
 * node_modules/.cache/catchment/pglite-<version>.tar.gz under the package (src/ and dist/ sit at the
 * same depth), named by the PGlite release its files are of: another one makes its own. Named at
 * every start of the embedded database, read only when a new database is made (a server deployment
 * with DATABASE_URL never asks).
 */
export function defaultTemplateFile(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite'); // …/@electric-sql/pglite/dist/index.cjs
  const { version } = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return path.join(fileURLToPath(new URL('../../../', import.meta.url)), 'node_modules', '.cache', 'catchment', `pglite-${version}.tar.gz`);
}

/** Makes the template in `file` from a database of its own, made for it and removed after (bin/build.js). */
export async function makeTemplate(file = defaultTemplateFile()): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-pglite-template-'));
  try {
    const { PGlite } = await import('@electric-sql/pglite'); // only the build makes templates: a server never loads PGlite on its main thread
    const db = await PGlite.create(directory);
    try {
      await keepAsTemplate(db, file);
    } finally {
      await db.close();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
