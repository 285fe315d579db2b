import { expect, test } from '@jest/globals';
import { chunkIdOf, type ChunkRecord, type ScoredChunk } from '../vector-index.js';
import { seededVector } from './fixtures.js';
import { type ContractSuite, ids, sorted, where } from './suite.js';

const withoutVector = ({ vector: _vector, ...rest }: ChunkRecord): ScoredChunk['chunk'] => rest;

/** Writes: add, count and the deletes, collection by collection; what a chunk stores comes back whole. */
export function writesContract(suite: ContractSuite): void {
  const { collection, chunk, all } = suite;

  test('an unknown collection counts 0, searches empty and ignores deletes and optimize', async () => {
    const id = collection();
    expect(await suite.index.count(id)).toBe(0);
    expect(await suite.index.count(id, where({ field: 'entity_id', operator: 'equals', value: 'x' }))).toBe(0);
    for (const strategy of ['semantic', 'keyword', 'hybrid'] as const) {
      expect(await suite.index.search(id, { strategy, vector: seededVector(suite.dims, 1), text: 'anything', limit: 10, offset: 0 })).toEqual([]);
    }
    await suite.index.deleteEntities(id, 'conn-1', ['a']);
    await suite.index.deleteSourceConnection(id, 'conn-1');
    await suite.index.optimize(id);
    await suite.index.settled(id);
    await suite.index.deleteCollection(id);
    expect(await suite.index.count(id)).toBe(0);
  });

  test('add and count; an empty add is a no-op', async () => {
    const id = collection();
    await suite.index.add(id, []);
    expect(await suite.index.count(id)).toBe(0);
    await suite.index.add(id, [chunk(1), chunk(2), chunk(2, { chunkIndex: 1 })]);
    await suite.index.add(id, [chunk(3)]);
    expect(await suite.index.count(id)).toBe(4);
  });

  test('add refuses a chunk whose id is not <connection>:<entity>:<index> (rankings read only the id) and writes nothing of the call', async () => {
    const id = collection();
    await expect(suite.index.add(id, [chunk(1), chunk(2, { chunkId: 'free-form-id' })])).rejects.toThrow(/not of the form/);
    await expect(suite.index.add(id, [chunk(3, { chunkId: chunkIdOf('conn-1', 'entity-3', 7) })])).rejects.toThrow(/not of the form/);
    expect(await suite.index.count(id)).toBe(0);
  });

  test('deleteEntities removes every chunk of those entities of that connection only', async () => {
    const id = collection();
    await suite.index.add(id, [
      chunk(1, { entityId: 'a' }),
      chunk(2, { entityId: 'a', chunkIndex: 1 }),
      chunk(3, { entityId: 'b' }),
      chunk(4, { entityId: 'c' }),
      chunk(5, { entityId: 'a', sourceConnectionId: 'conn-2' }),
    ]);
    await suite.index.deleteEntities(id, 'conn-1', ['a', 'b', 'not-there']);
    expect(sorted(ids(await all(id)))).toEqual(['conn-1:c:0', 'conn-2:a:0']);
    await suite.index.deleteEntities(id, 'conn-1', []);
    expect(await suite.index.count(id)).toBe(2);
  });

  test('deleteSourceConnection removes that connection only', async () => {
    const id = collection();
    await suite.index.add(id, [chunk(1), chunk(2), chunk(3, { sourceConnectionId: 'conn-2' })]);
    await suite.index.deleteSourceConnection(id, 'conn-1');
    expect(ids(await all(id))).toEqual(['conn-2:entity-3:0']);
    await suite.index.deleteSourceConnection(id, 'conn-none');
    expect(await suite.index.count(id)).toBe(1);
  });

  test('deleteCollection drops everything; the collection can be written again', async () => {
    const id = collection();
    await suite.index.add(id, [chunk(1), chunk(2)]);
    await suite.index.deleteCollection(id);
    expect(await suite.index.count(id)).toBe(0);
    expect(await all(id)).toEqual([]);
    await suite.index.deleteCollection(id);
    await suite.index.add(id, [chunk(3)]);
    expect(ids(await all(id))).toEqual(['conn-1:entity-3:0']);
  });

  test('collections are isolated', async () => {
    const first = collection();
    const second = collection();
    await suite.index.add(first, [chunk(1, { text: 'marmalade sandwich' }), chunk(2)]);
    await suite.index.add(second, [chunk(1, { text: 'marmalade sandwich' })]);
    expect(await suite.index.count(first)).toBe(2);
    expect(await suite.index.count(second)).toBe(1);
    await suite.index.deleteSourceConnection(second, 'conn-1');
    expect(await suite.index.count(first)).toBe(2);
    await suite.index.deleteCollection(first);
    expect(await suite.index.count(second)).toBe(0);
    await suite.index.add(second, [chunk(7)]);
    expect(await suite.index.count(first)).toBe(0);
    expect(ids(await suite.index.search(second, { strategy: 'keyword', text: 'marmalade', limit: 10, offset: 0 }))).toEqual([]);
  });

  test('ids with quotes, backslashes and SQL/LIKE characters are stored, filtered and deleted exactly', async () => {
    const id = collection();
    const nasty = `it's "quoted" \\ 50%_off; DROP TABLE x; --`;
    const connection = `conn'"\\%`;
    await suite.index.add(id, [
      chunk(1, { entityId: nasty, sourceConnectionId: connection, breadcrumbs: [{ entity_id: `f'1"\\`, name: `O'Brien's "files"`, entity_type: 'folder' }] }),
      chunk(2, { entityId: `it's`, sourceConnectionId: connection }),
      chunk(3, { entityId: nasty }),
    ]);
    expect(await suite.index.count(id, where({ field: 'entity_id', operator: 'equals', value: nasty }))).toBe(2);
    expect(await suite.index.count(id, where({ field: 'breadcrumbs.entity_id', operator: 'equals', value: `f'1"\\` }))).toBe(1);
    expect(await suite.index.count(id, where({ field: 'breadcrumbs.name', operator: 'in', value: [`O'Brien's "files"`] }))).toBe(1);
    expect(await suite.index.count(id, where({ field: 'entity_id', operator: 'contains', value: `"quoted" \\ 50%_` }))).toBe(2);
    expect(await suite.index.count(id, where({ field: 'entity_id', operator: 'contains', value: `50%x` }))).toBe(0);
    await suite.index.deleteEntities(id, connection, [nasty]);
    expect(sorted(ids(await all(id)))).toEqual(sorted([`${connection}:it's:0`, `conn-1:${nasty}:0`]));
    await suite.index.deleteSourceConnection(id, connection);
    expect(ids(await all(id))).toEqual([`conn-1:${nasty}:0`]);
  });

  test('every ChunkRecord field round-trips, through searches and listings, colons in ids too', async () => {
    const id = collection();
    const full = chunk(1, {
      entityId: 'entity-rt',
      chunkIndex: 7,
      name: 'Ünïcödé name — 日本語 🚀',
      text: 'Line one\nLine two with "quotes" and \\ backslash and émoji 🎉',
      entityType: 'NotionPageEntity',
      sourceName: 'notion',
      breadcrumbs: [
        { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
        { entity_id: 'db-9', name: 'Roadmap DB', entity_type: 'database' },
      ],
      createdAt: new Date('2023-04-05T06:07:08.912Z'),
      updatedAt: new Date('2025-12-31T23:59:59.999Z'),
      webUrl: 'https://notion.so/page?x=1&y=2',
      url: 'https://files.example.test/download/1',
      syncId: 'sync-rt',
      syncJobId: 'job-rt',
      rawSourceFields: { n: 1.5, s: 'x', nested: { list: [1, 'two', null, { deep: true }] }, empty: {}, nothing: null },
      access: { viewers: ['user:1', 'group:2'], isPublic: false },
    });
    const sparse = chunk(2, { entityId: 'entity-sparse', createdAt: null, updatedAt: null, url: null, breadcrumbs: [], rawSourceFields: {}, access: { viewers: null, isPublic: null }, text: '' });
    // Chunk ids hold the connection and entity ids and the chunk index: none of them may be read back cut at a colon.
    const colons = chunk(3, { sourceConnectionId: 'conn:a:b', entityId: 'https://example.test:8080/p:1', chunkIndex: 12 });
    await suite.index.add(id, [full, sparse, colons]);
    const results = await all(id);
    const byId = new Map(results.map((result) => [result.chunk.chunkId, result.chunk]));
    expect(byId.get(full.chunkId)).toEqual(withoutVector(full));
    expect(byId.get(sparse.chunkId)).toEqual(withoutVector(sparse));
    expect(byId.get(colons.chunkId)).toEqual(withoutVector(colons));
    const found = new Map((await suite.index.search(id, { strategy: 'semantic', vector: colons.vector, limit: 10, offset: 0 })).map((hit) => [hit.chunk.chunkId, hit.chunk]));
    for (const record of [full, sparse, colons]) expect(found.get(record.chunkId)).toEqual(withoutVector(record));
    expect(byId.get(full.chunkId)!.createdAt).toBeInstanceOf(Date);
    expect(byId.get(sparse.chunkId)!.createdAt).toBeNull();
    expect(results.every((result) => !('vector' in result.chunk))).toBe(true);
  });
}
