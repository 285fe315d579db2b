import { describe, expect, test } from '@jest/globals';
import { candidateDepth, type ChunkRanking, rankDocuments, rankDocumentsDeepening } from './document-ranking.js';

/** A ranking of chunks given as [chunk key, score], best first, on its own scale. */
const ranking = (weight: number, cut: boolean, listed: [string, number][]): ChunkRanking<string> => ({
  candidates: listed.map(([chunkKey, score]) => ({ chunkKey, score, item: chunkKey })),
  weight,
  value: (score) => score,
  cut,
});
const summary = (ranked: ReturnType<typeof rankDocuments<string>>) => ranked.map(({ entityKey, best, score }) => [entityKey, best.chunkKey, Number(score.toFixed(6))]);

describe('rankDocuments', () => {
  test('a document scores its best chunk per ranking, weighted; a ranking that misses it counts its floor (its last value when cut, else 0)', () => {
    const keyword = ranking(0.6, true, [
      ['c:a:0', 1],
      ['c:b:0', 0.5],
      ['c:a:1', 0.4],
    ]);
    const semantic = ranking(0.4, false, [
      ['c:b:1', 0.9],
      ['c:a:1', 0.2],
    ]);
    expect(summary(rankDocuments([keyword, semantic]))).toEqual([
      // a: keyword 1 (chunk 0), semantic 0.2 (chunk 1); chunk 0 alone: 0.6·1 + 0.4·0 = 0.6 beats chunk 1's 0.6·0.4 + 0.4·0.2 = 0.32
      ['c:a', 'c:a:0', 0.68],
      // b: keyword 0.5, semantic 0.9; chunk 1 is missing from the cut keyword ranking: its floor 0.4
      ['c:b', 'c:b:1', 0.66],
    ]);
  });

  test('a ranking listing a chunk twice counts its first listing; empty rankings count for nothing', () => {
    const twice = ranking(1, false, [
      ['c:a:0', 0.3],
      ['c:a:0', 0.9],
      ['c:b:0', 0.5],
    ]);
    expect(summary(rankDocuments([ranking(1, true, []), twice]))).toEqual([
      ['c:b', 'c:b:0', 0.5],
      ['c:a', 'c:a:0', 0.3],
    ]);
  });

  test('the container weight lowers a score whatever its sign', () => {
    const keyword = ranking(0.5, false, [
      ['c:z:0', 0.8],
      ['c:x:0', 0.4],
    ]);
    const semantic = ranking(0.5, false, [['c:w:0', -0.5]]);
    const weightOf = (item: string) => (item.startsWith('c:z') || item.startsWith('c:w') ? 0.1 : 1);
    expect(summary(rankDocuments([keyword, semantic], weightOf))).toEqual([
      ['c:x', 'c:x:0', 0.2],
      ['c:z', 'c:z:0', 0.04],
      ['c:w', 'c:w:0', -2.5],
    ]);
  });

  test('equal scores order by the best chunk’s own value, then by its key', () => {
    // All three score 0.4: p by two chunks (its best's own value 0.3), q and y by one (0.4 each).
    const keyword = ranking(0.5, false, [
      ['c:y:0', 0.8],
      ['c:p:0', 0.6],
      ['c:q:0', 0.4],
    ]);
    const semantic = ranking(0.5, false, [
      ['c:q:0', 0.4],
      ['c:p:1', 0.2],
    ]);
    expect(summary(rankDocuments([keyword, semantic]))).toEqual([
      ['c:q', 'c:q:0', 0.4],
      ['c:y', 'c:y:0', 0.4],
      ['c:p', 'c:p:0', 0.4],
    ]);
  });

  test('of a document’s chunks with equal values the one of the lowest key shows', () => {
    const only = ranking(1, false, [
      ['c:a:2', 0.7],
      ['c:a:1', 0.7],
      ['c:b:0', 0.7],
    ]);
    expect(summary(rankDocuments([only]))).toEqual([
      ['c:a', 'c:a:1', 0.7],
      ['c:b', 'c:b:0', 0.7],
    ]);
  });
});

describe('rankDocumentsDeepening', () => {
  /** A ranking of `depth` chunks read from `chunks` (entity keys in rank order), cut when more were left. */
  const readFrom = (chunks: string[], asked: number[]) => async (depth: number): Promise<ChunkRanking<null>[]> => {
    asked.push(depth);
    const listed = chunks.slice(0, depth);
    return [{ candidates: listed.map((entity, i) => ({ chunkKey: `${entity}:${i}`, score: chunks.length - i, item: null })), weight: 1, value: (score) => score, cut: chunks.length > depth }];
  };
  const crowded = (longDocuments: number, chunksEach: number, short: number) => [
    ...Array.from({ length: longDocuments * chunksEach }, (_, i) => `long-${i % longDocuments}`),
    ...Array.from({ length: short }, (_, i) => `short-${i}`),
  ];

  test('candidate depth: ten a document, at least 200, in steps of two (pages sharing a step share their candidates), at most 10,000', () => {
    expect([1, 10, 20].map(candidateDepth)).toEqual([200, 200, 200]);
    expect([21, 40, 41, 80, 100].map(candidateDepth)).toEqual([400, 400, 800, 800, 1600]);
    // Every boundary between pages of ten is a step of two at most.
    for (let page = 1; page < 100; page++) expect(candidateDepth((page + 1) * 10) / candidateDepth(page * 10)).toBeLessThanOrEqual(2);
    expect(candidateDepth(5000)).toBe(10_000);
  });

  test('reads twice as deep while a cut ranking holds fewer documents than its depth is for (a tenth of it), and stops when it holds them', async () => {
    const asked: number[] = [];
    const ranked = await rankDocumentsDeepening(10, readFrom(crowded(3, 150, 40), asked), () => 1);
    // 200 and 400 chunks: 3 documents; 800: 3 + 40 ≥ 20 (the first two pages of 10 share this depth, and so its target).
    expect(asked).toEqual([200, 400, 800]);
    expect(ranked).toHaveLength(43);
  });

  test('pages sharing a depth deepen alike; a ranking not cut, or the deepest allowed, ends it', async () => {
    for (const documents of [10, 20]) {
      const asked: number[] = [];
      await rankDocumentsDeepening(documents, readFrom(crowded(2, 150, 30), asked), () => 1);
      expect(asked).toEqual([200, 400]); // 400 covers all 330 chunks: not cut
    }
    const asked: number[] = [];
    expect(await rankDocumentsDeepening(10, readFrom(crowded(2, 1000, 30), asked), () => 1, 400)).toHaveLength(2);
    expect(asked).toEqual([200, 400]);
    const once: number[] = [];
    await rankDocumentsDeepening(10, readFrom(crowded(0, 0, 500), once), () => 1);
    expect(once).toEqual([200]); // 200 documents in 200 chunks
  });
});
