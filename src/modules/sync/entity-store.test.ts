import { describe, expect, test } from '@jest/globals';
import { useEntityTable } from '../../../test/support/entity-table-fixture.js';
import type { Deployment } from '../../../test/support/harness.js';
import type { EntityRow } from './entity-store.js';

/**
 * Values an array literal must quote: commas, braces, quotes, backslashes (one before a letter JSON
 * escapes with, too), `NULL` as a word, blanks, control characters, non-ASCII.
 */
const AWKWARD = ['a,b', '{braced}', 'say "hi"', 'back\\slash', 'C:\\new', 'NULL', ' padded ', '', 'line\nbreak\ttab\u0007', 'naïve — 東京 🐋', "it's"];

function row(entityId: string, overrides: Partial<EntityRow> = {}): EntityRow {
  return {
    entityId,
    entityType: 'note',
    name: `name of ${entityId}`,
    contentHash: `hash-${entityId}`,
    chunkCount: 2,
    breadcrumbs: [{ entityId: 'space-1', name: 'Space "one", {root}', entityType: 'space' }],
    fields: { text: entityId, list: [1, 'two', null], nested: { deep: '\\' } },
    sourceCreatedAt: new Date('2024-02-29T23:59:58.123Z'),
    sourceUpdatedAt: null,
    ...overrides,
  };
}

