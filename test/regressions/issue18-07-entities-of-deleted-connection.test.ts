import { describe, expect, test } from '@jest/globals';
import pg from 'pg';
import type { Deployment } from '../support/harness.js';
import { noteRows, useEntityTable } from '../support/entity-table-fixture.js';
import { api } from '../support/sync-helpers.js';

/**
 * Issue 18, finding 7: the entity table's foreign key to its connection cost ~13 ms of CPU in a
 * 2,000-row upsert (a lookup per row), its index on collection_id ~4–5 ms. Both went (migration
 * entities_connection_trigger); what they guaranteed must hold without them:
 * - a deleted connection's rows go with it, also when its collection is deleted;
 * - no row outlives its connection, even when the deletion races a batch's write.
 * (A collection's listing, now through its connections, is test/collection-entities.test.ts's.)
 */
const JOB = '00000000-0000-4000-8000-0000000000ad';

describe.each<Deployment>(['embedded', 'servers'])('issue 18-07: entities of a deleted connection (%s deployment)', (deployment) => {
  const table = useEntityTable('deleted-connection', deployment);
  const call = () => api(table.server.url, table.server.apiKey);
  const storedOf = async (connectionId: string) => {
    const [row] = await table.server.running.core.database.orm.em.getConnection().execute<{ count: string }[]>('select count(*) as count from entities where source_connection_id = ?', [connectionId]);
    return Number(row!.count);
  };
  const newConnection = async (readableId: string, name: string) =>
    (await call()('POST', '/source-connections', { short_name: 'push', readable_collection_id: readableId, name })).body.id as string;

  test("deleting a connection deletes its rows, and a write for it afterwards stores nothing and fails", async () => {
    const { store, collectionId } = table;
    const connectionId = await newConnection('deleted-connection', 'Deleted');
    const kept = await newConnection('deleted-connection', 'Kept');
    await store.upsert(connectionId, collectionId, JOB, noteRows(50));
    await store.upsert(kept, collectionId, JOB, noteRows(5));
    expect(await storedOf(connectionId)).toBe(50);

    expect((await call()('DELETE', `/source-connections/${connectionId}`)).status).toBe(200);
    expect(await storedOf(connectionId)).toBe(0);
    expect(await storedOf(kept)).toBe(5);

    await expect(store.upsert(connectionId, collectionId, JOB, noteRows(10))).rejects.toThrow(/was deleted/);
    expect(await storedOf(connectionId)).toBe(0);
  });

  test("deleting a collection deletes its connections' rows", async () => {
    const created = (await call()('POST', '/collections', { name: 'Gone', readable_id: 'gone-collection' })).body;
    const connectionId = await newConnection('gone-collection', 'In a deleted collection');
    await table.store.upsert(connectionId, created.id, JOB, noteRows(20));
    expect((await call()('DELETE', '/collections/gone-collection')).status).toBe(200);
    expect(await storedOf(connectionId)).toBe(0);
  });

  if (deployment === 'servers') {
    test('a write that waits for a deletion in flight fails once it commits, and leaves no row', async () => {
      const { store, server, collectionId } = table;
      const connectionId = await newConnection('deleted-connection', 'Raced');
      const deleting = new pg.Client({ connectionString: server.databaseUrl });
      await deleting.connect();
      try {
        await deleting.query('begin');
        await deleting.query('delete from source_connections where id = $1', [connectionId]);
        const writing = store.upsert(connectionId, collectionId, JOB, noteRows(30));
        const outcome = writing.then(
          () => 'written',
          () => 'refused',
        );
        // The write waits on the connection's row while the deletion is open.
        expect(await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))])).toBe('waiting');
        await deleting.query('commit');
        expect(await outcome).toBe('refused');
      } finally {
        await deleting.end();
      }
      expect(await storedOf(connectionId)).toBe(0);
    });
  }
});
