import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_SETTINGS, buildIsCurrent, isTestHelper, modulesToCompile } from '../bin/build-inputs.js';
import { CLI } from './support/process.js';

const repository = fileURLToPath(new URL('..', import.meta.url));
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A package with one source module, the compiler settings and a build, everything dated an hour before the build. */
function builtPackage(): { root: string; touch(relative: string): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'catchment-build-'));
  roots.push(root);
  const earlier = new Date(Date.now() - 3_600_000);
  const files = ['src/modules/a.ts', 'src/modules/a.test.ts', ...BUILD_SETTINGS];
  for (const file of files) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), '{}');
  }
  for (const entry of ['src/modules', 'src', ...files]) utimesSync(path.join(root, entry), earlier, earlier);
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist/BUILT'), 'stamp');
  const later = new Date(Date.now() + 60_000);
  return { root, touch: (relative) => utimesSync(path.join(root, relative), later, later) };
}

describe('the compiled build (bin/build-inputs.js)', () => {
  test('is current until a compiled module, a source folder or a compiler setting changes; an edited test leaves it current', () => {
    const fresh = builtPackage();
    expect(buildIsCurrent(fresh.root)).toBe(true);
    fresh.touch('src/modules/a.test.ts');
    expect(buildIsCurrent(fresh.root)).toBe(true);
    for (const changed of ['src/modules/a.ts', 'src/modules', ...BUILD_SETTINGS]) {
      const built = builtPackage();
      built.touch(changed);
      expect({ changed, current: buildIsCurrent(built.root) }).toEqual({ changed, current: false });
    }
    const unbuilt = builtPackage();
    rmSync(path.join(unbuilt.root, 'dist/BUILT'));
    expect(buildIsCurrent(unbuilt.root)).toBe(false);
  });

  test('compiles no test or test helper, and every module it compiles imports only modules it compiles', () => {
    const compiled = new Set(modulesToCompile(repository));
    expect(compiled.has(path.join(repository, 'src/main.ts'))).toBe(true);
    for (const helper of ['src/config.test.ts', 'src/platform/http/test-loopback-server.ts', 'src/connectors/connector-testing.ts', 'src/connectors/text-extraction/test-fixtures.ts']) {
      expect(isTestHelper(path.basename(helper))).toBe(true);
      expect(compiled.has(path.join(repository, helper))).toBe(false);
    }
    const missing: string[] = [];
    for (const module of compiled) {
      const text = readFileSync(module, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)\.js'/g)) {
        const imported = path.resolve(path.dirname(module), `${specifier}.ts`);
        if (!compiled.has(imported)) missing.push(`${path.relative(repository, module)} imports ${specifier}.js`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('bin/catchment.js', () => {
  test('restarts itself in place (same pid, same Node options) with its malloc settings and V8 settings, each unless the environment or the Node options set it', async () => {
    const probe = `data:text/javascript,console.log(JSON.stringify({ pid: process.pid, arenas: process.env.MALLOC_ARENA_MAX ?? null, mmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, trimThreshold: process.env.MALLOC_TRIM_THRESHOLD_ ?? null, semiSpace: process.execArgv.find((option) => option.startsWith('--max-semi-space-size')) ?? null, growing: process.execArgv.find((option) => option.startsWith('--heap-growing-percent')) ?? null, liftoff: process.execArgv.find((option) => option.endsWith('liftoff-only')) ?? null }))`;
    const run = (env: Record<string, string>, nodeArguments: string[] = []) =>
      new Promise<{ pid: number; arenas: string | null; mmapThreshold: string | null; trimThreshold: string | null; semiSpace: string | null; growing: string | null; liftoff: string | null }[]>((resolve, reject) => {
        const child = spawn(process.execPath, [...nodeArguments, '--import', probe, CLI, 'no-such-command'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
        let stdout = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.on('error', reject);
        child.on('close', () => resolve(stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line))));
      });
    const [first, second, ...more] = await run({});
    expect(more).toEqual([]);
    expect(first).toEqual({ pid: expect.any(Number), arenas: null, mmapThreshold: null, trimThreshold: null, semiSpace: null, growing: null, liftoff: null });
    const defaults = { arenas: '2', mmapThreshold: '2097152', trimThreshold: '33554432', semiSpace: '--max-semi-space-size=4', growing: '--heap-growing-percent=50', liftoff: '--liftoff-only' };
    expect(second).toEqual({ pid: first!.pid, ...defaults });
    const [kept, completed] = await run({ MALLOC_ARENA_MAX: '4' });
    expect(completed).toEqual({ pid: kept!.pid, ...defaults, arenas: '4' });
    // Everything set by the operator: no restart, and the operator's V8 settings stay (`--no-liftoff-only` names the boolean too).
    expect(await run({ MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '131072', NODE_OPTIONS: '--max-semi-space-size=16' }, ['--heap-growing-percent=100', '--no-liftoff-only'])).toEqual([
      { pid: expect.any(Number), arenas: '4', mmapThreshold: '65536', trimThreshold: '131072', semiSpace: null, growing: '--heap-growing-percent=100', liftoff: '--no-liftoff-only' },
    ]);
    // An option named V8's other way (underscores) is the operator's too.
    expect(await run({ MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '131072', NODE_OPTIONS: '--max_semi_space_size=16' }, ['--heap_growing_percent=100', '--liftoff_only'])).toEqual([
      { pid: expect.any(Number), arenas: '4', mmapThreshold: '65536', trimThreshold: '131072', semiSpace: null, growing: null, liftoff: null },
    ]);
    // Only the malloc settings set: the restart adds the V8 settings alone.
    const [before, after] = await run({ MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '131072' });
    expect(after).toEqual({ pid: before!.pid, ...defaults, arenas: '4', mmapThreshold: '65536', trimThreshold: '131072' });
  });
});
