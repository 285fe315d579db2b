import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { seededVector } from '../../src/platform/vectors/vector-index.contract.js';
import { keywordSearch, markedWrite, unindexedFullTextRows, useLanceDbIndex } from '../support/lancedb-fixture.js';

/**
 * Issue 18, finding 6 (bench:sync, report of this session's sync helper): a hybrid search during a
 * sync took hundreds of milliseconds (20,000 entities: p50 368 ms, against 12 ms after it). Rows
 * written since the table's last compaction are not in the full-text index, and every keyword search
 * scans them, tokenizing each one's text (~9 µs a row: 212 ms of CPU with bench:sync's 22,200 rows,
 * none indexed, as compactions came every 20 writes only). A table is now compacted early once the
 * keyword searches since its last compaction scanned 1.4 unindexed rows per row of the table (what
 * a compaction costs: the search that tips it queues it); with nobody searching, by writes and the
 * table's growth (maintenance.ts).
 * Rows stay findable right after their write either way.
 */
describe('issue 18-06: keyword searches during writes do not scan every row written since the last compaction', () => {
  const DIMENSIONS = 8;
  const WRITES = 10;
  const ROWS_PER_WRITE = 100;
  const lance = useLanceDbIndex(DIMENSIONS);
  const id = randomUUID();
  const batch = (write: number) => markedWrite(DIMENSIONS, write, ROWS_PER_WRITE);
  const search = (text: string) => keywordSearch(lance.index, id, DIMENSIONS, text);

  const unindexed = () => unindexedFullTextRows(lance.directory, id);

  test('searched between writes, the table folds its rows into the full-text index early, and each write is found right after it', async () => {
    const unindexedAfterWrites: number[] = [];
    for (let write = 0; write < WRITES; write++) {
      // A compaction the last write's searches queued runs before this write (the table's lock).
      await lance.index.add(id, batch(write));
      unindexedAfterWrites.push(await unindexed());
      const found = await search(`marker${write}`);
      expect(found).toHaveLength(3);
      expect(found.every((hit) => hit.chunk.text === `ordinary filler text marker${write}`)).toBe(true);
      await search('filler');
    }
    // Two searches a write, each counted as scanning the rows unindexed when it ran: a compaction
    // every two to four writes (at most 400 rows unindexed: 100, 200, 300, 400 after the last ones,
    // 1,600 rows scanned in a table of 1,000), not the 1,000 rows of ten writes.
    expect(Math.max(...unindexedAfterWrites)).toBeLessThanOrEqual(4 * ROWS_PER_WRITE);
    expect(unindexedAfterWrites.filter((rows) => rows === ROWS_PER_WRITE).length).toBeGreaterThanOrEqual(3);
  });

  test('searched once since its last compaction, the table is compacted at its 20th write whatever its growth', async () => {
    await lance.index.add(id, batch(0));
    expect(await search('marker0')).toHaveLength(3); // scans 100 rows: too few to compact early
    for (let write = 1; write < 19; write++) await lance.index.add(id, batch(write));
    expect(await unindexed()).toBe(19 * ROWS_PER_WRITE);
    await lance.index.add(id, batch(19));
    expect(await unindexed()).toBe(0);
  });

  test('a semantic search between writes also brings the compaction to the 20th write', async () => {
    await lance.index.add(id, batch(0));
    expect(await lance.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 5), limit: 3, offset: 0 })).toHaveLength(3);
    for (let write = 1; write < 20; write++) await lance.index.add(id, batch(write));
    expect(await unindexed()).toBe(0);
  });

  test('searches while no write waits (between syncs) do not bring the next compaction forward', async () => {
    await lance.index.add(id, batch(0));
    await lance.index.optimize(id);
    expect(await search('marker0')).toHaveLength(3);
    expect(await lance.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 5), limit: 3, offset: 0 })).toHaveLength(3);
    for (let write = 1; write <= 20; write++) await lance.index.add(id, batch(write));
    expect(await unindexed()).toBe(20 * ROWS_PER_WRITE);
  });

  test('not searched, ten writes are not compacted: the schedule by writes and growth only', async () => {
    for (let write = 0; write < WRITES; write++) await lance.index.add(id, batch(write));
    expect(await unindexed()).toBe(WRITES * ROWS_PER_WRITE);
    expect(await search(`marker${WRITES - 1}`)).toHaveLength(3);
  });
});
