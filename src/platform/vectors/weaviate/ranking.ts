import { ValidationError } from '../../../shared/errors.js';
import { type ChunkRanking, CONTAINER_WEIGHT, isContainerType, rankDocumentsDeepening } from '../document-ranking.js';
import { finiteOr } from '../filter-conditions.js';
import type { ScoredChunk, VectorQuery } from '../vector-index.js';

/** Weaviate's default QUERY_MAXIMUM_RESULTS: offset + limit of one query may not exceed it. */
export const MAX_QUERY_RESULTS = 10_000;

/**
 * One result's score, higher is better: 1 − cosine distance for nearVector (as LanceDB), the BM25
 * score for keyword, the fused score for hybrid (relative-score fusion: each list min-max normalised
 * and weighted, the same fusion as LanceDB's, so scores lie in [0, 1]).
 */
export function resultScore(strategy: VectorQuery['strategy'], metadata: { distance?: number; score?: number } | undefined): number {
  if (strategy === 'semantic') return finiteOr(1 - Number(metadata?.distance), -1);
  return finiteOr(Number(metadata?.score), 0);
}

/** Weaviate's chunk hits (its own fusion for hybrid) as the one ranking documents are ranked from; `cut` when the hits stopped at the query's limit. */
function hitRanking(hits: ScoredChunk[], cut: boolean): ChunkRanking<ScoredChunk> {
  return { candidates: hits.map((hit) => ({ chunkKey: hit.chunk.chunkId, score: hit.score, item: hit })), weight: 1, value: (score: number) => score, cut };
}

/** Containers count at CONTAINER_WEIGHT, as in LanceDB's ranking. */
const hitWeight = (hit: ScoredChunk) => (isContainerType(hit.chunk.entityType) ? CONTAINER_WEIGHT : 1);

/**
 * The page of documents ranked from Weaviate's chunk hits, as LanceDB ranks them (document-ranking.ts):
 * one hit per entity, its best chunk, scored as its document. `hitsAt(depth)` reads that many hits
 * (Weaviate's own fusion for hybrid); fewer than asked means the ranking holds every match.
 */
export async function documentPageOfHits(hitsAt: (depth: number) => Promise<ScoredChunk[]>, offset: number, limit: number): Promise<ScoredChunk[]> {
  const ranked = await rankDocumentsDeepening(
    offset + limit,
    async (depth) => {
      const hits = await hitsAt(depth);
      return [hitRanking(hits, hits.length >= depth)];
    },
    hitWeight,
    MAX_QUERY_RESULTS,
  );
  return ranked.slice(offset, offset + limit).map(({ best, score }) => ({ chunk: best.item.chunk, score }));
}

/**
 * The search to run. Hybrid at a weight of 0 or 1 is the pure ranking (Weaviate would still fuse
 * normalised scores); a query without words has nothing for BM25 to match.
 */
export function effectiveStrategy(strategy: VectorQuery['strategy'], keywordWeight: number | undefined, text: string): VectorQuery['strategy'] | 'none' {
  switch (strategy) {
    case 'semantic':
      return 'semantic';
    case 'keyword':
      return text === '' ? 'none' : 'keyword';
    case 'hybrid': {
      const weight = keywordWeightOf(keywordWeight);
      if (text === '' || weight <= 0) return 'semantic';
      return weight >= 1 ? 'keyword' : 'hybrid';
    }
    default:
      throw new ValidationError([{ loc: ['retrieval_strategy'], msg: `Unknown retrieval strategy ${String(strategy)}`, type: 'enum' }]);
  }
}

export function keywordWeightOf(weight: number | undefined): number {
  return typeof weight === 'number' && Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0.5;
}
