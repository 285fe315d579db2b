import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Orm } from '../../platform/db/database.js';
import { LanceDbVectorIndex } from '../../platform/vectors/lancedb/lancedb-index.js';
import { makeChunk } from '../../platform/vectors/vector-index.contract.js';
import { withConditions } from './filter-rules.js';
import type { Principal } from '../organizations/principal.js';
import { DocumentReader, MAX_CHUNK_OFFSET } from './document-reader.js';
import type { Retrieval, SearchScope } from './retrieval.js';

const DIMENSIONS = 8;
const COLLECTION = randomUUID();
const CONNECTION = randomUUID();

describe('DocumentReader.read over a real LanceDB index', () => {
  let directory: string;
  let index: LanceDbVectorIndex;
  let reader: DocumentReader;

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'catchment-reader-'));
    index = await LanceDbVectorIndex.open(directory, DIMENSIONS);
    const chunk = (chunkIndex: number) => makeChunk(DIMENSIONS, chunkIndex, { entityId: 'doc', chunkIndex, sourceConnectionId: CONNECTION, syncId: CONNECTION, text: `chunk ${chunkIndex}` });
    // Stored out of chunk order, as a re-sync or a compaction can leave them: the last chunks first.
    await index.add(COLLECTION, [5, 6, 7, 8, 9].map(chunk));
    await index.add(COLLECTION, [0, 1, 2, 3, 4].map(chunk));
    const scope = { collection: { id: COLLECTION }, indexedConnectionIds: [CONNECTION], federated: [], sourceNames: ['stub'] } as unknown as SearchScope;
    const live = (filter: Parameters<Retrieval['list']>[1]) => withConditions(filter, { field: 'service_system_metadata.sync_id', operator: 'in', value: [CONNECTION] });
    const retrieval: Retrieval = {
      scope: async () => scope,
      retrieve: async () => [],
      count: (_scope, filter) => index.count(COLLECTION, live(filter)),
      list: (_scope, filter, limit) => index.list(COLLECTION, live(filter), limit),
    };
    reader = new DocumentReader({} as Orm, retrieval);
  });
  afterAll(async () => {
    await index.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const principal = { organizationId: randomUUID() } as Principal;

  test('a page holds the chunks from its offset on, whatever order the index stores them in', async () => {
    const first = await reader.read(principal, 'c', { entityId: 'doc', chunkLimit: 3 });
    expect(first.chunks.map((c) => c.chunkIndex)).toEqual([0, 1, 2]);
    expect(first.nextChunkOffset).toBe(3);
    const middle = await reader.read(principal, 'c', { entityId: 'doc', chunkOffset: 3, chunkLimit: 4 });
    expect(middle.chunks.map((c) => c.chunkIndex)).toEqual([3, 4, 5, 6]);
    expect(middle.nextChunkOffset).toBe(7);
    const last = await reader.read(principal, 'c', { entityId: 'doc', chunkOffset: 7, chunkLimit: 50 });
    expect(last.chunks.map((c) => c.chunkIndex)).toEqual([7, 8, 9]);
    expect(last.nextChunkOffset).toBeNull();
    expect(last.totalChunks).toBe(10);
  });

  test('an offset past the last chunk, up to the largest chunk index, is an empty last page; a larger one is invalid input', async () => {
    const page = await reader.read(principal, 'c', { entityId: 'doc', chunkOffset: MAX_CHUNK_OFFSET, chunkLimit: 500 });
    expect(page.chunks).toEqual([]);
    expect(page.nextChunkOffset).toBeNull();
    expect(page.totalChunks).toBe(10);
    // The index's chunk_index column is 32-bit: a larger offset used to fail inside LanceDB (an internal error).
    await expect(reader.read(principal, 'c', { entityId: 'doc', chunkOffset: MAX_CHUNK_OFFSET + 1 })).rejects.toMatchObject({ issues: [{ loc: ['chunk_offset'] }] });
  });
});
