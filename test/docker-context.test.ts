import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// Without a Docker engine: the build context is computed from .dockerignore with Docker's own matching rules
// (@balena/dockerignore), over this checkout as it stands (node_modules installed, data/ there after a local run).
// A CommonJS module whose typings claim an ES default export: loaded as what it is.
const dockerignore = createRequire(import.meta.url)('@balena/dockerignore') as typeof import('@balena/dockerignore').default;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const filter = dockerignore({ ignorecase: false }).add(readFileSync(path.join(ROOT, '.dockerignore'), 'utf8'));

/** Files Docker would send: a walk that, like Docker's, skips an ignored directory when no `!` rule reopens it. */
function buildContext(directory = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, directory), { withFileTypes: true })) {
    const relative = directory ? `${directory}/${entry.name}` : entry.name;
    if (filter.ignores(relative)) continue;
    if (entry.isDirectory()) files.push(...buildContext(relative));
    else files.push(relative);
  }
  return files;
}

/** What must never reach an image: data (the embedded database, encryption.key), secrets, installed modules, tests. */
const FORBIDDEN = [/(^|\/)data\//, /(^|\/)\.env(\.|$)/, /\.(key|pem)$/, /(^|\/)node_modules\//, /^\.git\//, /^test\//, /\.test\.ts$/, /^bench\//];

describe('container image', () => {
  const context = buildContext();

  test('the build context holds no data, secret, installed module or test file', () => {
    expect(context.length).toBeGreaterThan(50);
    expect(context.filter((file) => FORBIDDEN.some((pattern) => pattern.test(file)))).toEqual([]);
  });

  test('files a working checkout may hold are ignored wherever they are', () => {
    for (const file of [
      'data/encryption.key',
      'data/pglite/base/1/1259',
      'data/raw/abc.json',
      '.env',
      '.env.production',
      'node_modules/express/index.js',
      'web/node_modules/vite/index.js',
      'test/cli.test.ts',
      'src/config.test.ts',
      'src/connectors/text-extraction/test-fixtures.ts',
      'tls/server.pem',
      'coverage/lcov.info',
    ]) {
      expect([file, filter.ignores(file)]).toEqual([file, true]);
    }
  });

  test('every file the Dockerfile copies from the context is in it', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/)).filter((source) => source !== '.');
    expect(sources).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'bin', 'src', 'openapi']));
    for (const source of sources) {
      expect([source, context.some((file) => file === source || file.startsWith(`${source}/`))]).toEqual([source, true]);
    }
    for (const file of ['bin/catchment.js', 'src/main.ts', 'src/migrations/index.ts', 'openapi/openapi.yaml', 'tsconfig.json', '.swcrc']) expect(context).toContain(file);
    // Multi-stage, npm ci, an unprivileged user and the data volume.
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).not.toMatch(/npm install/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
  });

  test('docker-compose.yml parses and builds the API and the worker from the Dockerfile', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { build?: { context: string; dockerfile?: string; dockerfile_inline?: string }; command?: string[]; environment?: Record<string, string> }>;
    };
    for (const [name, command] of [['api', 'serve'], ['worker', 'worker']] as const) {
      const service = compose.services[name]!;
      expect(service.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
      expect(service.command).toEqual(['node', 'bin/catchment.js', command]);
      expect(service.environment?.CATCHMENT_DATA_DIR).toBe('/data');
    }
  });
});
