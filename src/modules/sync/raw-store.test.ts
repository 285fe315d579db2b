import { afterEach, beforeEach, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SourceEntity } from '../../connectors/connector.js';
import { FileBlobStore } from '../../platform/blobs/blob-store.js';
import { hashedContent } from './content-hash.js';
import { RawStore } from './raw-store.js';

let root: string;
let blobs: FileBlobStore;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'raw-store-'));
  blobs = new FileBlobStore(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const entity = (id: string, text: string, file?: Buffer): SourceEntity => ({
  entityId: id,
  entityType: 'note',
  name: `Note ${id}`,
  text,
  breadcrumbs: [{ entityId: 'folder', name: 'Folder', entityType: 'folder' }],
  fields: { text },
  webUrl: `https://notes.example/${id}`,
  createdAt: new Date('2024-01-02T03:04:05.000Z'),
  updatedAt: null,
  ...(file ? { file: { name: `${id}.bin`, mimeType: 'application/octet-stream', size: file.length, bytes: file } } : {}),
});

/** Entities as a sync hands them to the store: with the JSON their content hash read. */
const hashed = (entities: SourceEntity[]) => entities.map((e) => ({ entity: e, content: hashedContent(e).content }));

async function replayed(store: RawStore): Promise<Map<string, SourceEntity>> {
  const found = new Map<string, SourceEntity>();
  for await (const item of store.replay().items) {
    if (!('entityId' in item)) throw new Error('a replay yields entities only');
    expect(found.has(item.entityId)).toBe(false);
    found.set(item.entityId, item);
  }
  return found;
}

const keys = async (prefix: string) => {
  const found: string[] = [];
  for await (const key of blobs.list(prefix)) found.push(key);
  return found.sort();
};

test('a replay yields the newest record of each entity written, none deleted, with its file', async () => {
  const writer = new RawStore(blobs, 'c1', 's1');
  await writer.write(hashed([entity('a', 'first a'), entity('b', 'first b', Buffer.from([1, 2, 3])), entity('c', 'only c')]), []);
  await writer.write(hashed([entity('a', 'second a')]), ['c']);
  await writer.write(hashed([entity('c', 'c again')]), ['b']);
  // One blob per batch (and one per file), not one per entity.
  expect(await keys('raw/c1/s1/packs')).toHaveLength(3);

  // Another store (as a later run) reads what this one wrote.
  const found = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect([...found.keys()].sort()).toEqual(['a', 'c']);
  expect(found.get('a')!.text).toBe('second a');
  expect(found.get('c')!.text).toBe('c again');
  expect(found.get('a')!.createdAt).toEqual(new Date('2024-01-02T03:04:05.000Z'));
  expect(found.get('a')!.breadcrumbs).toEqual([{ entityId: 'folder', name: 'Folder', entityType: 'folder' }]);
  // A deleted entity's file goes with it.
  expect(await keys('raw/c1/s1/files')).toEqual([]);
});

test('an entity replays as written, whether its line is the JSON its hash read (a sync) or the entity (a compaction, earlier versions)', async () => {
  const rich: SourceEntity = {
    ...entity('rich', 'text with "quotes", \\ and ünïcode', Buffer.from([9, 8])),
    language: 'python',
    access: { viewers: ['u1', 'u2'], isPublic: false },
    fields: { nested: { list: [1, null, 'two'] }, when: '2024-05-06' },
    updatedAt: new Date('2025-01-01T00:00:00.001Z'),
  };
  const plain = entity('plain', 'no language, no access');
  const writer = new RawStore(blobs, 'c1', 's1');
  await writer.write(hashed([rich, plain]), []);
  const pack = (await blobs.get((await keys('raw/c1/s1/packs'))[0]!))!.toString('utf8');
  expect(pack.split('\n').map((line) => Object.keys(JSON.parse(line)))).toEqual([['entityId', 'content', 'file'], ['entityId', 'content']]);
  const asWritten = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect(asWritten.get('rich')).toEqual(rich);
  expect(asWritten.get('plain')).toEqual(plain);

  // A record of the earlier layout (a file per entity) makes the next compaction run, whatever the packs hold.
  await blobs.put(`raw/c1/s1/entities/${createHash('sha256').update('legacy').digest('hex')}.json`, JSON.stringify({ ...entity('legacy', 'old'), createdAt: null, file: null }));
  await writer.compactIfWasteful(3);
  const compacted = (await blobs.get((await keys('raw/c1/s1/packs'))[0]!))!.toString('utf8');
  expect(compacted.split('\n').map((line) => Object.keys(JSON.parse(line)))).toEqual([['entity'], ['entity'], ['entity']]);
  const afterCompaction = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect(afterCompaction.get('rich')).toEqual(rich);
  expect(afterCompaction.get('plain')).toEqual(plain);
});

test("files' bytes come back with their entity", async () => {
  const writer = new RawStore(blobs, 'c1', 's1');
  await writer.write(hashed([entity('f', 'a file', Buffer.from([0, 255, 7]))]), []);
  const found = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect(found.get('f')!.file).toEqual({ name: 'f.bin', mimeType: 'application/octet-stream', size: 3, bytes: Buffer.from([0, 255, 7]) });
});

test('deletions in a store that holds nothing write nothing', async () => {
  await new RawStore(blobs, 'c1', 's1').write([], ['x', 'y']);
  expect(await keys('raw/c1/s1')).toEqual([]);
});

test('the earlier layout (a file per entity) is read under the packs, and the first compaction moves it into them', async () => {
  const legacy = (record: SourceEntity) => {
    const { file, createdAt, updatedAt, ...rest } = record;
    const key = `raw/c1/s1/entities/${createHash('sha256').update(record.entityId).digest('hex')}.json`;
    return blobs.put(key, JSON.stringify({ ...rest, createdAt: createdAt?.toISOString() ?? null, updatedAt: null, file: null }));
  };
  await legacy(entity('old-kept', 'kept as it was'));
  await legacy(entity('old-updated', 'before'));
  await legacy(entity('old-deleted', 'gone soon'));
  const writer = new RawStore(blobs, 'c1', 's1');
  await writer.write(hashed([entity('old-updated', 'after'), entity('new', 'new one')]), ['old-deleted']);

  const before = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect([...before.keys()].sort()).toEqual(['new', 'old-kept', 'old-updated']);
  expect(before.get('old-updated')!.text).toBe('after');
  expect(before.get('old-kept')!.createdAt).toEqual(new Date('2024-01-02T03:04:05.000Z'));

  await writer.compactIfWasteful(3);
  expect(await keys('raw/c1/s1/entities')).toEqual([]);
  expect(await keys('raw/c1/s1/packs')).toHaveLength(1);
  const after = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect(new Map([...after].map(([id, e]) => [id, e.text]))).toEqual(new Map([...before].map(([id, e]) => [id, e.text])));
});

test('compaction rewrites the live records once superseded lines outnumber them, and not before', async () => {
  const writer = new RawStore(blobs, 'c1', 's1');
  const version = (v: number) => Array.from({ length: 1000 }, (_, i) => entity(`e${i}`, `version ${v}`));
  for (let v = 1; v <= 7; v++) await writer.write(hashed(version(v)), []);
  await writer.compactIfWasteful(1000);
  expect(await keys('raw/c1/s1/packs')).toHaveLength(7); // 7,000 lines for 1,000 live: not yet

  await writer.write(hashed(version(8)), ['e999']);
  await writer.compactIfWasteful(999);
  const packs = await keys('raw/c1/s1/packs');
  expect(packs).toHaveLength(1);
  expect(packs[0]).toMatch(/-999\.jsonl$/);
  const found = await replayed(new RawStore(blobs, 'c1', 's1'));
  expect(found.size).toBe(999);
  expect(new Set([...found.values()].map((e) => e.text))).toEqual(new Set(['version 8']));

  // Writing goes on after the compacted pack.
  await writer.write(hashed([entity('e0', 'version 9')]), []);
  expect((await replayed(new RawStore(blobs, 'c1', 's1'))).get('e0')!.text).toBe('version 9');
});

test('a write whose file fails returns only once its other files have ended, with the first failure', async () => {
  let landed = 0;
  const failing = Object.create(blobs) as FileBlobStore;
  failing.put = async (key, bytes) => {
    if (String(bytes) === 'bad') throw new Error('disk full');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await blobs.put(key, bytes);
    landed++;
  };
  const store = new RawStore(failing, 'collection', 'connection');
  await expect(store.write(hashed([entity('first', 'x', Buffer.from('bad')), entity('second', 'y', Buffer.from('2')), entity('third', 'z', Buffer.from('3'))]), [])).rejects.toThrow('disk full');
  expect(landed).toBe(2);
});
