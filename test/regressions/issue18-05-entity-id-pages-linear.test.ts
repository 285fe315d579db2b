import { describe, expect, test } from '@jest/globals';
import { noteRows, useEntityTable } from '../support/entity-table-fixture.js';

/**
 * Issue 18, finding 5: the deletions at the end of a complete run read the connection's stored ids a
 * page at a time, each page continuing after the last id of the one before. The embedded database
 * gathers no planner statistics (PGlite runs no autovacuum), and its planner read every remaining row
 * of the connection for each page (a bitmap scan, then a sort for the page's limit): quadratic in the
 * connection's size, 2.0–2.7 s of a 111,000-entity sync's end. Each page now walks the index in order.
 *
 * Counted, not timed: the heap rows the table's index scans fetched while the pages are read
 * (PostgreSQL's statistics, flushed on demand). Linear is about one per id; the quadratic plan fetched
 * about ids² / (2 × page).
 */
describe('issue 18-05: the entity ids of a connection are read in pages at a cost linear in their number', () => {
  const table = useEntityTable('id-pages');

  test('reading 6,000 ids in pages of 300 fetches each row about once', async () => {
    const { server, store, connectionId, collectionId } = table;
    const count = 6000;
    const rows = noteRows(count);
    await store.upsert(connectionId, collectionId, '00000000-0000-4000-8000-0000000000ac', rows);

    const connection = server.running.core.database.orm.em.getConnection();
    const fetched = async () => {
      await connection.execute('select pg_stat_force_next_flush()');
      const [stats] = await connection.execute<{ fetched: string }[]>(`select idx_tup_fetch as fetched from pg_stat_user_tables where relname = 'entities'`);
      return Number(stats!.fetched);
    };
    const before = await fetched();
    const pages: string[][] = [];
    for await (const page of store.ids(connectionId, 300)) pages.push(page);
    const rowsFetched = (await fetched()) - before;

    expect(pages.flat().sort()).toEqual(rows.map((row) => row.entityId).sort());
    // Quadratic: ~6,000² / 600 = 60,000.
    expect(rowsFetched).toBeLessThanOrEqual(2 * count);
  });
});
