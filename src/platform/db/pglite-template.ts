import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultTemplateFile, keepAsTemplate } from './pglite-thread.js';

/**
 * A new embedded database starts from a template: the files of a database PGlite's initdb has just
 * made, nothing in it yet, kept once per PGlite version. initdb runs inside PGlite's WebAssembly: the
 * first start in a new data directory took ~7 s of CPU and peaked at ~850 MiB of resident memory
 * (a later start of the same directory: ~280 MiB); loading the template takes ~2.5 s and ~370 MiB.
 * `npm run build` makes it (bin/build.js); a database made without one leaves it for the next.
 */

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
