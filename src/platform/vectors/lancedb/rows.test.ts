import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { nativeExecutable, queryRows } from './rows.js';

describe('queryRows', () => {
  let directory: string;
  let table: lancedb.Table;
  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'catchment-query-rows-'));
    const db = await lancedb.connect(directory);
    table = await db.createTable(
      'rows',
      Array.from({ length: 3000 }, (_, i) => ({ n: i, text: `row ${i}` })),
    );
  });
  afterAll(async () => {
    table.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** A scan whose native stream counts the batches read from it (each `next()`, the last one's null too). */
  function countedScan(): { query: lancedb.Query; reads: () => number } {
    const query = table.query().select(['n', 'text']);
    const native = nativeExecutable(query);
    const execute = native.nativeExecute.bind(query);
    let reads = 0;
    native.nativeExecute = async () => {
      const stream = await execute();
      return { next: () => (reads++, stream.next()) };
    };
    return { query, reads: () => reads };
  }

  test('reads the whole stream as rows, or stops at the batch that completes the rows expected', async () => {
    const whole = countedScan();
    const rows = await queryRows(whole.query);
    expect(rows.map((row) => row.n)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect(rows[2999]).toEqual({ n: 2999, text: 'row 2999' });
    const batches = whole.reads() - 1; // the last read is the stream's end
    expect(batches).toBeGreaterThan(1);

    const first = countedScan();
    const leading = await queryRows(first.query, 10);
    expect(first.reads()).toBe(1);
    expect(leading.length).toBeGreaterThanOrEqual(10);
    expect(leading.slice(0, 10).map((row) => row.text)).toEqual(Array.from({ length: 10 }, (_, i) => `row ${i}`));
  });
});
