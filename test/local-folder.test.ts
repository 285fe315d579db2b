import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { extractText } from '../src/connectors/text-extraction/extract-text.js';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** A one-page PDF with a text object and a correct cross-reference table. */
function pdfWith(text: string): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${`BT /F1 18 Tf 72 720 Td (${text}) Tj ET`.length} >>\nstream\nBT /F1 18 Tf 72 720 Td (${text}) Tj ET\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A minimal DOCX (a zip with word/document.xml), built with the zip library mammoth itself uses. */
async function docxWith(text: string): Promise<Buffer> {
  const JSZip = createRequire(createRequire(import.meta.url).resolve('mammoth'))('jszip');
  const zip = new JSZip();
  zip.file('[Content_Types].xml', '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
  zip.file('_rels/.rels', '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
  zip.file('word/document.xml', `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`);
  return zip.generateAsync({ type: 'nodebuffer' });
}

describe('text extraction', () => {
  test('PDF, DOCX, HTML, Markdown with a BOM and code become text; binary files do not', async () => {
    expect((await extractText({ name: 'a.pdf', bytes: pdfWith('Quarterly pelican census') }))!.text).toContain('Quarterly pelican census');
    expect((await extractText({ name: 'a.docx', bytes: await docxWith('Minutes of the otter meeting') }))!.text).toBe('Minutes of the otter meeting');
    const html = (await extractText({ name: 'a.html', bytes: Buffer.from('<html><head><style>p{color:red}</style><script>alert(1)</script></head><body><h1>Title</h1><p>Body <a href="http://x">link</a></p></body></html>') }))!;
    expect(html.text).toMatch(/TITLE|Title/);
    expect(html.text).toContain('Body link');
    expect(html.text).not.toMatch(/alert|color/);
    expect((await extractText({ name: 'a.md', bytes: Buffer.from('\uFEFF# Heading\ntext') }))).toEqual({ text: '# Heading\ntext', mimeType: 'text/markdown' });
    expect(await extractText({ name: 'main.py', bytes: Buffer.from('def f():\n  return 1\n') })).toMatchObject({ language: 'python' });
    expect(await extractText({ name: 'blob.bin', bytes: Buffer.from([1, 2, 3]) })).toBeNull();
    expect(await extractText({ name: 'notes.txt', bytes: Buffer.from([0x61, 0x00, 0x62]) })).toBeNull();
  });
});

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
    writeFileSync(path.join(docs, 'guides', 'minutes.docx'), await docxWith('Otter meeting minutes'));
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