describe.each<Deployment>(['embedded', 'servers'])('the entity table written in bulk (%s deployment)', (deployment) => {
  const table = useEntityTable('entity-table', deployment);
  const jobId = '00000000-0000-4000-8000-0000000000aa';

  const stored = async () =>
    table.server.running.core.database.orm.em
      .getConnection()
      .execute<{ entity_id: string; name: string; content_hash: string; chunk_count: number; breadcrumbs: unknown; fields: unknown; source_created_at: Date | null; source_updated_at: Date | null }[]>(
        'select entity_id, name, content_hash, chunk_count, breadcrumbs, fields, source_created_at, source_updated_at from entities where source_connection_id = ? order by entity_id',
        [table.connectionId],
      );

  test('ids, names and JSON with characters an array literal quotes are stored as given, and read back by id', async () => {
    const { store, connectionId, collectionId } = table;
    const rows = AWKWARD.map((id, i) => row(id, { name: AWKWARD[(i + 1) % AWKWARD.length]!, fields: i % 2 ? null : { value: id, list: [id] } }));
    await store.upsert(connectionId, collectionId, jobId, rows);

    const byId = new Map((await stored()).map((r) => [r.entity_id, r]));
    expect([...byId.keys()].sort()).toEqual([...AWKWARD].sort());
    for (const [i, id] of AWKWARD.entries()) {
      expect(byId.get(id)).toMatchObject({
        name: AWKWARD[(i + 1) % AWKWARD.length],
        content_hash: `hash-${id}`,
        chunk_count: 2,
        breadcrumbs: [{ entityId: 'space-1', name: 'Space "one", {root}', entityType: 'space' }],
        fields: i % 2 ? null : { value: id, list: [id] },
        source_updated_at: null,
      });
      expect(new Date(byId.get(id)!.source_created_at!).toISOString()).toBe('2024-02-29T23:59:58.123Z');
    }
    expect(await store.hashes(connectionId, [...AWKWARD, 'not stored'])).toEqual(new Map(AWKWARD.map((id) => [id, `hash-${id}`])));
    expect(await store.count(connectionId)).toBe(AWKWARD.length);
    expect((await store.stats([connectionId])).get(connectionId)?.total).toBe(AWKWARD.length);
  });

  test('a second write of an id updates its row; deletes return the ids of the rows they remove', async () => {
    const { store, connectionId, collectionId } = table;
    await store.upsert(connectionId, collectionId, jobId, [row('a,b', { contentHash: 'changed', chunkCount: 5, breadcrumbs: [] }), row('new one')]);
    const byId = new Map((await stored()).map((r) => [r.entity_id, r]));
    expect(byId.get('a,b')).toMatchObject({ content_hash: 'changed', chunk_count: 5, breadcrumbs: [] });
    expect(byId.size).toBe(AWKWARD.length + 1);

    expect((await store.delete(connectionId, ['{braced}', 'NULL', 'never stored'])).sort()).toEqual(['NULL', '{braced}']);
    // Read in pages of 3: each continues after the last id of the one before.
    const pages: string[][] = [];
    for await (const page of store.ids(connectionId, 3)) pages.push(page);
    expect(pages.slice(0, -1).every((page) => page.length === 3)).toBe(true);
    expect(pages.flat().sort()).toEqual([...AWKWARD, 'new one'].filter((id) => id !== '{braced}' && id !== 'NULL').sort());
  });

  test('rows written as new insert; one stored after all is updated, with the batch, not refused', async () => {
    const { store, connectionId, collectionId } = table;
    await store.upsert(connectionId, collectionId, jobId, [row('fresh-1', { isNew: true }), row('fresh-2', { isNew: true })]);
    // 'a,b' is stored (the tests above): marked new by a writer that did not know, it fails the plain insert.
    await store.upsert(connectionId, collectionId, jobId, [row('fresh-3', { isNew: true }), row('a,b', { isNew: true, contentHash: 'written as new', chunkCount: 7 }), row('fresh-1', { contentHash: 'again' })]);
    const byId = new Map((await stored()).map((r) => [r.entity_id, r]));
    expect(byId.get('a,b')).toMatchObject({ content_hash: 'written as new', chunk_count: 7 });
    expect(byId.get('fresh-1')).toMatchObject({ content_hash: 'again' });
    expect(byId.get('fresh-2')).toMatchObject({ content_hash: 'hash-fresh-2' });
    expect(byId.get('fresh-3')).toMatchObject({ content_hash: 'hash-fresh-3' });
    expect((await store.delete(connectionId, ['fresh-1', 'fresh-2', 'fresh-3'])).sort()).toEqual(['fresh-1', 'fresh-2', 'fresh-3']);
  });

  test('instants from year 1 BC to 10000, and none, are stored as the instants given (milliseconds and text alike)', async () => {
    const { store, connectionId, collectionId } = table;
    // As epoch milliseconds (1684-2255, both bounds) and as text (the rest; see instantArrays).
    const instants = [
      '0000-06-15T12:00:00.000Z',
      '0001-01-01T00:00:00.000Z',
      '1684-07-28T00:12:25.259Z',
      '1684-07-28T00:12:25.260Z',
      '1969-12-31T23:59:59.999Z',
      '2255-06-05T23:47:34.740Z',
      '2255-06-05T23:47:34.741Z',
      '9999-12-31T23:59:59.999Z',
      '+010000-01-01T00:00:00.001Z',
    ].map((iso) => new Date(iso));
    await store.upsert(
      connectionId,
      collectionId,
      jobId,
      instants.map((instant, i) => row(`when-${i}`, { sourceCreatedAt: instant, sourceUpdatedAt: i % 2 ? null : instant })),
    );
    // Read as milliseconds since 1970 (the driver's Date parsing does not read BC).
    const millis = await table.server.running.core.database.orm.em
      .getConnection()
      .execute<{ entity_id: string; created: string; updated: string | null }[]>(
        `select entity_id, (extract(epoch from source_created_at) * 1000)::bigint::text as created, (extract(epoch from source_updated_at) * 1000)::bigint::text as updated
         from entities where source_connection_id = ? and entity_id like 'when-%'`,
        [table.connectionId],
      );
    const byId = new Map(millis.map((r) => [r.entity_id, r]));
    for (const [i, instant] of instants.entries()) {
      expect(byId.get(`when-${i}`)).toEqual({ entity_id: `when-${i}`, created: String(instant.getTime()), updated: i % 2 ? null : String(instant.getTime()) });
    }
  });
});
