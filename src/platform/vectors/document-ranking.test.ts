import { describe, expect, test } from '@jest/globals';
import { type ChunkRanking, rankDocuments } from './document-ranking.js';

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
