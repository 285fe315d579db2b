#!/usr/bin/env node
// Compiles src/ (tests and their helpers left out: build-inputs.js) into dist/ with the swc settings the
// sources run with in development (.swcrc: legacy decorators with their metadata), so a production start
// loads neither swc nor TypeScript (~130 MiB of resident memory). dist/ sits beside src/, so the modules'
// relative paths to openapi/, web/dist and package.json are the same from both. Then makes the template new
// embedded databases start from, when there is none yet. `npm run build`; `prepare` runs it.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transformFile } from '@swc/core';
import { modulesToCompile } from './build-inputs.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = path.join(root, 'src');
const target = path.join(root, 'dist');
const options = { ...JSON.parse(readFileSync(path.join(root, '.swcrc'), 'utf8')), swcrc: false, sourceMaps: false };

const files = modulesToCompile(root);

const started = performance.now();
rmSync(target, { recursive: true, force: true });
await Promise.all(
  files.map(async (file) => {
    const { code } = await transformFile(file, { ...options, filename: file });
    const output = path.join(target, path.relative(source, file)).replace(/\.ts$/, '.js');
    mkdirSync(path.dirname(output), { recursive: true });
    writeFileSync(output, code);
  }),
);
// Written last: bin/catchment.js runs dist/ only when no source is newer than this stamp.
writeFileSync(path.join(target, 'BUILT'), `${new Date().toISOString()}\n`);
console.log(`built ${files.length} modules into dist/ in ${Math.round(performance.now() - started)} ms`);

// The template new embedded databases start from (src/platform/db/pglite-template.ts), once per PGlite release.
const template = await import(pathToFileURL(path.join(target, 'platform', 'db', 'pglite-template.js')).href);
const { defaultTemplateFile } = await import(pathToFileURL(path.join(target, 'platform', 'db', 'pglite-thread.js')).href);
const templateFile = defaultTemplateFile();
if (!existsSync(templateFile)) {
  const making = performance.now();
  await template.makeTemplate(templateFile);
  console.log(`made the embedded database template ${path.relative(root, templateFile)} in ${Math.round(performance.now() - making)} ms`);
}
