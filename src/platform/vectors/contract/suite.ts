import type { ChunkRecord, FilterCondition, FilterGroup, ScoredChunk, VectorIndex } from '../vector-index.js';

/** What the parts of the contract share: the index under test (open from the suite's beforeAll on) and its helpers. */
export interface ContractSuite {
  readonly index: VectorIndex;
  readonly dims: number;
  /** A fresh collection id (a UUID, as collections have). */
  collection(): string;
  chunk(seed: number, overrides?: Partial<ChunkRecord>): ChunkRecord;
  /** Every chunk a filter selects (as scored chunks, unranked): what filters are checked on. */
  all(collectionId: string, options?: { filter?: FilterGroup[] }): Promise<ScoredChunk[]>;
}

export const ids = (results: ScoredChunk[]) => results.map((result) => result.chunk.chunkId);
export const sorted = (values: string[]) => [...values].sort();
export const where = (...conditions: FilterCondition[]): FilterGroup[] => [{ conditions }];
