import { expect, test } from '@jest/globals';
import type { VectorQuery } from '../vector-index.js';
import { seededVector } from './fixtures.js';
import { type ContractSuite, ids } from './suite.js';

/** Searches answer with documents (one per entity, shown by its best chunk) and page over them. */
export function documentsContract(suite: ContractSuite): void {
  const { collection, chunk } = suite;

  test('every strategy answers with documents: each entity once, shown by its best chunk, paged over documents', async () => {
    const documents = collection();
    // Entity "long" has five chunks about gannets, "short" one; "other" matches nothing.
    await suite.index.add(documents, [
      ...[0, 1, 2, 3, 4].map((i) => chunk(300 + i, { entityId: 'long', chunkIndex: i, text: i === 2 ? 'gannet gannet colony on the cliff gannet' : `gannet seen ${i} times ${'filler '.repeat(i + 3)}` })),
      chunk(310, { entityId: 'short', text: 'a gannet' }),
      chunk(311, { entityId: 'other', text: 'nothing of the kind' }),
      // Another connection's entity of the same id is another document.
      chunk(312, { sourceConnectionId: 'conn-2', entityId: 'long', text: 'gannet' }),
    ]);
    const queries: Omit<VectorQuery, 'limit' | 'offset'>[] = [
      { strategy: 'semantic', vector: seededVector(suite.dims, 302) },
      { strategy: 'keyword', text: 'gannet' },
      { strategy: 'hybrid', vector: seededVector(suite.dims, 302), text: 'gannet' },
    ];
    for (const query of queries) {
      const whole = await suite.index.search(documents, { ...query, limit: 10, offset: 0 });
      const keys = whole.map((r) => `${r.chunk.sourceConnectionId}:${r.chunk.entityId}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys).toEqual(expect.arrayContaining(['conn-1:long', 'conn-1:short', 'conn-2:long']));
      // The long document is shown by its best chunk (the one whose vector is the query, or the densest match).
      expect(whole.find((r) => r.chunk.chunkId.startsWith('conn-1:long:'))!.chunk.chunkIndex).toBe(2);
      expect(whole.map((r) => r.score)).toEqual([...whole.map((r) => r.score)].sort((a, b) => b - a));
      const pages: string[] = [];
      for (let offset = 0; offset < whole.length; offset += 1) pages.push(...ids(await suite.index.search(documents, { ...query, limit: 1, offset })));
      expect(pages).toEqual(ids(whole));
    }
  });

  test('a page of documents is full when a few long documents hold every top chunk: the rankings read deeper', async () => {
    const crowded = collection();
    const nearest = seededVector(suite.dims, 500);
    await suite.index.add(crowded, [
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
      const pages = await Promise.all([0, 10, 20].map((offset) => suite.index.search(crowded, { ...query, limit: 10, offset })));
      expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
      const entities = pages.flat().map((hit) => hit.chunk.entityId);
      expect(new Set(entities).size).toBe(23);
      expect(entities.slice(0, 3).sort()).toEqual(['long-0', 'long-1', 'long-2']);
    }
  });

  test('containers (folders, tables…) stay findable by name but rank after a document that matches as well', async () => {
    const tree = collection();
    await suite.index.add(tree, [
      chunk(400, { entityId: 'docs/ospreys', name: 'ospreys', text: 'ospreys', entityType: 'folder' }),
      chunk(401, { entityId: 'docs/ospreys/nesting.md', name: 'nesting.md', text: 'ospreys', entityType: 'file' }),
      chunk(402, { entityId: 'db/herons', name: 'herons', text: 'herons', entityType: 'postgresql_table' }),
    ]);
    // The folder's name and text both say "ospreys" (it matches twice as well on words); the file says it once.
    for (const strategy of ['keyword', 'hybrid'] as const) {
      const ospreys = await suite.index.search(tree, { strategy, text: 'ospreys', vector: seededVector(suite.dims, 401), limit: 10, offset: 0 });
      expect(ospreys.map((r) => r.chunk.entityId).slice(0, 2)).toEqual(['docs/ospreys/nesting.md', 'docs/ospreys']);
      const herons = await suite.index.search(tree, { strategy, text: 'herons', vector: seededVector(suite.dims, 402), limit: 10, offset: 0 });
      expect(herons[0]!.chunk.entityId).toBe('db/herons');
    }
  });

  test('offset and limit page consistently for every strategy', async () => {
    const paging = collection();
    const words = ['report', 'report report', 'report report report', 'report x y', 'report a b c d', 'report report z'];
    await suite.index.add(paging, words.map((text, i) => chunk(i + 11, { text: `${text} ${'filler '.repeat(i)}` })));
    const queries: Omit<VectorQuery, 'limit' | 'offset'>[] = [
      { strategy: 'semantic', vector: seededVector(suite.dims, 11) },
      { strategy: 'keyword', text: 'report' },
      { strategy: 'hybrid', vector: seededVector(suite.dims, 12), text: 'report' },
    ];
    for (const query of queries) {
      const whole = ids(await suite.index.search(paging, { ...query, limit: 6, offset: 0 }));
      expect(whole).toHaveLength(6);
      const pages: string[] = [];
      for (let offset = 0; offset < 6; offset += 2) pages.push(...ids(await suite.index.search(paging, { ...query, limit: 2, offset })));
      expect(pages).toEqual(whole);
      expect(ids(await suite.index.search(paging, { ...query, limit: 10, offset: 4 }))).toEqual(whole.slice(4));
      expect(await suite.index.search(paging, { ...query, limit: 5, offset: 6 })).toEqual([]);
    }
  });
}
