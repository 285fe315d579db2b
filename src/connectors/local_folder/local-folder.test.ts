import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../../platform/logger.js';
import { SourceConfigError, type SourceEntity, type SourceItem, type SourceRun } from '../connector.js';
import { docxWith, pdfWith } from '../text-extraction/test-fixtures.js';
import type { FolderCursor } from './folder-settings.js';
import connector from './index.js';
import { connectionContext, connectorEnvironment, parsedConfig } from '../connector-testing.js';
import { describeSchema, parseConfig, parseCursor } from '../contract/schemas.js';

/** A logger that keeps debug and info records, so skipped files and the summary can be checked. */
function recordingLogger() {
  const debug: { record: Record<string, unknown>; message: string }[] = [];
  const info: { record: Record<string, unknown>; message: string }[] = [];
  const noop = () => {};
  const logger = {
    debug: (record: Record<string, unknown>, message: string) => debug.push({ record, message }),
    info: (record: Record<string, unknown>, message: string) => info.push({ record, message }),
    warn: noop,
    error: noop,
    trace: noop,
    fatal: noop,
    child: () => logger,
  };
  return { logger: logger as unknown as Logger, debug, info };
}


let roots: string[];
let root: string; // the allowed root (real path)
let outside: string;
let docs: string;

const environment = () => connectorEnvironment(roots);

function start(config: Record<string, unknown>, cursor: FolderCursor | null = null, signal = new AbortController().signal) {
  const { logger, debug, info } = recordingLogger();
  const run = connector.sync({ ...connectionContext(connector, { config, signal }), logger, cursor, resuming: false, checkpoint: () => {} }, environment());
  return { run, debug, info };
}

async function drain(run: SourceRun): Promise<SourceItem[]> {
  const items: SourceItem[] = [];
  for await (const item of run.items) items.push(item);
  return items;
}

async function sync(config: Record<string, unknown>, cursor: FolderCursor | null = null) {
  const { run, debug, info } = start(config, cursor);
  const items = await drain(run);
  return {
    run,
    debug,
    info,
    items,
    entities: items.filter((item): item is SourceEntity => 'entityId' in item),
    keeps: items.flatMap((item) => ('keep' in item ? [item.keep] : [])),
    deletes: items.flatMap((item) => ('delete' in item ? [item.delete] : [])),
    cursor: run.nextCursor(),
  };
}

const validate = (config: Record<string, unknown>, localFolderRoots = roots) =>
  connector.validate(connectionContext(connector, { config }), connectorEnvironment(localFolderRoots));

async function configError(promise: Promise<unknown>): Promise<SourceConfigError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SourceConfigError);
  return error as SourceConfigError;
}

