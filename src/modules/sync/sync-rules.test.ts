import { describe, expect, test } from '@jest/globals';
import { stubEntity } from '../../connectors/stub/index.js';
import { connectionStatus } from '../connections/connection-views.js';
import { chunkText } from './chunker.js';
import { contentHash } from './content-hash.js';
import { nextRun } from './schedule.js';
import { layerSyncConfigs } from './sync-config-layers.js';

describe('sync configuration layering (collection → connection → job)', () => {
  test('the most specific layer that sets a member wins; unset members take defaults', () => {
    const effective = layerSyncConfigs(
      { destinations: null, handlers: { enableVectorHandlers: true, enableRawDataHandler: false, enableEntityDbHandler: true }, cursor: null, behavior: { skipHashComparison: true, replayFromArf: false, skipGuardrails: false } },
      { destinations: null, handlers: null, cursor: { skipLoad: true, skipUpdates: false }, behavior: null },
      { destinations: null, handlers: null, cursor: null, behavior: { skipHashComparison: false, replayFromArf: false, skipGuardrails: true } },
    );
    expect(effective).toEqual({
      destinations: { skipVectorDb: false, targetDestinations: null, excludeDestinations: null },
      handlers: { enableVectorHandlers: true, enableRawDataHandler: false, enableEntityDbHandler: true },
      cursor: { skipLoad: true, skipUpdates: false },
      behavior: { skipHashComparison: false, replayFromArf: false, skipGuardrails: true },
    });
  });
});

describe('connection status', () => {
  test.each<[boolean, Parameters<typeof connectionStatus>[1], string]>([
    [false, null, 'pending_auth'],
    [true, null, 'pending_sync'],
    [true, { status: 'RUNNING', credentialsRejected: false }, 'syncing'],
    [true, { status: 'CANCELLING', credentialsRejected: false }, 'syncing'],
    [true, { status: 'FAILED', credentialsRejected: true }, 'needs_reauth'],
    [true, { status: 'FAILED', credentialsRejected: false }, 'error'],
    [true, { status: 'COMPLETED', credentialsRejected: false }, 'active'],
    [true, { status: 'CANCELLED', credentialsRejected: false }, 'active'],
  ])('authenticated=%s, last job %j → %s', (authenticated, lastJob, expected) => {
    expect(connectionStatus(authenticated, lastJob)).toBe(expected);
  });
});

describe('chunking', () => {
  test('short text is one chunk; long prose splits under the limit at paragraph boundaries with overlap', () => {
    expect(chunkText('  hello world  ', undefined)).toEqual(['hello world']);
    expect(chunkText('   ', undefined)).toEqual([]);
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}. ` + 'word '.repeat(40)).join('\n\n');
    const chunks = chunkText(paragraphs, undefined, { maxChars: 600, overlapChars: 60 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(600 + 60 + 2);
    for (let i = 0; i < 12; i++) expect(chunks.some((chunk) => chunk.includes(`Paragraph ${i}.`))).toBe(true);
  });

  test('a prose chunk starting inside a section begins with its heading path (Markdown, AsciiDoc and underlined titles; not in code fences)', () => {
    const text = [
      '# Guide', 'Intro.', '', '## Install', '', 'para '.repeat(50), '', '```sh', '# a shell comment', '```', '',
      '### From source', '', 'build '.repeat(60), '', 'Usage', '-----', '', 'use '.repeat(60), '', '== Appendix', '', 'more '.repeat(60),
    ].join('\n');
    const chunks = chunkText(text, undefined, { maxChars: 300, overlapChars: 0 });
    expect(chunks[0]!.startsWith('# Guide')).toBe(true);
    expect(chunks.find((c) => c.includes('build build'))!.split('\n')[0]).toBe('Guide › Install › From source');
    expect(chunks.find((c) => c.includes('use use'))!.split('\n')[0]).toBe('Guide › Usage');
    expect(chunks.find((c) => c.includes('more more'))!.split('\n')[0]).toBe('Guide › Appendix');
    expect(chunks.some((c) => c.startsWith('Guide › Install › a shell comment'))).toBe(false);
    // Listing delimiters are not underlines; code keeps its text as it was.
    expect(chunkText(['intro', '', '------------', '$ git foo', '------------', '', 'x '.repeat(200)].join('\n'), undefined, { maxChars: 120, overlapChars: 0 }).every((c) => !c.startsWith('$ git foo ›'))).toBe(true);
    expect(chunkText('# not a heading in python\n' + 'x = 1\n'.repeat(400), 'python', { maxChars: 300, overlapChars: 0 })[1]!.startsWith('x = 1')).toBe(true);
  });

  test('a single huge word-free run is still cut under the limit', () => {
    const chunks = chunkText('x'.repeat(5000), undefined, { maxChars: 1000, overlapChars: 0 });
    expect(chunks.join('')).toBe('x'.repeat(5000));
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(1000);
    const overlapped = chunkText('x'.repeat(5000), undefined, { maxChars: 1000, overlapChars: 100 });
    expect(overlapped).toHaveLength(5);
    for (const chunk of overlapped) expect(chunk.length).toBeLessThanOrEqual(1101);
  });

  test('code splits before top-level declarations, keeping whole functions together', () => {
    const functions = Array.from({ length: 20 }, (_, i) => `// helper ${i}\nexport function helper${i}(x: number): number {\n  return x + ${i};\n}`);
    const chunks = chunkText(functions.join('\n\n'), 'typescript', { maxChars: 300, overlapChars: 0 });
    expect(chunks.length).toBeGreaterThan(1);
    for (let i = 0; i < 20; i++) {
      const holder = chunks.find((chunk) => chunk.includes(`function helper${i}(`))!;
      expect(holder).toContain(`return x + ${i};`);
    }
  });
});

