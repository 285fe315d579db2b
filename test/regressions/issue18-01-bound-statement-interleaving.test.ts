import { describe, expect, test } from '@jest/globals';
import type { EntityRow } from '../../src/modules/sync/entity-store.js';
import { useEntityTable } from '../support/entity-table-fixture.js';

/**
 * Issue 18, finding 1: PGlite's socket server runs every connection's messages on one session, and a
 * bound statement is several messages (parse, bind, execute, sync). A query of another connection
 * that arrived between them (a job's progress, a search, the API) dropped the statement: a batch of
 * the entity table failed mid-sync, found only by bench:sync. Each of EntityStore's statements now
 * runs in a transaction of its own, during which PGlite serves only its connection.
 *
 * Reproduced here with large batches (a bound statement of megabytes arrives in many socket reads)
 * while other connections of the pool query without pause.
 */
describe('issue 18-01: bulk entity-table statements of the embedded database survive other connections querying meanwhile', () => {
  const table = useEntityTable('interleaving');

  test('every batch is written and read back while three other connections query', async () => {
    const { server, store, connectionId, collectionId } = table;
    const filler = 'x'.repeat(400);
    const rows = (batch: number): EntityRow[] =>
      Array.from({ length: 2000 }, (_, i) => ({
        entityId: `entity-${batch}-${i}`,
        entityType: 'note',
        name: `Note ${batch}.${i} ${filler}`,
        contentHash: `hash-${batch}-${i}`,
        chunkCount: 1,
        breadcrumbs: [{ entityId: 'space', name: `Space ${filler}`, entityType: 'space' }],
        fields: { batch, i, filler },
        sourceCreatedAt: new Date(Date.UTC(2024, 0, 1) + i),
        sourceUpdatedAt: null,
      }));
    const connection = server.running.core.database.orm.em.getConnection();
    let writing = true;
    let otherQueries = 0;
    const others = Array.from({ length: 3 }, async () => {
      while (writing) {
        await connection.execute('select count(*) from sync_jobs');
        otherQueries++;
      }
    });
    const batches = 8;
    try {
      for (let batch = 0; batch < batches; batch++) {
        await store.upsert(connectionId, collectionId, '00000000-0000-4000-8000-0000000000ab', rows(batch));
        const ids = rows(batch).map((row) => row.entityId);
        expect((await store.hashes(connectionId, ids)).size).toBe(ids.length);
      }
    } finally {
      writing = false;
      await Promise.all(others);
    }
    expect(otherQueries).toBeGreaterThan(batches);
    expect(await store.count(connectionId)).toBe(batches * 2000);
  });
});
