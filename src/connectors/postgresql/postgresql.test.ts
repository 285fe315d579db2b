import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { ValidationError } from '../../shared/errors.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/harness.js';
import { CredentialsRejectedError, isFederated, SourceConfigError, type SourceEntity, type SourceItem } from '../connector.js';
import type { SqlCursor } from '../sql/sql-settings.js';
import connector from './index.js';
import { connectionContext, connectorEnvironment, syncContext } from '../connector-testing.js';

const environment = connectorEnvironment();

let database: TestDatabase;
let client: pg.Client;
let credentials: { url: string };

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`
    CREATE TABLE articles (
      id serial PRIMARY KEY, title text NOT NULL, body text, views bigint, price numeric(12, 4), published date,
      updated_at timestamptz NOT NULL DEFAULT now(), payload bytea, tags text[], meta jsonb, ratio double precision
    );
    CREATE SCHEMA inventory;
    CREATE TABLE inventory.items (sku text, warehouse int, description text, stock int, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (sku, warehouse));
    CREATE TABLE logs (message text);
    INSERT INTO articles (title, body, views, price, published, updated_at, payload, tags, meta, ratio) VALUES
      ('Rotating credentials', 'How to rotate database passwords without downtime.', 9007199254740993, 12.3456, '2024-02-29', '2024-03-01 10:00:00.123456+00', '\\x000102', '{ops,security}', '{"level": 3}', 'NaN'),
      ('Kayak trips', 'Paddling along the fjords in summer.', 5, NULL, NULL, '2024-03-01 10:00:00+00', NULL, NULL, NULL, 0.5),
      ('Sourdough baking', 'Starter, flour, water and patience: baking sourdough bread.', 7, 1, '2023-01-01', '2024-03-01 09:00:00+00', NULL, '{}', '[]', 1);
    INSERT INTO inventory.items (sku, warehouse, description, stock) VALUES ('a/b', 2, 'Folding kayak paddle', 4), ('a/b', 1, 'Folding kayak paddle', 9), ('c', 1, 'Bread proofing basket', 0);
    INSERT INTO logs VALUES ('no key here');
  `);
  credentials = { url: database.url };
});

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

async function collect(config: Record<string, unknown>, cursor: SqlCursor | null = null, signal = new AbortController().signal) {
  const run = connector.sync(syncContext(connector, { config, credentials, cursor, signal }), environment);
  const items: SourceItem[] = [];
  for await (const item of run.items) items.push(item);
  return { items, entities: items.filter((item): item is SourceEntity => 'entityId' in item), keeps: items.flatMap((item) => ('keep' in item ? [item.keep] : [])), complete: run.complete, cursor: run.nextCursor() };
}

