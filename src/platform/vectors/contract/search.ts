import { beforeAll, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { seededVector } from './fixtures.js';
import { type ContractSuite, ids, sorted, where } from './suite.js';

/** Listing and the three search strategies: ranking, scores, keyword weight and filters. */
export function searchContract(suite: ContractSuite): void {
  const { collection, chunk } = suite;

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
    await suite.index.add(id, Object.entries(texts).map(([seed, text]) => chunk(Number(seed), { text })));
  });

  test('list: the chunks a filter selects, ordered by entity then chunk index, at most limit, without vectors', async () => {
    const listed = await suite.index.list(id, where({ field: 'entity_id', operator: 'in', value: ['entity-5', 'entity-2'] }), 10);
    expect(listed.map((c) => c.chunkId)).toEqual(['conn-1:entity-2:0', 'conn-1:entity-5:0']);
    expect(listed[0]!.text).toBe(texts[2]);
    expect(listed[0]).not.toHaveProperty('vector');
    expect(await suite.index.list(id, where({ field: 'entity_id', operator: 'equals', value: 'nope' }), 10)).toEqual([]);
    expect(await suite.index.list(id, [], 2)).toHaveLength(2);
    expect(await suite.index.list(randomUUID(), [], 10)).toEqual([]);
  });

  test('semantic: the chunk whose vector equals the query ranks first, scores descend', async () => {
    for (const seed of [1, 3, 6]) {
      const results = await suite.index.search(id, { strategy: 'semantic', vector: seededVector(suite.dims, seed), limit: 3, offset: 0 });
      expect(results).toHaveLength(3);
      expect(results[0]!.chunk.entityId).toBe(`entity-${seed}`);
      expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
      expect(results[1]!.score).toBeGreaterThanOrEqual(results[2]!.score);
    }
  });

  test('keyword: a rare word finds its chunk; rows added after earlier queries are found too', async () => {
    const platypus = await suite.index.search(id, { strategy: 'keyword', text: 'platypus', limit: 10, offset: 0 });
    expect(ids(platypus)).toEqual(['conn-1:entity-3:0']);
    expect(platypus[0]!.score).toBeGreaterThan(0);
    expect(await suite.index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 })).toEqual([]);
    await suite.index.add(id, [chunk(7, { text: 'a xylophone concert downtown' })]);
    expect(ids(await suite.index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 }))).toEqual(['conn-1:entity-7:0']);
    await suite.index.optimize(id);
    expect(ids(await suite.index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 }))).toEqual(['conn-1:entity-7:0']);
    await suite.index.deleteEntities(id, 'conn-1', ['entity-7']);
    expect(await suite.index.search(id, { strategy: 'keyword', text: 'xylophone', limit: 10, offset: 0 })).toEqual([]);
  });

  test('keyword: a better match scores higher', async () => {
    const other = collection();
    await suite.index.add(other, [
      chunk(1, { text: 'kiwi kiwi kiwi orchard' }),
      chunk(2, { text: 'a long text that mentions kiwi once among many other unrelated words here' }),
      chunk(3, { text: 'no fruit at all' }),
    ]);
    const results = await suite.index.search(other, { strategy: 'keyword', text: 'kiwi', limit: 10, offset: 0 });
    expect(ids(results)).toEqual(['conn-1:entity-1:0', 'conn-1:entity-2:0']);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
  });

  test('hybrid: returns both the semantic and the keyword match ahead of the rest', async () => {
    // entity-2's vector is the query; entity-3 only matches the word.
    const results = await suite.index.search(id, { strategy: 'hybrid', vector: seededVector(suite.dims, 2), text: 'platypus', limit: 10, offset: 0 });
    expect(sorted(ids(results.slice(0, 2)))).toEqual(['conn-1:entity-2:0', 'conn-1:entity-3:0']);
    // A chunk matching both ways wins.
    const both = await suite.index.search(id, { strategy: 'hybrid', vector: seededVector(suite.dims, 3), text: 'platypus', limit: 2, offset: 0 });
    expect(both[0]!.chunk.entityId).toBe('entity-3');
    expect(both[0]!.score).toBeGreaterThan(both[1]!.score);
  });

  test('hybrid: keywordWeight moves the balance between the keyword and the vector ranking', async () => {
    // S has the query's vector and no keyword; K has the keyword and the opposite vector (ranked last of 20).
    const weighted = collection();
    const target = seededVector(suite.dims, 200);
    await suite.index.add(weighted, [
      ...Array.from({ length: 18 }, (_, i) => chunk(101 + i)),
      chunk(1, { entityId: 'S', vector: target }),
      chunk(2, { entityId: 'K', vector: target.map((x) => -x), text: 'a narwhal in the fjord' }),
    ]);
    const query = { strategy: 'hybrid' as const, vector: target, text: 'narwhal', limit: 20, offset: 0 };
    const order = async (keywordWeight: number) => (await suite.index.search(weighted, { ...query, keywordWeight })).map((r) => r.chunk.entityId);
    const keywordHeavy = await order(0.9);
    const vectorHeavy = await order(0.1);
    expect(keywordHeavy[0]).toBe('K');
    expect(vectorHeavy[0]).toBe('S');
    expect(keywordHeavy.indexOf('S')).toBeGreaterThan(vectorHeavy.indexOf('S'));
    expect(vectorHeavy.indexOf('K')).toBeGreaterThan(keywordHeavy.indexOf('K'));
    // Without a weight both rankings count equally: both lead the rest.
    expect(sorted((await suite.index.search(weighted, query)).map((r) => r.chunk.entityId).slice(0, 2))).toEqual(['K', 'S']);
    // The extremes are pure keyword and pure semantic ranking.
    expect(ids(await suite.index.search(weighted, { ...query, keywordWeight: 1 }))).toEqual(ids(await suite.index.search(weighted, { ...query, strategy: 'keyword' })));
    expect(ids(await suite.index.search(weighted, { ...query, keywordWeight: 0 }))).toEqual(ids(await suite.index.search(weighted, { ...query, strategy: 'semantic' })));
  });

  test('filters apply to every strategy', async () => {
    const filter = where({ field: 'entity_id', operator: 'not_equals', value: 'entity-3' });
    expect(await suite.index.search(id, { strategy: 'keyword', text: 'platypus', filter, limit: 10, offset: 0 })).toEqual([]);
    const semantic = await suite.index.search(id, { strategy: 'semantic', vector: seededVector(suite.dims, 3), filter, limit: 10, offset: 0 });
    expect(ids(semantic)).not.toContain('conn-1:entity-3:0');
    expect(semantic.length).toBe(5);
    const hybrid = await suite.index.search(id, { strategy: 'hybrid', vector: seededVector(suite.dims, 3), text: 'platypus', filter, limit: 10, offset: 0 });
    expect(ids(hybrid)).not.toContain('conn-1:entity-3:0');
    // A filter matching few rows still fills the page with them (pre-filtering, not post-filtering a top-k).
    const few = where({ field: 'entity_id', operator: 'in', value: ['entity-5', 'entity-6'] });
    expect(sorted(ids(await suite.index.search(id, { strategy: 'semantic', vector: seededVector(suite.dims, 1), filter: few, limit: 2, offset: 0 })))).toEqual([
      'conn-1:entity-5:0',
      'conn-1:entity-6:0',
    ]);
  });
}