function write(relative: string, content: string | Buffer) {
  const file = path.join(docs, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

beforeEach(async () => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'catchment-root-')));
  outside = realpathSync(mkdtempSync(path.join(tmpdir(), 'catchment-outside-')));
  roots = [root];
  docs = path.join(root, 'docs');
  mkdirSync(docs);
  write('readme.md', '# Readme\nWelcome to the llama handbook.');
  write('.hidden.md', 'Dot files are read too.');
  write('guides/setup.txt', 'Install the walrus toolkit first.');
  write('guides/deep/report.pdf', pdfWith('Pelican census results'));
  write('guides/minutes.docx', await docxWith(['Otter meeting minutes']));
  write('guides/tool.ts', 'export function helper(): number {\n  return 42;\n}\n');
  write('node_modules/pkg/index.js', 'module.exports = 1;');
  write('.git/config', '[core]');
  write('pictures/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  write('blob.txt', Buffer.from([0x61, 0x00, 0x62]));
  mkdirSync(path.join(docs, 'empty'));
  writeFileSync(path.join(outside, 'secret.txt'), 'outside the root');
  symlinkSync(outside, path.join(docs, 'escape'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(docs, 'secret-link.txt'));
  symlinkSync(path.join(docs, 'guides', 'setup.txt'), path.join(docs, 'alias.txt'));
  symlinkSync(docs, path.join(docs, 'guides', 'deep', 'loop'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('local_folder catalog entry', () => {
  test('needs no credentials and says what it reads', () => {
    expect(connector).toMatchObject({ shortName: 'local_folder', auth: { kind: 'none' }, supportsContinuous: true, federatedSearch: false });
    expect(parsedConfig(connector, { path: '/data' })).toEqual({ path: '/data', include: ['**/*'], exclude: expect.arrayContaining(['**/node_modules/**', '**/.git/**']), max_file_bytes: 20 * 1024 * 1024 });
    expect(describeSchema(connector.config).fields.find((field) => field.name === 'path')).toMatchObject({ type: 'string', required: true });
  });
});

describe('local_folder validate', () => {
  test('accepts a folder inside an allowed root, and the root itself', async () => {
    await expect(validate({ path: docs })).resolves.toBeUndefined();
    await expect(validate({ path: root })).resolves.toBeUndefined();
    await expect(validate({ path: `${docs}/guides/../guides` })).resolves.toBeUndefined();
  });

  test('allowed roots are compared by real path: a root given through a symlink works', async () => {
    const linkToRoot = path.join(outside, 'root-link');
    symlinkSync(root, linkToRoot);
    await expect(validate({ path: docs }, [linkToRoot])).resolves.toBeUndefined();
    await expect(validate({ path: path.join(linkToRoot, 'docs') }, [linkToRoot])).resolves.toBeUndefined();
  });

  test('refuses a folder outside the roots, also one that merely shares a prefix', async () => {
    expect((await configError(validate({ path: outside }))).field).toBe('path');
    const sibling = `${root}-sibling`;
    mkdirSync(sibling);
    try {
      expect((await configError(validate({ path: sibling }))).message).toMatch(/outside/);
    } finally {
      rmSync(sibling, { recursive: true, force: true });
    }
  });

  test('refuses a symlink inside the root that leads outside it', async () => {
    const error = await configError(validate({ path: path.join(docs, 'escape') }));
    expect(error.field).toBe('path');
    expect(error.message).toMatch(/outside/);
  });

  test('refuses missing paths, files, relative paths and empty paths', async () => {
    expect((await configError(validate({ path: path.join(docs, 'missing') }))).message).toMatch(/does not exist/);
    expect((await configError(validate({ path: path.join(docs, 'readme.md') }))).message).toMatch(/not a folder/);
    expect((await configError(validate({ path: 'docs' }))).message).toMatch(/absolute/);
    expect(parseConfig(connector, { path: ' ' }).issues).toEqual([expect.objectContaining({ loc: ['config', 'path'], type: 'string_too_short' })]);
  });

  test('with no allowed roots the source is disabled, naming the setting', async () => {
    const error = await configError(validate({ path: docs }, []));
    expect(error.field).toBe('path');
    expect(error.message).toMatch(/CATCHMENT_LOCAL_FOLDER_ROOTS/);
  });
});

describe('local_folder sync', () => {
  test('a full run yields folders and supported files with breadcrumbs, and skips what it cannot or must not read', async () => {
    const { run, entities, keeps, deletes, debug, info, cursor } = await sync({ path: docs });
    expect(run.complete).toBe(true);
    expect(keeps).toEqual([]);
    expect(deletes).toEqual([]);
    // Folders come just before their first item; empty, excluded and image-only folders not at all.
    expect(entities.map((entity) => [entity.entityType, entity.entityId])).toEqual([
      ['file', '.hidden.md'],
      ['file', 'alias.txt'],
      ['folder', 'guides'],
      ['folder', 'guides/deep'],
      ['file', 'guides/deep/report.pdf'],
      ['file', 'guides/minutes.docx'],
      ['file', 'guides/setup.txt'],
      ['file', 'guides/tool.ts'],
      ['file', 'readme.md'],
    ]);
    const byId = new Map(entities.map((entity) => [entity.entityId, entity]));

    const report = byId.get('guides/deep/report.pdf')!;
    expect(report).toMatchObject({
      name: 'report.pdf',
      breadcrumbs: [
        { entityId: 'guides', name: 'guides', entityType: 'folder' },
        { entityId: 'guides/deep', name: 'deep', entityType: 'folder' },
      ],
      text: 'Pelican census results',
      webUrl: pathToFileURL(path.join(docs, 'guides', 'deep', 'report.pdf')).href,
      fields: { relative_path: 'guides/deep/report.pdf', extension: '.pdf', mime_type: 'application/pdf' },
      file: { name: 'report.pdf', mimeType: 'application/pdf' },
    });
    expect(report.file!.bytes.equals(pdfWith('Pelican census results'))).toBe(true);
    expect(report.fields.size).toBe(report.file!.size);
    expect(report.fields.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(report.updatedAt!.getTime()).toBeGreaterThan(0);
    expect(report.fields.modified_at).toBe(report.updatedAt!.toISOString());
    expect(report.language).toBeUndefined();

    expect(byId.get('guides/tool.ts')).toMatchObject({ language: 'typescript', text: 'export function helper(): number {\n  return 42;\n}\n' });
    expect(byId.get('guides/minutes.docx')!.text).toBe('Otter meeting minutes');
    expect(byId.get('readme.md')).toMatchObject({ breadcrumbs: [], text: '# Readme\nWelcome to the llama handbook.', fields: { mime_type: 'text/markdown' } });
    expect(byId.get('alias.txt')!.text).toBe('Install the walrus toolkit first.'); // a link inside the folder is followed
    expect(byId.get('guides')).toMatchObject({ breadcrumbs: [], text: 'guides', updatedAt: null, fields: { relative_path: 'guides' }, webUrl: pathToFileURL(path.join(docs, 'guides')).href });
    expect(byId.get('guides/deep')!.breadcrumbs).toEqual([{ entityId: 'guides', name: 'guides', entityType: 'folder' }]);

    // Nothing from outside the folder, excluded folders, binaries or unsupported types.
    expect(entities.some((entity) => entity.text.includes('outside the root'))).toBe(false);
    const skipped = Object.fromEntries(debug.filter((entry) => entry.record.file).map((entry) => [entry.record.file, entry.record.reason]));
    expect(skipped).toMatchObject({
      'pictures/photo.png': 'unsupported file type',
      'blob.txt': 'binary content or no text',
      escape: 'symbolic link leading outside the folder',
      'secret-link.txt': 'symbolic link leading outside the folder',
      'guides/deep/loop': 'folder already walked through another path',
    });
    expect(Object.keys(skipped).some((file) => String(file).includes('node_modules') || String(file).includes('.git'))).toBe(false);
    // The walk's summary, at info level: every skip counted by its reason.
    const byReason: Record<string, number> = {};
    for (const reason of debug.filter((entry) => entry.record.file).map((entry) => String(entry.record.reason))) byReason[reason] = (byReason[reason] ?? 0) + 1;
    expect(info.find((entry) => entry.message === 'local_folder: walk finished')?.record.skipped).toEqual(byReason);

    expect(cursor).toMatchObject({ version: 1, root: docs, folders: ['guides', 'guides/deep'] });
    const files = (cursor as { files: Record<string, { indexed: boolean; sha256: string }> }).files;
    expect(Object.keys(files).sort()).toEqual(['.hidden.md', 'alias.txt', 'blob.txt', 'guides/deep/report.pdf', 'guides/minutes.docx', 'guides/setup.txt', 'guides/tool.ts', 'readme.md']);
    expect(files['blob.txt']!.indexed).toBe(false);
    expect(files['readme.md']).toMatchObject({ indexed: true, sha256: byId.get('readme.md')!.fields.sha256 });
  });

  test('include and exclude globs match paths relative to the folder; a pattern without "/" matches names at any depth', async () => {
    const markdown = await sync({ path: docs, include: ['*.md', 'guides/*.ts'] });
    expect(markdown.entities.map((entity) => entity.entityId)).toEqual(['.hidden.md', 'guides', 'guides/tool.ts', 'readme.md']);

    const noGuides = await sync({ path: docs, exclude: [...parsedConfig(connector, { path: docs }).exclude, 'guides/**', '.*'] });
    expect(noGuides.entities.map((entity) => entity.entityId)).toEqual(['alias.txt', 'readme.md']);

    const deepOnly = await sync({ path: docs, include: ['guides/deep/**'] });
    expect(deepOnly.entities.map((entity) => entity.entityId)).toEqual(['guides', 'guides/deep', 'guides/deep/report.pdf']);

    // Without the default excludes, node_modules is read like any folder.
    const everything = await sync({ path: docs, exclude: [] });
    expect(everything.entities.map((entity) => entity.entityId)).toEqual(expect.arrayContaining(['node_modules/pkg/index.js']));
  });

  test('files larger than max_file_bytes are skipped and logged', async () => {
    write('big.txt', 'x'.repeat(2000));
    const { entities, debug } = await sync({ path: docs, max_file_bytes: 1000 });
    expect(entities.map((entity) => entity.entityId)).not.toContain('big.txt');
    expect(entities.map((entity) => entity.entityId)).toContain('readme.md');
    expect(debug.find((entry) => entry.record.file === 'big.txt')?.record.reason).toBe('larger than max_file_bytes');
  });

  test('a file whose text extraction fails is left out once, for that reason, and not indexed', async () => {
    write('broken.docx', 'this is not really a Word document');
    const { entities, debug, cursor } = await sync({ path: docs });
    expect(entities.map((entity) => entity.entityId)).not.toContain('broken.docx');
    expect(debug.filter((entry) => entry.record.file === 'broken.docx').map((entry) => entry.record.reason)).toEqual(['text extraction failed']);
    expect((cursor as FolderCursor).files['broken.docx']!.indexed).toBe(false);
  });

  test('an incremental run yields exactly the changed and new files, keeps the rest and deletes what is gone', async () => {
    const first = await sync({ path: docs });

    write('readme.md', '# Readme\nWelcome to the alpaca handbook, second edition.'); // edited
    const later = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000); // whole seconds: exact through utimes
    utimesSync(path.join(docs, 'guides', 'setup.txt'), later, later); // touched, same content
    rmSync(path.join(docs, 'guides', 'minutes.docx')); // deleted
    write('guides/new.md', 'A brand new heron page.'); // added

    const second = await sync({ path: docs }, first.cursor);
    expect(second.run.complete).toBe(true);
    expect(second.entities.map((entity) => entity.entityId)).toEqual(['guides/new.md', 'readme.md']);
    expect(second.entities.find((entity) => entity.entityId === 'readme.md')!.text).toContain('alpaca');
    expect(second.entities.find((entity) => entity.entityId === 'guides/new.md')!.breadcrumbs).toEqual([{ entityId: 'guides', name: 'guides', entityType: 'folder' }]);
    expect(second.keeps.sort()).toEqual(['.hidden.md', 'alias.txt', 'guides', 'guides/deep', 'guides/deep/report.pdf', 'guides/setup.txt', 'guides/tool.ts']);
    expect(second.deletes).toEqual(['guides/minutes.docx']);
    // Every entity of the first run is accounted for: kept, yielded again, or deleted.
    const mentioned = new Set([...second.entities.map((entity) => entity.entityId), ...second.keeps, ...second.deletes]);
    expect(first.entities.every((entity) => mentioned.has(entity.entityId))).toBe(true);

    // The touched file was read again: the cursor has its new mtime, with the same hash.
    const files = (run: typeof first) => (run.cursor as { files: Record<string, { mtimeMs: number; sha256: string }> }).files;
    expect(files(second)['guides/setup.txt']!.mtimeMs).toBe(later.getTime());
    expect(files(second)['guides/setup.txt']!.sha256).toBe(files(first)['guides/setup.txt']!.sha256);
    expect(files(second)['guides/minutes.docx']).toBeUndefined();

    // Nothing changed since: only keep markers.
    const third = await sync({ path: docs }, second.cursor);
    expect(third.entities).toEqual([]);
    expect(third.deletes).toEqual([]);
    expect(third.keeps.sort()).toEqual(['.hidden.md', 'alias.txt', 'guides', 'guides/deep', 'guides/deep/report.pdf', 'guides/new.md', 'guides/setup.txt', 'guides/tool.ts', 'readme.md']);
  });

  test('a removed folder deletes its folder entities and files; a folder left with nothing searchable goes too', async () => {
    const first = await sync({ path: docs });
    rmSync(path.join(docs, 'guides', 'deep'), { recursive: true });
    const second = await sync({ path: docs }, first.cursor);
    expect(second.entities).toEqual([]);
    expect(second.deletes.sort()).toEqual(['guides/deep', 'guides/deep/report.pdf']);
    expect(second.keeps).toContain('guides');

    const third = await sync({ path: docs, include: ['readme.md'] }, second.cursor);
    expect(third.keeps).toEqual(['readme.md']);
    expect(third.deletes.sort()).toEqual(['.hidden.md', 'alias.txt', 'guides', 'guides/minutes.docx', 'guides/setup.txt', 'guides/tool.ts']);
  });

  test('a file replaced by a folder of the same name is not deleted after being yielded', async () => {
    write('topic.md', 'topic as a file');
    const first = await sync({ path: docs });
    rmSync(path.join(docs, 'topic.md'));
    write('topic.md/inner.md', 'topic as a folder');
    const second = await sync({ path: docs }, first.cursor);
    expect(second.entities.map((entity) => [entity.entityType, entity.entityId])).toEqual([
      ['folder', 'topic.md'],
      ['file', 'topic.md/inner.md'],
    ]);
    expect(second.deletes).toEqual([]);
  });

  test('a cursor of another folder, or of an unknown shape, means a full read', async () => {
    const first = await sync({ path: docs });
    const other = await sync({ path: path.join(docs, 'guides') }, first.cursor);
    expect(other.keeps).toEqual([]);
    expect(other.deletes).toEqual([]);
    expect(other.entities.map((entity) => entity.entityId)).toEqual(['deep', 'deep/report.pdf', 'minutes.docx', 'setup.txt', 'tool.ts']);

    // The platform parses stored cursors: one of an unknown shape is none.
    expect(parseCursor(connector, { 'readme.md': { mtimeMs: 1, size: 1, sha256: 'x' } })).toBeNull();
    const legacy = await sync({ path: docs }, parseCursor(connector, { 'readme.md': { mtimeMs: 1, size: 1, sha256: 'x' } }));
    expect(legacy.keeps).toEqual([]);
    expect(legacy.entities.length).toBe(first.entities.length);
  });

  test('a folder that vanished fails the run instead of looking empty', async () => {
    const { run } = start({ path: docs });
    rmSync(docs, { recursive: true, force: true });
    await expect(drain(run)).rejects.toBeInstanceOf(SourceConfigError);
  });

  test('a folder outside the roots is refused at sync time too', async () => {
    const { run } = start({ path: outside });
    await expect(drain(run)).rejects.toBeInstanceOf(SourceConfigError);
  });

  test('aborting stops the walk with the signal’s reason', async () => {
    for (let i = 0; i < 50; i++) write(`bulk/file-${String(i).padStart(2, '0')}.txt`, `file ${i}`);
    const controller = new AbortController();
    const { run } = start({ path: docs }, null, controller.signal);
    const reason = new Error('cancelled by test');
    const seen: SourceItem[] = [];
    const consume = (async () => {
      for await (const item of run.items) {
        seen.push(item);
        if (seen.length === 3) controller.abort(reason);
      }
    })();
    await expect(consume).rejects.toBe(reason);
    expect(seen.length).toBe(3);

    const aborted = new AbortController();
    aborted.abort(reason);
    await expect(drain(start({ path: docs }, null, aborted.signal).run)).rejects.toBe(reason);
  });
});
