/**
 * The behaviour every VectorIndex adapter must show (LanceDB now, Weaviate later). An adapter's test
 * file calls `vectorIndexContract('Name', open)`; `open` gives a fresh, empty index.
 */
import { afterAll, beforeAll, describe } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { documentsContract } from './contract/documents.js';
import { makeChunk } from './contract/fixtures.js';
import { filtersContract } from './contract/filters.js';
import { searchContract } from './contract/search.js';
import type { ContractSuite } from './contract/suite.js';
import { writesContract } from './contract/writes.js';
import type { ChunkRecord, FilterGroup, ScoredChunk, VectorIndex } from './vector-index.js';

export { makeChunk, seededVector } from './contract/fixtures.js';

export interface OpenedVectorIndex {
  index: VectorIndex;
  dimensions: number;
  cleanup(): Promise<void>;
}

export function vectorIndexContract(name: string, open: () => Promise<OpenedVectorIndex>): void {
  describe(`VectorIndex contract: ${name}`, () => {
    let opened: OpenedVectorIndex;
    let index: VectorIndex;
    let dims: number;
    const collections: string[] = [];
    const collection = () => {
      const id = randomUUID();
      collections.push(id);
      return id;
    };
    const chunk = (seed: number, overrides: Partial<ChunkRecord> = {}) => makeChunk(dims, seed, overrides);
    const all = async (collectionId: string, { filter = [] }: { filter?: FilterGroup[] } = {}): Promise<ScoredChunk[]> =>
      (await index.list(collectionId, filter, 1000)).map((chunk) => ({ chunk, score: 0 }));
    const suite: ContractSuite = {
      get index() {
        return index;
      },
      get dims() {
        return dims;
      },
      collection,
      chunk,
      all,
    };

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

    describe('writes', () => writesContract(suite));
    describe('search', () => {
      searchContract(suite);
      documentsContract(suite);
    });
    describe('filters', () => filtersContract(suite));
  });
}
