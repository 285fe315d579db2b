/**
 * The behaviour every VectorIndex adapter must show (LanceDB now, Weaviate later). An adapter's test
 * file calls `vectorIndexContract('Name', open)`; `open` gives a fresh, empty index.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../../shared/errors.js';
import { chunkIdOf, type ChunkRecord, type FilterCondition, type FilterGroup, type ScoredChunk, type VectorIndex, type VectorQuery } from './vector-index.js';

export interface OpenedVectorIndex {
  index: VectorIndex;
  dimensions: number;
  cleanup(): Promise<void>;
}

/** Deterministic pseudo-random unit vectors: distinct directions for distinct seeds. */
export function seededVector(dimensions: number, seed: number): Float32Array {
  let state = (seed * 0x9e3779b1 + 0x7f4a7c15) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  const vector = Float32Array.from({ length: dimensions }, next);
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
}

/** A complete chunk record; `chunkId` is `chunkIdOf(connection, entity, index)` unless overridden. */
export function makeChunk(dimensions: number, seed: number, overrides: Partial<ChunkRecord> = {}): ChunkRecord {
  const sourceConnectionId = overrides.sourceConnectionId ?? 'conn-1';
  const entityId = overrides.entityId ?? `entity-${seed}`;
  const chunkIndex = overrides.chunkIndex ?? 0;
  return {
    chunkId: chunkIdOf(sourceConnectionId, entityId, chunkIndex),
    sourceConnectionId,
    entityId,
    chunkIndex,
    name: `Document ${seed}`,
    text: `ordinary filler text number ${seed}`,
    vector: seededVector(dimensions, seed),
    entityType: 'Page',
    sourceName: 'stub',
    breadcrumbs: [],
    createdAt: new Date('2024-01-01T00:00:00.000Z'),
    updatedAt: null,
    webUrl: `https://example.test/${seed}`,
    url: null,
    syncId: 'sync-1',
    syncJobId: 'job-1',
    rawSourceFields: {},
    access: { viewers: null, isPublic: null },
    ...overrides,
  };
}

const withoutVector = ({ vector: _vector, ...rest }: ChunkRecord): ScoredChunk['chunk'] => rest;
const ids = (results: ScoredChunk[]) => results.map((result) => result.chunk.chunkId);
const sorted = (values: string[]) => [...values].sort();
const where = (...conditions: FilterCondition[]): FilterGroup[] => [{ conditions }];

