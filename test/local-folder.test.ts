import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { docxWith, pdfWith } from '../src/connectors/text-extraction/test-fixtures.js';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

describe('local_folder source (embedded deployment)', () => {
  let server: TestServer;
  let call: Api;
  let root: string;
  let docs: string;
  let outside: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'catchment-folder-'));
    outside = mkdtempSync(path.join(tmpdir(), 'catchment-outside-'));
    docs = path.join(root, 'docs');
    mkdirSync(path.join(docs, 'guides', 'deep'), { recursive: true });
    mkdirSync(path.join(docs, 'node_modules', 'pkg'), { recursive: true });
    writeFileSync(path.join(docs, 'readme.md'), '# Readme\nWelcome to the llama handbook.');
    writeFileSync(path.join(docs, 'guides', 'setup.txt'), 'Install the walrus toolkit first.');
    writeFileSync(path.join(docs, 'guides', 'deep', 'report.pdf'), pdfWith('Pelican census results'));
    writeFileSync(path.join(docs, 'guides', 'minutes.docx'), await docxWith(['Otter meeting minutes']));
    writeFileSync(path.join(docs, 'guides', 'tool.ts'), 'export function helper(): number {\n  return 42;\n}\n');
    writeFileSync(path.join(docs, 'node_modules', 'pkg', 'index.js'), 'ignored');
    writeFileSync(path.join(docs, 'image.bin'), Buffer.from([0, 1, 2, 3]));
    writeFileSync(path.join(outside, 'secret.txt'), 'outside the root');
    symlinkSync(outside, path.join(docs, 'escape'));
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root } });
    call = api(server.url, server.apiKey);
    await call('POST', '/collections', { name: 'Folder docs', readable_id: 'folder-docs' });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const create = (config: Record<string, unknown>) => call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'folder-docs', config });

  test('paths outside the allowed roots, missing folders and files are refused with 422 at config.path', async () => {
    for (const bad of [outside, path.join(root, 'missing'), path.join(docs, 'readme.md'), path.join(docs, 'escape')]) {
      const response = await create({ path: bad });
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'config', 'path']);
    }
  });

  test('a sync reads every supported file with folders as breadcrumbs; the next run picks up exactly the edits', async () => {
    const connection = (await create({ path: docs })).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    const first = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED']);
    // Files: readme.md, setup.txt, report.pdf, minutes.docx, tool.ts. Folders: guides, guides/deep.
    expect(first).toMatchObject({ status: 'COMPLETED', entities_inserted: 7, error: null });
    const record = (await call('GET', `/source-connections/${connection.id}`)).body;
    expect(record.entities.by_type).toMatchObject({ file: { count: 5 }, folder: { count: 2 } });

    const collectionId = (await call('GET', '/collections/folder-docs')).body.id;
    const vectors = await server.running.core.vectors();
    const pdfChunks = await vectors.search(collectionId, { strategy: 'keyword', text: 'pelican', limit: 5, offset: 0 });
    expect(pdfChunks[0]!.chunk).toMatchObject({ entityId: 'guides/deep/report.pdf', breadcrumbs: [{ entity_id: 'guides', name: 'guides', entity_type: 'folder' }, { entity_id: 'guides/deep', name: 'deep', entity_type: 'folder' }] });
    expect((await vectors.search(collectionId, { strategy: 'keyword', text: 'outside', limit: 5, offset: 0 })).length).toBe(0);

    // Edit one file, touch another without changing it, delete a third, add a fourth.
    writeFileSync(path.join(docs, 'readme.md'), '# Readme\nWelcome to the alpaca handbook.');
    const later = new Date(Date.now() + 5000);
    utimesSync(path.join(docs, 'guides', 'setup.txt'), later, later);
    rmSync(path.join(docs, 'guides', 'minutes.docx'));
    writeFileSync(path.join(docs, 'guides', 'new.md'), 'A brand new heron page.');
    const second = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    const done = await waitForJob(call, connection.id, second.id, ['COMPLETED', 'FAILED']);
    expect(done).toMatchObject({ status: 'COMPLETED', entities_inserted: 1, entities_updated: 1, entities_deleted: 1 });
    expect((await vectors.search(collectionId, { strategy: 'keyword', text: 'alpaca', limit: 5, offset: 0 }))[0]!.chunk.entityId).toBe('readme.md');
    expect((await vectors.search(collectionId, { strategy: 'keyword', text: 'llama', limit: 5, offset: 0 })).length).toBe(0);
    expect((await vectors.search(collectionId, { strategy: 'keyword', text: 'otter', limit: 5, offset: 0 })).length).toBe(0);
  });
});
