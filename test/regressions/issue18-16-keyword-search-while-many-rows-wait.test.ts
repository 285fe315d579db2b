import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import { seededVector } from '../../src/platform/vectors/vector-index.contract.js';
import { keywordSearch, markedWrite, unindexedFullTextRows, useLanceDbIndex } from '../support/lancedb-fixture.js';

/**
 * Issue 18, finding 16 (bench:sync --search-breakdown, 100,000 entities, a search every 200 ms on a
 * 2-core host): searches of the collection being synced took keyword p50 918 ms and hybrid 1,228 ms,
 * against 111 ms for a collection not being written. Every keyword search scanned the rows written
 * since the last compaction (~9 µs a row), tens of thousands while a compaction of the whole table
 * was under way. While more than KEYWORD_SCAN_MAX_UNINDEXED_ROWS wait for the full-text index (and
 * no more than it holds), an unfiltered keyword search now reads the index alone: those rows are found by
 * semantic search until a compaction folds them in, and the searches still bring that compaction
 * forward as before.
 */
describe('issue 18-16: a keyword search reads the full-text index alone while more rows than it may scan wait for it', () => {
  const DIMENSIONS = 8;
  const ROWS_PER_WRITE = 100;
  const lance = useLanceDbIndex(DIMENSIONS, { keywordScanMaxUnindexedRows: 150 });
  const id = randomUUID();
  const batch = (write: number) => markedWrite(DIMENSIONS, write, ROWS_PER_WRITE);
  const search = (text: string) => keywordSearch(lance.index, id, DIMENSIONS, text);
  const unindexed = () => unindexedFullTextRows(lance.directory, id);

  test('rows within the bound are found by keyword right after their write; past it only once folded in (by semantic search, and by a filtered keyword search, meanwhile)', async () => {
    // A table large enough that these searches' scans do not bring its compaction forward (1.4 rows scanned a row).
    await lance.index.add(id, markedWrite(DIMENSIONS, 10, 2000));
    await lance.index.optimize(id);
    expect(await unindexed()).toBe(0);
    await lance.index.add(id, batch(1));
    expect(await unindexed()).toBe(ROWS_PER_WRITE);
    expect(await search('marker1')).toHaveLength(3); // 100 rows wait: scanned

    await lance.index.add(id, batch(2));
    expect(await unindexed()).toBe(2 * ROWS_PER_WRITE);
    // 200 wait: the search reads the index alone. Indexed rows are still found, the waiting ones not.
    expect(await search('marker2')).toEqual([]);
    expect(await search('marker1')).toEqual([]);
    expect((await search('marker10')).map((hit) => hit.chunk.text)).toEqual(Array(3).fill('ordinary filler text marker10'));
    // Semantic search scans them: the nearest to a row of the last write is that row.
    const [nearest] = await lance.index.search(id, { strategy: 'semantic', vector: seededVector(DIMENSIONS, 2 * ROWS_PER_WRITE + 7), limit: 1, offset: 0 });
    expect(nearest!.chunk.text).toBe('ordinary filler text marker2');

    // A filtered search scans them: its filter may keep just the rows waiting (here one entity of the last write).
    const filtered = await lance.index.search(id, { strategy: 'keyword', text: 'marker2', limit: 3, offset: 0, filter: [{ conditions: [{ field: 'entity_id', operator: 'equals', value: 'entity-207' }] }] });
    expect(filtered.map((hit) => hit.chunk.entityId)).toEqual(['entity-207']);

    await lance.index.optimize(id);
    expect(await unindexed()).toBe(0);
    expect(await search('marker2')).toHaveLength(3);
  });

  test('a process that has not written to the table (`catchment serve` beside a worker) scans the rows waiting, however many', async () => {
    await lance.index.add(id, markedWrite(DIMENSIONS, 10, 2000));
    await lance.index.optimize(id);
    await lance.index.add(id, batch(1));
    await lance.index.add(id, batch(2));
    expect(await unindexed()).toBe(2 * ROWS_PER_WRITE);
    expect(await search('marker2')).toEqual([]); // the writer reads the index alone
    const reader = await LanceDbVectorIndex.open(lance.directory, DIMENSIONS, { keywordScanMaxUnindexedRows: 150 });
    try {
      expect(await keywordSearch(reader, id, DIMENSIONS, 'marker2')).toHaveLength(3);
    } finally {
      await reader.close();
    }
  });

  test('a table most of whose rows wait for the index (one bulk write) is scanned whole: its rows are found by keyword', async () => {
    await lance.index.add(id, markedWrite(DIMENSIONS, 10, 400));
    expect(await unindexed()).toBe(400);
    expect(await search('marker10')).toHaveLength(3);
  });

  test('searches that read the index alone still count the rows waiting, and so bring the compaction forward', async () => {
    await lance.index.add(id, markedWrite(DIMENSIONS, 10, 400));
    await lance.index.optimize(id);
    for (let write = 1; write < 4; write++) await lance.index.add(id, batch(write));
    expect(await unindexed()).toBe(3 * ROWS_PER_WRITE);
    // 300 rows wait in a table of 700: four searches count 1,200 scanned, past 1.4 × 700, and the fourth
    // queues the compaction (which may fold the rows in before that search reads: its hits are not asserted).
    for (let i = 0; i < 3; i++) expect(await search('marker3')).toEqual([]);
    await search('marker3');
    // The queued compaction runs under the table's lock, before the next write.
    await lance.index.add(id, batch(4));
    expect(await unindexed()).toBe(ROWS_PER_WRITE);
    expect(await search('marker3')).toHaveLength(3);
    expect(await search('marker4')).toHaveLength(3);
  });
});