describe('stub source and content hashing', () => {
  const config = { entity_count: 100, seed: 1, size_mix: 'mixed', hierarchy_depth: 2, code_files: true, delay_ms: 0, fail_after: null, revision: 0 } as const;

  test('entities are deterministic, and revision changes exactly every tenth one', () => {
    expect(stubEntity(12, config)).toEqual(stubEntity(12, config));
    const changed = Array.from({ length: 100 }, (_, i) => i).filter((i) => contentHash(stubEntity(i, config)) !== contentHash(stubEntity(i, { ...config, revision: 1 })));
    expect(changed).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  test('breadcrumbs follow the hierarchy and code files carry a language', () => {
    expect(stubEntity(123, config).breadcrumbs.map((b) => b.entityId)).toEqual(['folder-1-1', 'folder-2-12']);
    expect(stubEntity(3, config).language).toBe('typescript');
    expect(stubEntity(4, config).language).toBeUndefined();
  });

  test('the hash covers file bytes', () => {
    const entity = stubEntity(5, config);
    const a = contentHash({ ...entity, file: { name: 'a', mimeType: 'text/plain', size: 1, bytes: Buffer.from('a') } });
    const b = contentHash({ ...entity, file: { name: 'a', mimeType: 'text/plain', size: 1, bytes: Buffer.from('b') } });
    expect(a).not.toBe(b);
  });

  test('hashes are those earlier versions stored (a change would re-sync every entity): dates in and out of 0-9999, a file, a language and access', () => {
    const base = { entityId: 'e', entityType: 'note', name: 'Näme "one"', breadcrumbs: [], text: 't', fields: {}, webUrl: 'u', createdAt: null, updatedAt: null };
    const entities = [
      {
        ...base,
        breadcrumbs: [{ entityId: 'f-1', name: 'Folder', entityType: 'folder' }],
        text: 'Some text\nwith lines — and 🐋',
        fields: { a: 1, b: [null, 'x'] },
        webUrl: 'https://example.test/e-1',
        createdAt: new Date('2024-02-29T23:59:58.123Z'),
        updatedAt: new Date('1969-12-31T23:59:59.999Z'),
      },
      {
        ...base,
        entityType: 'file',
        name: 'report.pdf',
        text: '',
        webUrl: 'https://example.test/report.pdf',
        updatedAt: new Date('0099-01-01T00:00:00.000Z'),
        language: 'python',
        access: { viewers: ['u1'], isPublic: false },
        file: { name: 'report.pdf', mimeType: 'application/pdf', size: 3, bytes: Buffer.from([1, 2, 3]) },
      },
      { ...base, name: 'far', createdAt: new Date(Date.UTC(12345, 0, 1)), updatedAt: new Date(Date.UTC(-50, 5, 1)) },
    ];
    // Computed by contentHash as of 0ab0777 (dates formatted by toISOString).
    expect(entities.map((entity) => contentHash(entity))).toEqual([
      '887c75789dfb57e10d6a0d3e0442c8d7027a402828d250ab1208f2c2886532b3',
      '08468479ebb117ce31cba0c95b63f651093e1b48882d550e02809f5f9bdc1e45',
      '7a9ff5f187e251bcb64f4c05a706d0b8dcc8be729485b319a2e63a720927632f',
    ]);
  });
});

test('cron: next run times in UTC, with seconds', () => {
  expect(nextRun('0 3 * * *', new Date('2026-01-01T12:00:00Z'))!.toISOString()).toBe('2026-01-02T03:00:00.000Z');
  expect(nextRun('*/10 * * * * *', new Date('2026-01-01T00:00:01Z'))!.toISOString()).toBe('2026-01-01T00:00:10.000Z');
  expect(() => nextRun('not a cron', new Date())).toThrow();
});
