import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import { makeChunk } from '../../src/platform/vectors/vector-index.contract.js';
import { keywordSearch, unindexedFullTextRows } from '../support/lancedb-fixture.js';

/**
 * Issue 18, finding 10 (a review of 27fb7ed, where keyword searches began to queue compactions):
 * 1. close() waited for the writes it saw when called; a search that tipped the rent-or-buy rule
 *    while it waited queued a compaction behind the write in progress, which then ran on a handle
 *    close() was closing: close() rejected ("The same native value cannot be borrowed mutably while
 *    another borrow is active") and left the connection open, and core's close skipped the database.
 * 2. A queued compaction checked only that a count of scans existed when it ran: after the table was
 *    dropped and made again, it compacted the new table through the old handle.
 * close() now takes no more writes or upkeep once begun and waits until none is queued; a queued
 * compaction runs only if no compaction (or drop) of the table came since it was queued.
 */
describe('issue 18-10: compactions queued by searches end before close() and never outlive their table', () => {
  const DIMENSIONS = 8;
  const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => makeChunk(DIMENSIONS, from + i, { text: `ordinary filler text marker${from + i}` }));
  const describeError = (error: unknown) => String((error as Error | undefined)?.message ?? error);

  async function withIndex(run: (index: LanceDbVectorIndex, id: string, dir: string, upkeepErrors: string[]) => Promise<void>) {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-upkeep-queued-'));
    const upkeepErrors: string[] = [];
    const index = await LanceDbVectorIndex.open(dir, DIMENSIONS, { onUpkeepError: (_, error) => upkeepErrors.push(describeError(error)) });
    try {
      await run(index, randomUUID(), dir, upkeepErrors);
    } finally {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const searchFiller = (index: LanceDbVectorIndex, id: string) => keywordSearch(index, id, DIMENSIONS, 'filler');

  test('a search that tips the rule while close() waits for a write: close() resolves, and the rows are as the write left them or compacted, never half', async () => {
    await withIndex(async (index, id, dir, upkeepErrors) => {
      await index.add(id, rows(0, 1000));
      await searchFiller(index, id); // 1,000 rows scanned: the next search tips 1.4 a row
      const writing = index.add(id, rows(1000, 4000)); // holds the table's lock
      const closing = index.close().then(
        () => 'closed',
        (error: unknown) => `close() rejected: ${describeError(error)}`,
      );
      const searching = searchFiller(index, id).then(
        () => 'answered',
        (error: unknown) => `search failed: ${describeError(error)}`,
      );
      await writing;
      expect(await closing).toBe('closed');
      expect(await searching).toMatch(/^(answered|search failed: LanceDbVectorIndex is clos(ing|ed)$)/);
      expect(upkeepErrors).toEqual([]);
      // Nothing runs after close(): what it left stays (another connection reads it).
      const unindexed = await unindexedFullTextRows(dir, id);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await unindexedFullTextRows(dir, id)).toBe(unindexed);
    });
  });

  test('a compaction queued before its table was dropped and made again does nothing to the new table', async () => {
    await withIndex(async (index, id, dir, upkeepErrors) => {
      await index.add(id, rows(0, 1000));
      await searchFiller(index, id); // 1,000 rows scanned
      const writing = index.add(id, rows(1000, 4000)); // holds the table's lock
      const deleting = index.deleteCollection(id);
      const remade = index.add(id, rows(10_000, 1000)); // a new table, after the drop
      const growing = index.add(id, rows(20_000, 8000));
      const stale = searchFiller(index, id).catch(() => []); // on the old table: tips the rule, a compaction queued behind `growing`
      await Promise.all([writing, deleting, remade]);
      expect(await searchFiller(index, id)).toHaveLength(3); // on the new table: counts its scans, under 1.4 a row
      await Promise.all([growing, stale]);
      await index.add(id, rows(40_000, 10)); // the table's lock: any queued compaction has run by now
      expect(upkeepErrors).toEqual([]);
      expect(await index.count(id)).toBe(9010);
      // Not compacted: the new table's writes all still wait for the full-text index.
      expect(await unindexedFullTextRows(dir, id)).toBe(9010);
    });
  });
});