describe('postgresql connector', () => {
  test('a full run: every row of every keyed table, with schema → table breadcrumbs, primary-key ids and JSON-safe fields', async () => {
    const run = await collect({});
    expect(run.complete).toBe(true);
    expect(run.cursor).toBeNull();
    expect(run.entities.map((entity) => entity.entityId)).toEqual(['inventory/items/a%2Fb/1', 'inventory/items/a%2Fb/2', 'inventory/items/c/1', 'public/articles/1', 'public/articles/2', 'public/articles/3']);

    const first = run.entities.find((entity) => entity.entityId === 'public/articles/1')!;
    expect(first).toMatchObject({
      entityType: 'postgresql_row',
      name: 'Rotating credentials',
      breadcrumbs: [
        { entityId: 'public', name: 'public', entityType: 'postgresql_schema' },
        { entityId: 'public/articles', name: 'articles', entityType: 'postgresql_table' },
      ],
      text: 'title: Rotating credentials\nbody: How to rotate database passwords without downtime.',
      updatedAt: new Date('2024-03-01T10:00:00.123Z'),
      webUrl: expect.stringMatching(/^postgresql:\/\/127\.0\.0\.1:5432\/catchment_test_\w+\/public\/articles\/1$/),
    });
    expect(first.fields).toEqual({
      id: 1,
      title: 'Rotating credentials',
      body: 'How to rotate database passwords without downtime.',
      views: '9007199254740993', // beyond 2^53: exact as text
      price: '12.3456',
      published: '2024-02-29',
      updated_at: '2024-03-01T10:00:00.123456Z',
      payload: { byte_length: 3, sha256: createHash('sha256').update(Buffer.from([0, 1, 2])).digest('hex') },
      tags: ['ops', 'security'],
      meta: { level: 3 },
      ratio: 'NaN',
    });
    expect(JSON.parse(JSON.stringify(first.fields))).toEqual(first.fields);

    const item = run.entities.find((entity) => entity.entityId === 'inventory/items/a%2Fb/2')!;
    expect(item).toMatchObject({ name: 'items a/b, 2', text: 'sku: a/b\ndescription: Folding kayak paddle', breadcrumbs: [{ entityId: 'inventory' }, { entityId: 'inventory/items', name: 'items' }] });
  });

  test('small pages return every row once, in key order; chosen schemas, tables and text columns apply', async () => {
    const paged = await collect({ batch_size: 1 });
    expect(paged.entities.map((entity) => entity.entityId)).toEqual((await collect({})).entities.map((entity) => entity.entityId));

    const chosen = await collect({ schemas: ['inventory'], text_columns: ['items.description'] });
    expect(chosen.entities.map((entity) => entity.entityId)).toEqual(['inventory/items/a%2Fb/1', 'inventory/items/a%2Fb/2', 'inventory/items/c/1']);
    expect(chosen.entities[2]!.text).toBe('description: Bread proofing basket');

    const named = await collect({ tables: ['public.articles'], text_columns: ['body'] });
    expect(named.entities).toHaveLength(3);
    expect(named.entities[1]!.text).toBe('body: Paddling along the fjords in summer.');
  });

  test('validate checks credentials and config against the server, with its messages and never the password', async () => {
    const validate = async (config: Record<string, unknown>, given: Record<string, unknown> = credentials) => connector.validate(connectionContext(connector, { config, credentials: given }), environment);
    await expect(validate({ tables: ['articles'], cursor_column: 'updated_at', federated_search: true })).resolves.toBeUndefined();
    await expect(validate({ tables: ['missing'] })).rejects.toThrow(new SourceConfigError('tables', 'Table "missing" not found (or not readable by this user)'));
    await expect(validate({ tables: ['logs'] })).rejects.toThrow(/no primary key/);
    await expect(validate({ schemas: ['nowhere'] })).rejects.toMatchObject({ field: 'schemas' });
    await expect(validate({ text_columns: ['articles.nope'] })).rejects.toMatchObject({ field: 'text_columns' });
    await expect(validate({ cursor_column: 'published' })).rejects.toMatchObject({ field: 'cursor_column', message: expect.stringContaining('"inventory.items"') });
    await expect(validate({ text_search_config: 'klingon' })).rejects.toMatchObject({ field: 'text_search_config', message: expect.stringContaining('klingon') });

    const url = new URL(database.url);
    const unknownRole = { host: url.hostname, port: Number(url.port), database: url.pathname.slice(1), user: 'nobody_here', password: 'hunter2-secret' };
    const refused = await validate({}, unknownRole).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CredentialsRejectedError);
    expect((refused as Error).message).toMatch(/role "nobody_here" does not exist/);
    await expect(validate({}, { ...unknownRole, user: 'postgres', database: 'no_such_db' })).rejects.toThrow(/database "no_such_db" does not exist/);

    const unreachable = await validate({ connect_timeout_seconds: 2 }, { url: 'postgresql://postgres:hunter2-secret@127.0.0.1:1/x' }).catch((error: unknown) => error);
    expect((unreachable as Error).message).toMatch(/^Cannot reach the PostgreSQL server at 127\.0\.0\.1:1: .*ECONNREFUSED/);
    expect((unreachable as Error).message).not.toContain('hunter2');

    await expect(validate({}, { url: 'mysql://x@y/z' })).rejects.toBeInstanceOf(ValidationError);
    await expect(validate({}, { host: 'h' })).rejects.toMatchObject({ issues: [{ loc: ['authentication', 'credentials', 'database'] }, { loc: ['authentication', 'credentials', 'user'] }] });
  });

  test('with a cursor column, later runs read rows changed since and keep the others; deleted rows are not kept', async () => {
    const config = { tables: ['articles'], cursor_column: 'updated_at' };
    const first = await collect(config);
    expect(first).toMatchObject({ complete: true, cursor: { column: 'updated_at', tables: { 'public/articles': '2024-03-01 10:00:00.123456+00' } } });
    expect(first.entities).toHaveLength(3);

    await client.query(`UPDATE articles SET body = 'Rotate passwords with two active users.', updated_at = '2024-03-02 00:00:00+00' WHERE id = 1`);
    await client.query(`INSERT INTO articles (title, body, updated_at) VALUES ('Glacier hiking', 'Crampons and ropes.', '2024-03-03 00:00:00+00')`);
    await client.query('DELETE FROM articles WHERE id = 3');
    const second = await collect(config, first.cursor);
    expect(second.complete).toBe(true);
    expect(second.entities.map((entity) => entity.entityId)).toEqual(['public/articles/1', 'public/articles/4']);
    expect(second.entities[0]!.text).toContain('two active users');
    expect(second.keeps).toEqual(['public/articles/2']);
    expect(second.cursor).toEqual({ version: 1, column: 'updated_at', tables: { 'public/articles': '2024-03-03 00:00:00+00' } });

    // Without deletion detection the run is incremental proper: changed rows only.
    const third = await collect({ ...config, incremental_deletes: false }, second.cursor);
    expect(third).toMatchObject({ complete: false, keeps: [] });
    expect(third.entities.map((entity) => entity.entityId)).toEqual(['public/articles/4']); // the boundary row, read again

    // Another cursor column: the stored cursor says nothing about it, so the run is full.
    const other = await collect({ tables: ['articles'], cursor_column: 'id' }, second.cursor);
    expect(other.entities).toHaveLength(3);
    expect(other.cursor).toEqual({ version: 1, column: 'id', tables: { 'public/articles': '4' } });
  });

  test('federated search ranks rows with the database full-text search, shaped as sync shapes them', async () => {
    expect(isFederated(connector, { federated_search: true })).toBe(true);
    expect(isFederated(connector, { federated_search: false })).toBe(false);
    const context = connectionContext(connector, { config: { federated_search: true }, credentials });
    const hits = await connector.search!(context, { text: 'kayak', limit: 10 }, environment);
    expect(hits.map((hit) => hit.entity.entityId).sort()).toEqual(['inventory/items/a%2Fb/1', 'inventory/items/a%2Fb/2', 'public/articles/2']);
    expect(hits.every((hit) => hit.score > 0)).toBe(true);
    const synced = (await collect({})).entities.find((entity) => entity.entityId === 'public/articles/2');
    expect(hits.find((hit) => hit.entity.entityId === 'public/articles/2')!.entity).toEqual(synced);

    // websearch syntax: stemming ("passwords" → "password"), quoted phrases and negation.
    expect((await connector.search!(context, { text: 'password', limit: 10 }, environment)).map((hit) => hit.entity.entityId)).toEqual(['public/articles/1']);
    expect((await connector.search!(context, { text: 'kayak -folding', limit: 10 }, environment)).map((hit) => hit.entity.entityId)).toEqual(['public/articles/2']);
    expect(await connector.search!(context, { text: '"paddle folding"', limit: 10 }, environment)).toEqual([]);
    expect(await connector.search!(context, { text: 'kayak', limit: 1 }, environment)).toHaveLength(1);
    expect(await connector.search!(context, { text: 'the', limit: 5 }, environment)).toEqual([]);
  });

  test('a query slower than query_timeout_seconds fails the run with the server\'s reason', async () => {
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN; LOCK TABLE articles IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      await expect(collect({ tables: ['articles'], query_timeout_seconds: 1 })).rejects.toThrow(/statement timeout/);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  test('cancelling drops a query in flight at once, and a federated search past its budget', async () => {
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN; LOCK TABLE articles IN ACCESS EXCLUSIVE MODE');
      const controller = new AbortController();
      const started = Date.now();
      const blocked = collect({ tables: ['articles'] }, null, controller.signal);
      setTimeout(() => controller.abort(new Error('Cancelled')), 300);
      await expect(blocked).rejects.toThrow('Cancelled');
      const search = connector.search!(connectionContext(connector, { config: { tables: ['articles'] }, credentials, signal: AbortSignal.timeout(300) }), { text: 'kayak', limit: 5 }, environment);
      await expect(search).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(3000); // not the 60-second query timeout
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  test('a cancelled run stops and closes its connection', async () => {
    const controller = new AbortController();
    const run = connector.sync(syncContext(connector, { config: { batch_size: 1 }, credentials, signal: controller.signal }), environment);
    const iterator = run.items[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort(new Error('Cancelled'));
    await expect((async () => {
      for (;;) if ((await iterator.next()).done) return;
    })()).rejects.toThrow('Cancelled');
    // The backend leaves pg_stat_activity a moment after the socket closes.
    const open = async () => (await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'catchment' AND datname = current_database()`)).rows[0].n as number;
    for (let attempt = 0; attempt < 50 && (await open()) > 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await open()).toBe(0);
  });
});
