import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Logger } from '../../src/platform/logger.js';
import { capturingLogger, type LogLine } from '../support/capturing-logger.js';
import { http } from '../support/harness.js';
import { waitForJob, type Api } from '../support/sync-helpers.js';

/**
 * Issue 12, finding 7: started on a 0755 data directory, most PGlite files were 0666 and the raw
 * store and the index readable by every user of the machine. Now the data directory is 0700, every
 * file Catchment writes is owner-only (umask 077, and PGlite's own files tightened after it starts),
 * what an older version left open is tightened at start, and entries of someone else are named in
 * a warning and left alone.
 */

interface DataDirectoryLogLine extends LogLine {
  entries?: unknown;
}

/** Every entry under `root` (symbolic links not followed) with its permission bits. */
function modes(root: string): Map<string, number> {
  const found = new Map<string, number>([['.', lstatSync(root).mode & 0o777]]);
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    found.set(path.relative(root, full), lstatSync(full).mode & 0o777);
  }
  return found;
}

/** Entries other users could read, write or enter. */
const openToOthers = (found: Map<string, number>) => [...found].filter(([, mode]) => mode & 0o077).map(([entry, mode]) => `${entry} ${mode.toString(8)}`);

describe('issue 12-07: the data directory is for its owner only', () => {
  let dataDir: string;
  let previousUmask: number;
  const start = (logger: Logger): Promise<RunningServer> =>
    startServer(loadConfig({ PORT: '0', CATCHMENT_DATA_DIR: dataDir, CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WORKER_TICK_SECONDS: '1' }, '/nonexistent/.env'), logger);

  beforeAll(() => {
    previousUmask = process.umask(0o022); // what most shells use
    dataDir = mkdtempSync(path.join(tmpdir(), 'issue12-07-'));
    chmodSync(dataDir, 0o755);
    // What an older version left: raw data readable by all. And a file of the operator's own.
    mkdirSync(path.join(dataDir, 'raw', 'old-collection'), { recursive: true, mode: 0o755 });
    writeFileSync(path.join(dataDir, 'raw', 'old-collection', 'entity.json'), '{"secret": "raw text"}', { mode: 0o644 });
    writeFileSync(path.join(dataDir, 'NOTES.txt'), 'operator notes', { mode: 0o644 });
  });
  afterAll(() => {
    process.umask(previousUmask);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a first start on a 0755 directory: everything Catchment writes, synced data included, is owner-only', async () => {
    const { logger, lines } = capturingLogger<DataDirectoryLogLine>('warn');
    const running = await start(logger);
    try {
      const key = running.bootstrapApiKey!;
      const call: Api = (method, pathAndQuery, body) => http(running.url, method, pathAndQuery, { apiKey: key, body });
      expect((await call('POST', '/collections', { name: 'Private', readable_id: 'private' })).status).toBe(200);
      const connection = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'private' })).body.id;
      const pushed = await call('POST', `/source-connections/${connection}/entities`, { entities: [{ id: 'salaries', text: 'confidential salaries of 2025', web_url: 'https://hr.example/salaries' }] });
      expect(pushed.status).toBe(200);
      expect(await waitForJob(call, connection, pushed.body.job.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED' });
    } finally {
      await running.stop();
    }

    const found = modes(dataDir);
    expect(found.get('.')).toBe(0o700);
    for (const written of ['pglite', 'raw', 'lancedb', 'encryption.key']) expect([...found.keys()].some((entry) => entry === written)).toBe(true);
    expect([...found.keys()].filter((entry) => entry.startsWith('lancedb/')).length).toBeGreaterThan(0);
    // The synced entity's record, in the raw store's pack of its batch.
    expect([...found.keys()].filter((entry) => entry.startsWith(`raw${path.sep}`) && entry.endsWith('.jsonl')).length).toBeGreaterThan(0);
    expect(openToOthers(found)).toEqual(['NOTES.txt 644']);
    expect(found.get(path.join('raw', 'old-collection', 'entity.json'))).toBe(0o600);

    expect(lines.filter((line) => line.level === 40).map((line) => [line.msg, line.entries])).toEqual(
      expect.arrayContaining([
        ['the data directory was open to other users: it is now 0700', undefined],
        ['files of the data directory were readable by other users: they are now owner-only', 3], // raw/, raw/old-collection/ and its file
        ['the data directory holds entries Catchment did not create that other users can read; they are left as they are', ['NOTES.txt']],
      ]),
    );
  });

  test('a data directory opened up again is tightened at the next start', async () => {
    chmodSync(dataDir, 0o755);
    chmodSync(path.join(dataDir, 'encryption.key'), 0o644);
    chmodSync(path.join(dataDir, 'lancedb'), 0o755);
    const { logger, lines } = capturingLogger<DataDirectoryLogLine>('warn');
    await (await start(logger)).stop();
    expect(openToOthers(modes(dataDir))).toEqual(['NOTES.txt 644']);
    expect(lines.find((line) => line.msg.startsWith('files of the data directory were readable'))?.entries).toBeGreaterThanOrEqual(2);
  });
});