export function vectorIndexContract(name: string, open: () => Promise<OpenedVectorIndex>): void {
  describe(`VectorIndex contract: ${name}`, () => {
    let opened: OpenedVectorIndex;
    let index: VectorIndex;
    let dims: number;
    const collections: string[] = [];
    /** A fresh collection id (a UUID, as collections have). */
    const collection = () => {
      const id = randomUUID();
      collections.push(id);
      return id;
    };
    const chunk = (seed: number, overrides: Partial<ChunkRecord> = {}) => makeChunk(dims, seed, overrides);
    /** Every chunk a filter selects (as scored chunks, unranked): what filters are checked on. */
    const all = async (collectionId: string, { filter = [] }: { filter?: FilterGroup[] } = {}): Promise<ScoredChunk[]> =>
      (await index.list(collectionId, filter, 1000)).map((chunk) => ({ chunk, score: 0 }));

    beforeAll(async () => {
      opened = await open();
      index = opened.index;
      dims = opened.dimensions;
    });
    afterAll(async () => {
      for (const id of collections) await index.deleteCollection(id).catch(() => undefined);
      await index.close();
      await opened.cleanup();
    });

    describe('writes', () => {
      test('an unknown collection counts 0, searches empty and ignores deletes and optimize', async () => {
        const id = collection();
        expect(await index.count(id)).toBe(0);
        expect(await index.count(id, where({ field: 'entity_id', operator: 'equals', value: 'x' }))).toBe(0);
        for (const strategy of ['semantic', 'keyword', 'hybrid'] as const) {
          expect(await index.search(id, { strategy, vector: seededVector(dims, 1), text: 'anything', limit: 10, offset: 0 })).toEqual([]);
        }
        await index.deleteEntities(id, 'conn-1', ['a']);
        await index.deleteSourceConnection(id, 'conn-1');
        await index.optimize(id);
        await index.settled(id);
        await index.deleteCollection(id);
        expect(await index.count(id)).toBe(0);
      });

      test('add and count; an empty add is a no-op', async () => {
        const id = collection();
        await index.add(id, []);
        expect(await index.count(id)).toBe(0);
        await index.add(id, [chunk(1), chunk(2), chunk(2, { chunkIndex: 1 })]);
        await index.add(id, [chunk(3)]);
        expect(await index.count(id)).toBe(4);
      });

      test('add refuses a chunk whose id is not <connection>:<entity>:<index> (rankings read only the id) and writes nothing of the call', async () => {
        const id = collection();
        await expect(index.add(id, [chunk(1), chunk(2, { chunkId: 'free-form-id' })])).rejects.toThrow(/not of the form/);
        await expect(index.add(id, [chunk(3, { chunkId: chunkIdOf('conn-1', 'entity-3', 7) })])).rejects.toThrow(/not of the form/);
        expect(await index.count(id)).toBe(0);
      });

      test('deleteEntities removes every chunk of those entities of that connection only', async () => {
        const id = collection();
        await index.add(id, [
          chunk(1, { entityId: 'a' }),
          chunk(2, { entityId: 'a', chunkIndex: 1 }),
          chunk(3, { entityId: 'b' }),
          chunk(4, { entityId: 'c' }),
          chunk(5, { entityId: 'a', sourceConnectionId: 'conn-2' }),
        ]);
        await index.deleteEntities(id, 'conn-1', ['a', 'b', 'not-there']);
        expect(sorted(ids(await all(id)))).toEqual(['conn-1:c:0', 'conn-2:a:0']);
        await index.deleteEntities(id, 'conn-1', []);
        expect(await index.count(id)).toBe(2);
      });

      test('deleteSourceConnection removes that connection only', async () => {
        const id = collection();
        await index.add(id, [chunk(1), chunk(2), chunk(3, { sourceConnectionId: 'conn-2' })]);
        await index.deleteSourceConnection(id, 'conn-1');
        expect(ids(await all(id))).toEqual(['conn-2:entity-3:0']);
        await index.deleteSourceConnection(id, 'conn-none');
        expect(await index.count(id)).toBe(1);
      });

      test('deleteCollection drops everything; the collection can be written again', async () => {
        const id = collection();
        await index.add(id, [chunk(1), chunk(2)]);
        await index.deleteCollection(id);
        expect(await index.count(id)).toBe(0);
        expect(await all(id)).toEqual([]);
        await index.deleteCollection(id);
        await index.add(id, [chunk(3)]);
        expect(ids(await all(id))).toEqual(['conn-1:entity-3:0']);
      });

      test('collections are isolated', async () => {
        const first = collection();
        const second = collection();
        await index.add(first, [chunk(1, { text: 'marmalade sandwich' }), chunk(2)]);
        await index.add(second, [chunk(1, { text: 'marmalade sandwich' })]);
        expect(await index.count(first)).toBe(2);
        expect(await index.count(second)).toBe(1);
        await index.deleteSourceConnection(second, 'conn-1');
        expect(await index.count(first)).toBe(2);
        await index.deleteCollection(first);
        expect(await index.count(second)).toBe(0);
        await index.add(second, [chunk(7)]);
        expect(await index.count(first)).toBe(0);
        expect(ids(await index.search(second, { strategy: 'keyword', text: 'marmalade', limit: 10, offset: 0 }))).toEqual([]);
      });

      test('ids with quotes, backslashes and SQL/LIKE characters are stored, filtered and deleted exactly', async () => {
        const id = collection();
        const nasty = `it's "quoted" \\ 50%_off; DROP TABLE x; --`;
        const connection = `conn'"\\%`;
        await index.add(id, [
          chunk(1, { entityId: nasty, sourceConnectionId: connection, breadcrumbs: [{ entity_id: `f'1"\\`, name: `O'Brien's "files"`, entity_type: 'folder' }] }),
          chunk(2, { entityId: `it's`, sourceConnectionId: connection }),
          chunk(3, { entityId: nasty }),
        ]);
        expect(await index.count(id, where({ field: 'entity_id', operator: 'equals', value: nasty }))).toBe(2);
        expect(await index.count(id, where({ field: 'breadcrumbs.entity_id', operator: 'equals', value: `f'1"\\` }))).toBe(1);
        expect(await index.count(id, where({ field: 'breadcrumbs.name', operator: 'in', value: [`O'Brien's "files"`] }))).toBe(1);
        expect(await index.count(id, where({ field: 'entity_id', operator: 'contains', value: `"quoted" \\ 50%_` }))).toBe(2);
        expect(await index.count(id, where({ field: 'entity_id', operator: 'contains', value: `50%x` }))).toBe(0);
        await index.deleteEntities(id, connection, [nasty]);
        expect(sorted(ids(await all(id)))).toEqual(sorted([`${connection}:it's:0`, `conn-1:${nasty}:0`]));
        await index.deleteSourceConnection(id, connection);
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
        await index.add(id, [full, sparse, colons]);
        const results = await all(id);
        const byId = new Map(results.map((result) => [result.chunk.chunkId, result.chunk]));
        expect(byId.get(full.chunkId)).toEqual(withoutVector(full));
        expect(byId.get(sparse.chunkId)).toEqual(withoutVector(sparse));
        expect(byId.get(colons.chunkId)).toEqual(withoutVector(colons));
        const found = new Map((await index.search(id, { strategy: 'semantic', vector: colons.vector, limit: 10, offset: 0 })).map((hit) => [hit.chunk.chunkId, hit.chunk]));
        for (const record of [full, sparse, colons]) expect(found.get(record.chunkId)).toEqual(withoutVector(record));
        expect(byId.get(full.chunkId)!.createdAt).toBeInstanceOf(Date);
        expect(byId.get(sparse.chunkId)!.createdAt).toBeNull();
        expect(results.every((result) => !('vector' in result.chunk))).toBe(true);
      });
    });

    describe('search', () => {
      let id: string;
      const texts: Record<number, string> = {
        1: 'the quarterly budget review for finance',
        2: 'team offsite planning and travel logistics',
        3: 'a platypus appears in the wildlife report',
        4: 'release notes for the mobile application',
        5: 'onboarding checklist for new engineers',
        6: 'security incident postmortem and follow ups',
      };
      beforeAll(async () => {
        id = collection();
        await index.add(id, Object.entries(texts).map(([seed, text]) => chunk(Number(seed), { text })));
      });

      test('list: the chunks a filter selects, ordered by entity then chunk index, at most limit, without vectors', async () => {
        const listed = await index.list(id, where({ field: 'entity_id', operator: 'in', value: ['entity-5', 'entity-2'] }), 10);
        expect(listed.map((c) => c.chunkId)).toEqual(['conn-1:entity-2:0', 'conn-1:entity-5:0']);
        expect(listed[0]!.text).toBe(texts[2]);
        expect(listed[0]).not.toHaveProperty('vector');
        expect(await index.list(id, where({ field: 'entity_id', operator: 'equals', value: 'nope' }), 10)).toEqual([]);
        expect(await index.list(id, [], 2)).toHaveLength(2);
        expect(await index.list(randomUUID(), [], 10)).toEqual([]);
      });

      test('semantic: the chunk whose vector equals the query ranks first, scores descend', async () => {
        for (const seed of [1, 3, 6]) {
          const results = await index.search(id, { strategy: 'semantic', vector: seededVector(dims, seed), limit: 3, offset: 0 });
          expect(results).toHaveLength(3);
          expect(results[0]!.chunk.entityId).toBe(`entity-${seed}`);
          expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
          expect(results[1]!.score).toBeGreaterThanOrEqual(results[2]!.score);
        }
      });

      test('keyword: a rare word finds its chunk; rows added after earlier queries are found too', async () => {
        const platypus = await index.search(id, { strategy: 'keyword', text: 'platypus', limit: 10, offset: 0 });
        expect(ids(platypus)).toEqual(['conn-1:entity-3:0']);
        expect(platypus[0]!.score).toBeGreaterThan(0);
        expect(await index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 })).toEqual([]);
        await index.add(id, [chunk(7, { text: 'a xylophone concert downtown' })]);
        expect(ids(await index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 }))).toEqual(['conn-1:entity-7:0']);
        await index.optimize(id);
        expect(ids(await index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 }))).toEqual(['conn-1:entity-7:0']);
        await index.deleteEntities(id, 'conn-1', ['entity-7']);
        expect(await index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 })).toEqual([]);
      });

      test('keyword: a better match scores higher', async () => {
        const other = collection();
        await index.add(other, [
          chunk(1, { text: 'kiwi kiwi kiwi orchard' }),
          chunk(2, { text: 'a long text that mentions kiwi once among many other unrelated words here' }),
          chunk(3, { text: 'no fruit at all' }),
        ]);
        const results = await index.search(other, { strategy: 'keyword', text: 'kiwi', limit: 10, offset: 0 });
        expect(ids(results)).toEqual(['conn-1:entity-1:0', 'conn-1:entity-2:0']);
        expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
      });

      test('hybrid: returns both the semantic and the keyword match ahead of the rest', async () => {
        // entity-2's vector is the query; entity-3 only matches the word.
        const results = await index.search(id, { strategy: 'hybrid', vector: seededVector(dims, 2), text: 'platypus', limit: 10, offset: 0 });
        expect(sorted(ids(results.slice(0, 2)))).toEqual(['conn-1:entity-2:0', 'conn-1:entity-3:0']);
        // A chunk matching both ways wins.
        const both = await index.search(id, { strategy: 'hybrid', vector: seededVector(dims, 3), text: 'platypus', limit: 2, offset: 0 });
        expect(both[0]!.chunk.entityId).toBe('entity-3');
        expect(both[0]!.score).toBeGreaterThan(both[1]!.score);
      });

      test('hybrid: keywordWeight moves the balance between the keyword and the vector ranking', async () => {
        // S has the query's vector and no keyword; K has the keyword and the opposite vector (ranked last of 20).
        const weighted = collection();
        const target = seededVector(dims, 200);
        await index.add(weighted, [
          ...Array.from({ length: 18 }, (_, i) => chunk(101 + i)),
          chunk(1, { entityId: 'S', vector: target }),
          chunk(2, { entityId: 'K', vector: target.map((x) => -x), text: 'a narwhal in the fjord' }),
        ]);
        const query = { strategy: 'hybrid' as const, vector: target, text: 'narwhal', limit: 20, offset: 0 };
        const order = async (keywordWeight: number) => (await index.search(weighted, { ...query, keywordWeight })).map((r) => r.chunk.entityId);
        const keywordHeavy = await order(0.9);
        const vectorHeavy = await order(0.1);
        expect(keywordHeavy[0]).toBe('K');
        expect(vectorHeavy[0]).toBe('S');
        expect(keywordHeavy.indexOf('S')).toBeGreaterThan(vectorHeavy.indexOf('S'));
        expect(vectorHeavy.indexOf('K')).toBeGreaterThan(keywordHeavy.indexOf('K'));
        // Without a weight both rankings count equally: both lead the rest.
        expect(sorted((await index.search(weighted, query)).map((r) => r.chunk.entityId).slice(0, 2))).toEqual(['K', 'S']);
        // The extremes are pure keyword and pure semantic ranking.
        expect(ids(await index.search(weighted, { ...query, keywordWeight: 1 }))).toEqual(ids(await index.search(weighted, { ...query, strategy: 'keyword' })));
        expect(ids(await index.search(weighted, { ...query, keywordWeight: 0 }))).toEqual(ids(await index.search(weighted, { ...query, strategy: 'semantic' })));
      });

      test('filters apply to every strategy', async () => {
        const filter = where({ field: 'entity_id', operator: 'not_equals', value: 'entity-3' });
        expect(await index.search(id, { strategy: 'keyword', text: 'platypus', filter, limit: 10, offset: 0 })).toEqual([]);
        const semantic = await index.search(id, { strategy: 'semantic', vector: seededVector(dims, 3), filter, limit: 10, offset: 0 });
        expect(ids(semantic)).not.toContain('conn-1:entity-3:0');
        expect(semantic.length).toBe(5);
        const hybrid = await index.search(id, { strategy: 'hybrid', vector: seededVector(dims, 3), text: 'platypus', filter, limit: 10, offset: 0 });
        expect(ids(hybrid)).not.toContain('conn-1:entity-3:0');
        // A filter matching few rows still fills the page with them (pre-filtering, not post-filtering a top-k).
        const few = where({ field: 'entity_id', operator: 'in', value: ['entity-5', 'entity-6'] });
        expect(sorted(ids(await index.search(id, { strategy: 'semantic', vector: seededVector(dims, 1), filter: few, limit: 2, offset: 0 })))).toEqual([
          'conn-1:entity-5:0',
          'conn-1:entity-6:0',
        ]);
      });

      test('every strategy answers with documents: each entity once, shown by its best chunk, paged over documents', async () => {
        const documents = collection();
        // Entity "long" has five chunks about gannets, "short" one; "other" matches nothing.
        await index.add(documents, [
          ...[0, 1, 2, 3, 4].map((i) => chunk(300 + i, { entityId: 'long', chunkIndex: i, text: i === 2 ? 'gannet gannet colony on the cliff gannet' : `gannet seen ${i} times ${'filler '.repeat(i + 3)}` })),
          chunk(310, { entityId: 'short', text: 'a gannet' }),
          chunk(311, { entityId: 'other', text: 'nothing of the kind' }),
          // Another connection's entity of the same id is another document.
          chunk(312, { sourceConnectionId: 'conn-2', entityId: 'long', text: 'gannet' }),
        ]);
        const queries: Omit<VectorQuery, 'limit' | 'offset'>[] = [
          { strategy: 'semantic', vector: seededVector(dims, 302) },
          { strategy: 'keyword', text: 'gannet' },
          { strategy: 'hybrid', vector: seededVector(dims, 302), text: 'gannet' },
        ];
        for (const query of queries) {
          const whole = await index.search(documents, { ...query, limit: 10, offset: 0 });
          const keys = whole.map((r) => `${r.chunk.sourceConnectionId}:${r.chunk.entityId}`);
          expect(new Set(keys).size).toBe(keys.length);
          expect(keys).toEqual(expect.arrayContaining(['conn-1:long', 'conn-1:short', 'conn-2:long']));
          // The long document is shown by its best chunk (the one whose vector is the query, or the densest match).
          expect(whole.find((r) => r.chunk.chunkId.startsWith('conn-1:long:'))!.chunk.chunkIndex).toBe(2);
          expect(whole.map((r) => r.score)).toEqual([...whole.map((r) => r.score)].sort((a, b) => b - a));
          const pages: string[] = [];
          for (let offset = 0; offset < whole.length; offset += 1) pages.push(...ids(await index.search(documents, { ...query, limit: 1, offset })));
          expect(pages).toEqual(ids(whole));
        }
      });

      test('a page of documents is full when a few long documents hold every top chunk: the rankings read deeper', async () => {
        const crowded = collection();
        const nearest = seededVector(dims, 500);
        await index.add(crowded, [
          // Three documents of 100 chunks each, every chunk the best match (the query's own vector, the word thrice).
          ...Array.from({ length: 300 }, (_, i) => chunk(1000 + i, { entityId: `long-${i % 3}`, chunkIndex: Math.floor(i / 3), text: 'tern tern tern colony', vector: nearest })),
          // Twenty documents of one chunk each, matching less well.
          ...Array.from({ length: 20 }, (_, i) => chunk(600 + i, { entityId: `short-${i}`, text: `a tern ${'filler '.repeat(3 + (i % 5))}` })),
        ]);
        const queries: Omit<VectorQuery, 'limit' | 'offset'>[] = [
          { strategy: 'semantic', vector: nearest },
          { strategy: 'keyword', text: 'tern' },
          { strategy: 'hybrid', vector: nearest, text: 'tern' },
        ];
        for (const query of queries) {
          const pages = await Promise.all([0, 10, 20].map((offset) => index.search(crowded, { ...query, limit: 10, offset })));
          expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
          const entities = pages.flat().map((hit) => hit.chunk.entityId);
          expect(new Set(entities).size).toBe(23);
          expect(entities.slice(0, 3).sort()).toEqual(['long-0', 'long-1', 'long-2']);
        }
      });

      test('containers (folders, tables…) stay findable by name but rank after a document that matches as well', async () => {
        const tree = collection();
        await index.add(tree, [
          chunk(400, { entityId: 'docs/ospreys', name: 'ospreys', text: 'ospreys', entityType: 'folder' }),
          chunk(401, { entityId: 'docs/ospreys/nesting.md', name: 'nesting.md', text: 'ospreys', entityType: 'file' }),
          chunk(402, { entityId: 'db/herons', name: 'herons', text: 'herons', entityType: 'postgresql_table' }),
        ]);
        // The folder's name and text both say "ospreys" (it matches twice as well on words); the file says it once.
        for (const strategy of ['keyword', 'hybrid'] as const) {
          const ospreys = await index.search(tree, { strategy, text: 'ospreys', vector: seededVector(dims, 401), limit: 10, offset: 0 });
          expect(ospreys.map((r) => r.chunk.entityId).slice(0, 2)).toEqual(['docs/ospreys/nesting.md', 'docs/ospreys']);
          const herons = await index.search(tree, { strategy, text: 'herons', vector: seededVector(dims, 402), limit: 10, offset: 0 });
          expect(herons[0]!.chunk.entityId).toBe('db/herons');
        }
      });

      test('offset and limit page consistently for every strategy', async () => {
        const paging = collection();
        const words = ['report', 'report report', 'report report report', 'report x y', 'report a b c d', 'report report z'];
        await index.add(paging, words.map((text, i) => chunk(i + 11, { text: `${text} ${'filler '.repeat(i)}` })));
        const queries: Omit<VectorQuery, 'limit' | 'offset'>[] = [
          { strategy: 'semantic', vector: seededVector(dims, 11) },
          { strategy: 'keyword', text: 'report' },
          { strategy: 'hybrid', vector: seededVector(dims, 12), text: 'report' },
        ];
        for (const query of queries) {
          const whole = ids(await index.search(paging, { ...query, limit: 6, offset: 0 }));
          expect(whole).toHaveLength(6);
          const pages: string[] = [];
          for (let offset = 0; offset < 6; offset += 2) pages.push(...ids(await index.search(paging, { ...query, limit: 2, offset })));
          expect(pages).toEqual(whole);
          expect(ids(await index.search(paging, { ...query, limit: 10, offset: 4 }))).toEqual(whole.slice(4));
          expect(await index.search(paging, { ...query, limit: 5, offset: 6 })).toEqual([]);
        }
      });
    });

    describe('filters', () => {
      let id: string;
      // c1, c2: two chunks of entity e-1; c3: e-2; c4: a quoted id on another connection; c5: e-4.
      const fixtures = () => [
        chunk(1, {
          entityId: 'e-1',
          chunkIndex: 0,
          name: 'Quarterly Report',
          createdAt: new Date('2024-01-01T00:00:00Z'),
          updatedAt: new Date('2024-06-01T00:00:00Z'),
          breadcrumbs: [
            { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
            { entity_id: 'f-1', name: 'Finance', entity_type: 'folder' },
          ],
          entityType: 'Page',
          sourceName: 'notion',
          syncId: 's-1',
          syncJobId: 'j-1',
        }),
        chunk(2, {
          entityId: 'e-1',
          chunkIndex: 1,
          name: 'Quarterly Report',
          createdAt: new Date('2024-01-01T00:00:00Z'),
          updatedAt: new Date('2024-06-01T00:00:00Z'),
          breadcrumbs: [
            { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
            { entity_id: 'f-1', name: 'Finance', entity_type: 'folder' },
          ],
          entityType: 'Page',
          sourceName: 'notion',
          syncId: 's-1',
          syncJobId: 'j-1',
        }),
        chunk(3, {
          entityId: 'e-2',
          chunkIndex: 0,
          name: 'Team Offsite Plan',
          createdAt: new Date('2025-03-15T12:00:00Z'),
          updatedAt: null,
          breadcrumbs: [
            { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
            { entity_id: 'f-2', name: 'Events', entity_type: 'folder' },
          ],
          entityType: 'Page',
          sourceName: 'notion',
          syncId: 's-1',
          syncJobId: 'j-2',
        }),
        chunk(4, {
          entityId: "e'3",
          sourceConnectionId: 'conn-2',
          chunkIndex: 0,
          name: 'Bug: crash on "save"',
          createdAt: null,
          updatedAt: new Date('2025-01-01T00:00:00Z'),
          breadcrumbs: [],
          entityType: 'Issue',
          sourceName: 'jira',
          syncId: 's-2',
          syncJobId: 'j-3',
        }),
        chunk(5, {
          entityId: 'e-4',
          chunkIndex: 2,
          name: 'Roadmap',
          createdAt: new Date('2023-05-05T00:00:00Z'),
          updatedAt: new Date('2023-05-06T00:00:00Z'),
          breadcrumbs: [{ entity_id: 'p-1', name: 'Project X', entity_type: 'project' }],
          entityType: 'Issue',
          sourceName: 'jira',
          syncId: 's-2',
          syncJobId: 'j-3',
        }),
      ];
      const C1 = 'conn-1:e-1:0';
      const C2 = 'conn-1:e-1:1';
      const C3 = 'conn-1:e-2:0';
      const C4 = "conn-2:e'3:0";
      const C5 = 'conn-1:e-4:2';
      const EVERY = [C1, C2, C3, C4, C5];
      const except = (...excluded: string[]) => EVERY.filter((chunkId) => !excluded.includes(chunkId));

      beforeAll(async () => {
        id = collection();
        await index.add(id, fixtures());
      });

      const cases: [FilterCondition['field'], FilterCondition['operator'], FilterCondition['value'], string[]][] = [
        ['entity_id', 'equals', 'e-1', [C1, C2]],
        ['entity_id', 'equals', 'e-9', []],
        ['entity_id', 'equals', "e'3", [C4]],
        ['entity_id', 'not_equals', 'e-1', [C3, C4, C5]],
        ['entity_id', 'contains', '-', [C1, C2, C3, C5]],
        ['entity_id', 'contains', 'zz', []],
        ['entity_id', 'in', ['e-2', "e'3", 'nope'], [C3, C4]],
        ['entity_id', 'in', [], []],
        ['entity_id', 'not_in', ['e-1', 'e-2'], [C4, C5]],
        ['entity_id', 'not_in', [], EVERY],
        ['name', 'equals', 'Roadmap', [C5]],
        ['name', 'equals', 'roadmap', []],
        ['name', 'not_equals', 'Quarterly Report', [C3, C4, C5]],
        ['name', 'contains', 'Report', [C1, C2]],
        ['name', 'contains', '"save"', [C4]],
        ['name', 'contains', 'Offsite Plan X', []],
        ['name', 'in', ['Roadmap', 'Team Offsite Plan'], [C3, C5]],
        ['name', 'not_in', ['Roadmap'], except(C5)],
        ['created_at', 'equals', '2024-01-01T00:00:00Z', [C1, C2]],
        ['created_at', 'equals', '2024-01-01T00:00:00.001Z', []],
        ['created_at', 'not_equals', '2024-01-01T00:00:00Z', [C3, C4, C5]],
        ['created_at', 'greater_than', '2024-01-01T00:00:00Z', [C3]],
        ['created_at', 'greater_than_or_equal', '2024-01-01T00:00:00Z', [C1, C2, C3]],
        ['created_at', 'less_than', '2024-01-01T00:00:00Z', [C5]],
        ['created_at', 'less_than_or_equal', '2024-01-01T00:00:00+00:00', [C1, C2, C5]],
        ['created_at', 'greater_than', '2025-03-15T13:00:00+02:00', [C3]],
        ['created_at', 'less_than', '2020-01-01', []],
        ['created_at', 'in', ['2023-05-05T00:00:00Z', '2025-03-15T12:00:00.000Z'], [C3, C5]],
        ['created_at', 'not_in', ['2024-01-01T00:00:00Z'], [C3, C4, C5]],
        ['updated_at', 'greater_than', '2024-12-31T00:00:00Z', [C4]],
        ['updated_at', 'less_than', '2024-12-31T00:00:00Z', [C1, C2, C5]],
        ['updated_at', 'equals', '2025-01-01T00:00:00Z', [C4]],
        ['updated_at', 'not_equals', '2025-01-01T00:00:00Z', [C1, C2, C3, C5]],
        ['breadcrumbs.entity_id', 'equals', 'ws-1', [C1, C2, C3]],
        ['breadcrumbs.entity_id', 'equals', 'ws', []],
        ['breadcrumbs.entity_id', 'not_equals', 'f-1', [C3, C4, C5]],
        ['breadcrumbs.entity_id', 'contains', 'p-1', [C5]],
        ['breadcrumbs.entity_id', 'in', ['f-2', 'p-1'], [C3, C5]],
        ['breadcrumbs.entity_id', 'not_in', ['ws-1', 'p-1'], [C4]],
        ['breadcrumbs.name', 'equals', 'Finance', [C1, C2]],
        ['breadcrumbs.name', 'equals', 'Finance Workspace', []],
        ['breadcrumbs.name', 'contains', 'Project X', [C5]],
        ['breadcrumbs.name', 'not_equals', 'Workspace', [C4, C5]],
        ['breadcrumbs.name', 'in', ['Events', 'Nope'], [C3]],
        ['breadcrumbs.name', 'not_in', ['Events'], except(C3)],
        ['breadcrumbs.entity_type', 'equals', 'folder', [C1, C2, C3]],
        ['breadcrumbs.entity_type', 'not_equals', 'folder', [C4, C5]],
        ['breadcrumbs.entity_type', 'contains', 'project', [C5]],
        ['breadcrumbs.entity_type', 'in', ['project', 'workspace'], [C1, C2, C3, C5]],
        ['breadcrumbs.entity_type', 'not_in', ['workspace'], [C4, C5]],
        ['service_system_metadata.entity_type', 'equals', 'Issue', [C4, C5]],
        ['service_system_metadata.entity_type', 'not_equals', 'Issue', [C1, C2, C3]],
        ['service_system_metadata.entity_type', 'contains', 'ssu', [C4, C5]],
        ['service_system_metadata.entity_type', 'in', ['Page'], [C1, C2, C3]],
        ['service_system_metadata.entity_type', 'not_in', ['Page', 'Issue'], []],
        ['service_system_metadata.source_name', 'equals', 'jira', [C4, C5]],
        ['service_system_metadata.source_name', 'not_equals', 'jira', [C1, C2, C3]],
        ['service_system_metadata.source_name', 'contains', 'otio', [C1, C2, C3]],
        ['service_system_metadata.source_name', 'in', ['slack', 'notion'], [C1, C2, C3]],
        ['service_system_metadata.source_name', 'not_in', ['notion'], [C4, C5]],
        ['service_system_metadata.original_entity_id', 'equals', 'e-1', [C1, C2]],
        ['service_system_metadata.original_entity_id', 'not_equals', 'e-1', [C3, C4, C5]],
        ['service_system_metadata.original_entity_id', 'contains', "'", [C4]],
        ['service_system_metadata.original_entity_id', 'in', ['e-4'], [C5]],
        ['service_system_metadata.original_entity_id', 'not_in', ['e-4', 'e-1'], [C3, C4]],
        ['service_system_metadata.chunk_index', 'equals', 0, [C1, C3, C4]],
        ['service_system_metadata.chunk_index', 'not_equals', 0, [C2, C5]],
        ['service_system_metadata.chunk_index', 'greater_than', 0, [C2, C5]],
        ['service_system_metadata.chunk_index', 'greater_than_or_equal', 1, [C2, C5]],
        ['service_system_metadata.chunk_index', 'less_than', 2, [C1, C2, C3, C4]],
        ['service_system_metadata.chunk_index', 'less_than_or_equal', 0, [C1, C3, C4]],
        ['service_system_metadata.chunk_index', 'in', [1, 2], [C2, C5]],
        ['service_system_metadata.chunk_index', 'not_in', [0], [C2, C5]],
        ['service_system_metadata.sync_id', 'equals', 's-2', [C4, C5]],
        ['service_system_metadata.sync_id', 'not_equals', 's-2', [C1, C2, C3]],
        ['service_system_metadata.sync_id', 'contains', 's-', EVERY],
        ['service_system_metadata.sync_id', 'in', ['s-1'], [C1, C2, C3]],
        ['service_system_metadata.sync_id', 'not_in', ['s-1'], [C4, C5]],
        ['service_system_metadata.sync_job_id', 'equals', 'j-2', [C3]],
        ['service_system_metadata.sync_job_id', 'not_equals', 'j-3', [C1, C2, C3]],
        ['service_system_metadata.sync_job_id', 'contains', 'j-', EVERY],
        ['service_system_metadata.sync_job_id', 'in', ['j-1', 'j-2'], [C1, C2, C3]],
        ['service_system_metadata.sync_job_id', 'not_in', ['j-1', 'j-2'], [C4, C5]],
      ];

      test.each(cases)('%s %s %j', async (field, operator, value, expected) => {
        const filter = where({ field, operator, value } as FilterCondition);
        expect(sorted(ids(await all(id, { filter })))).toEqual(sorted(expected));
        expect(await index.count(id, filter)).toBe(expected.length);
      });

      test('conditions in a group are ANDed, groups are ORed, an empty filter matches everything', async () => {
        const and: FilterGroup[] = where(
          { field: 'service_system_metadata.source_name', operator: 'equals', value: 'notion' },
          { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 0 },
        );
        expect(sorted(ids(await all(id, { filter: and })))).toEqual(sorted([C1, C3]));
        const or: FilterGroup[] = [...and, ...where({ field: 'name', operator: 'equals', value: 'Roadmap' })];
        expect(sorted(ids(await all(id, { filter: or })))).toEqual(sorted([C1, C3, C5]));
        expect(await index.count(id, or)).toBe(3);
        expect(await index.count(id, [])).toBe(5);
        expect(await index.count(id, [{ conditions: [] }])).toBe(5);
        expect(await index.count(id, [{ conditions: [] }, ...where({ field: 'entity_id', operator: 'equals', value: 'none' })])).toBe(5);
      });

      const invalid: [string, FilterCondition, string][] = [
        ['a range operator on breadcrumbs', { field: 'breadcrumbs.name', operator: 'greater_than', value: 'a' }, 'operator'],
        ['a range operator on a string field', { field: 'name', operator: 'less_than', value: 'm' }, 'operator'],
        ['contains on a date', { field: 'created_at', operator: 'contains', value: '2024' }, 'operator'],
        ['contains on chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'contains', value: 1 }, 'operator'],
        ['an array with equals', { field: 'entity_id', operator: 'equals', value: ['e-1'] }, 'value'],
        ['a scalar with in', { field: 'entity_id', operator: 'in', value: 'e-1' }, 'value'],
        ['a scalar with not_in', { field: 'breadcrumbs.entity_id', operator: 'not_in', value: 'ws-1' }, 'value'],
        ['a non-date for a date field', { field: 'created_at', operator: 'greater_than', value: 'yesterday-ish' }, 'value'],
        ['a string for chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 'one' }, 'value'],
        ['a fraction for chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 1.5 }, 'value'],
        // chunk_index is a 32-bit column: a larger value failed inside LanceDB (a 500) instead of being refused.
        ['a chunk_index beyond 32 bits', { field: 'service_system_metadata.chunk_index', operator: 'greater_than', value: 2 ** 31 }, 'value'],
        ['a boolean for a string field', { field: 'name', operator: 'equals', value: true }, 'value'],
        ['a bad element in an in list', { field: 'service_system_metadata.chunk_index', operator: 'in', value: ['1'] }, 'value'],
        ['an unknown field', { field: 'payload.secret' as FilterCondition['field'], operator: 'equals', value: 'x' }, 'field'],
        ['an unknown operator', { field: 'name', operator: 'like' as FilterCondition['operator'], value: 'x' }, 'operator'],
      ];

      test.each(invalid)('rejects %s as a ValidationError with its location', async (_label, condition, key) => {
        const filter: FilterGroup[] = [...where({ field: 'entity_id', operator: 'equals', value: 'e-1' }), { conditions: [{ field: 'name', operator: 'equals', value: 'ok' }, condition] }];
        const expectation = { loc: ['filter', 1, 'conditions', 1, key] };
        for (const attempt of [() => index.count(id, filter), () => all(id, { filter }), () => index.search(id, { strategy: 'keyword', text: 'report', filter, limit: 5, offset: 0 })]) {
          const error = await attempt().then(
            () => null,
            (caught: unknown) => caught,
          );
          expect(error).toBeInstanceOf(ValidationError);
          expect((error as ValidationError).issues).toEqual([expect.objectContaining(expectation)]);
        }
      });
    });
  });
}
