import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LanceDbVectorIndex } from './lancedb/lancedb-index.js';
import { makeChunk } from './vector-index.contract.js';
import type { VectorIndex } from './vector-index.js';
import { VectorIndexOnFirstUse } from './vector-index-on-first-use.js';

describe('VectorIndexOnFirstUse', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'catchment-first-use-'));
  let opened: Promise<VectorIndex> | undefined;
  afterAll(async () => {
    await (await opened)?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('opens the index on its first call, not before, and passes the calls through', async () => {
    let opens = 0;
    const index = new VectorIndexOnFirstUse(() => {
      opens++;
      return (opened ??= LanceDbVectorIndex.open(dir, 8));
    });
    expect(opens).toBe(0);
    await index.add('collection', [makeChunk(8, 1), makeChunk(8, 2)]);
    expect(opens).toBe(1);
    expect(await index.count('collection')).toBe(2);
    await index.close(); // the owner of the real index closes it
    expect(await (await opened!).count('collection')).toBe(2);
  });
});
