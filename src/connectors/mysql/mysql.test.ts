import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { CredentialsRejectedError, isFederated, type SourceEntity, type SourceItem } from '../connector.js';
import type { SqlCursor } from '../sql/sql-settings.js';
import connector from './index.js';
import { createMysqlTestDatabase, type MysqlTestDatabase } from './test-database.js';
import { connectionContext, connectorEnvironment, syncContext } from '../connector-testing.js';

const environment = connectorEnvironment();

let database: MysqlTestDatabase;
let credentials: Record<string, unknown>;

beforeAll(async () => {
  database = await createMysqlTestDatabase();
  await database.admin.query(`
    CREATE TABLE notes (
      id INT AUTO_INCREMENT PRIMARY KEY, title VARCHAR(200) NOT NULL, body TEXT, amount DECIMAL(12, 4), big BIGINT, day DATE,
      happened DATETIME(6), updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), attachment BLOB, status ENUM('open', 'closed')
    );
    CREATE TABLE pairs (a VARCHAR(20), b INT, label VARCHAR(50), updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (a, b));
    CREATE TABLE nokey (x TEXT);
    SET time_zone = '+00:00';
    INSERT INTO notes (title, body, amount, big, day, happened, updated_at, attachment, status) VALUES
      ('Quarterly planning', 'Budget review for the platform team.', 1234.5678, 9007199254740993, '2024-02-29', '2024-03-01 08:30:00.250000', '2024-03-01 10:00:00.123456', X'CAFE', 'open'),
      ('Release notes', 'Version 2 ships the search rewrite.', NULL, 1, NULL, NULL, '2024-03-01 10:00:00', NULL, 'closed');
    INSERT INTO pairs (a, b, label) VALUES ('x', 2, 'second x'), ('x', 1, 'first x'), ('y', 1, 'only y'), ('w/z', 3, 'slashed');
    INSERT INTO nokey VALUES ('skipped');
  `);
  credentials = { host: '127.0.0.1', port: 3306, database: database.name, user: database.user.name, password: database.user.password };
});

afterAll(async () => {
  await database?.drop();
});

async function collect(config: Record<string, unknown>, cursor: SqlCursor | null = null) {
  const run = connector.sync(syncContext(connector, { config, credentials, cursor }), environment);
  const items: SourceItem[] = [];
  for await (const item of run.items) items.push(item);
  return { entities: items.filter((item): item is SourceEntity => 'entityId' in item), keeps: items.flatMap((item) => ('keep' in item ? [item.keep] : [])), complete: run.complete, cursor: run.nextCursor() };
}

describe('mysql connector (on MariaDB)', () => {
  test('a full run: rows of keyed tables with database → table breadcrumbs, key ids and exact, JSON-safe fields', async () => {
    const run = await collect({});
    expect(run.complete).toBe(true);
    const ids = run.entities.map((entity) => entity.entityId);
    const prefix = encodeURIComponent(database.name);
    expect(ids).toEqual([`${prefix}/notes/1`, `${prefix}/notes/2`, `${prefix}/pairs/w%2Fz/3`, `${prefix}/pairs/x/1`, `${prefix}/pairs/x/2`, `${prefix}/pairs/y/1`]);
    const [first] = run.entities;
    expect(first).toMatchObject({
      entityType: 'mysql_row',
      name: 'Quarterly planning',
      breadcrumbs: [
        { entityId: prefix, name: database.name, entityType: 'mysql_schema' },
        { entityId: `${prefix}/notes`, name: 'notes', entityType: 'mysql_table' },
      ],
      text: 'title: Quarterly planning\nbody: Budget review for the platform team.\nstatus: open',
      updatedAt: new Date('2024-03-01T10:00:00.123Z'),
      webUrl: `mysql://127.0.0.1:3306/${prefix}/${prefix}/notes/1`,
    });
    expect(first!.fields).toEqual({
      id: 1,
      title: 'Quarterly planning',
      body: 'Budget review for the platform team.',
      amount: '1234.5678',
      big: '9007199254740993',
      day: '2024-02-29',
      happened: '2024-03-01T08:30:00.250000',
      updated_at: '2024-03-01T10:00:00.123456Z',
      attachment: { byte_length: 2, sha256: createHash('sha256').update(Buffer.from([0xca, 0xfe])).digest('hex') },
      status: 'open',
    });
  });

  test('pages of one row walk composite keys exactly once, in key order', async () => {
    const paged = await collect({ tables: ['pairs'], batch_size: 1 });
    expect(paged.entities.map((entity) => entity.fields.label)).toEqual(['slashed', 'first x', 'second x', 'only y']);
  });

  test('validate: a wrong password, an unknown database and an unreachable server are refused with the server\'s words, never the password', async () => {
    const validate = async (config: Record<string, unknown>, given: Record<string, unknown> = credentials) => connector.validate(connectionContext(connector, { config, credentials: given }), environment);
    await expect(validate({ tables: ['notes'], cursor_column: 'updated_at' })).resolves.toBeUndefined();
    const wrong = await validate({}, { ...credentials, password: 'not-the-password-xyz' }).catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(CredentialsRejectedError);
    expect((wrong as Error).message).toMatch(/^MySQL refused the connection: Access denied for user/);
    expect((wrong as Error).message).not.toContain('not-the-password-xyz');
    await expect(validate({}, { ...credentials, database: 'catchment_nope' })).rejects.toThrow(/catchment_nope/);
    await expect(validate({ tables: ['nokey'] })).rejects.toMatchObject({ field: 'tables' });
    await expect(validate({ schemas: ['mysql'] })).rejects.toMatchObject({ field: 'schemas' }); // not granted to this user
    const viaUrl = `mysql://${database.user.name}:${encodeURIComponent('s3cret/pw?')}@127.0.0.1:1/${database.name}`;
    const unreachable = await validate({ connect_timeout_seconds: 2 }, { url: viaUrl }).catch((error: unknown) => error);
    expect((unreachable as Error).message).toMatch(/^Cannot reach the MySQL server at 127\.0\.0\.1:1: .*ECONNREFUSED/);
    expect((unreachable as Error).message).not.toMatch(/s3cret/);
    await expect(validate({}, { url: `mysql://${database.user.name}:${encodeURIComponent(database.user.password)}@127.0.0.1:3306/${database.name}` })).resolves.toBeUndefined();
    expect(connector.search).toBeUndefined();
    expect(isFederated(connector, { federated_search: true })).toBe(false);
  });

  test('a query slower than query_timeout_seconds fails the run', async () => {
    await database.admin.query('LOCK TABLES pairs WRITE');
    try {
      const started = Date.now();
      await expect(collect({ tables: ['pairs'], query_timeout_seconds: 1 })).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await database.admin.query('UNLOCK TABLES');
    }
  });

  test('a cursor column: changed rows as entities, the others kept, deleted ones gone; the cursor is the exact maximum', async () => {
    const config = { tables: ['notes'], cursor_column: 'updated_at' };
    const first = await collect(config);
    expect(first.cursor).toEqual({ version: 1, column: 'updated_at', tables: { [`${encodeURIComponent(database.name)}/notes`]: '2024-03-01 10:00:00.123456' } });
    await database.admin.query(`UPDATE notes SET body = 'Budget approved.', updated_at = '2024-03-05 00:00:00' WHERE id = 1`);
    await database.admin.query(`INSERT INTO notes (title, updated_at) VALUES ('Retro', '2024-03-06 00:00:00')`);
    await database.admin.query('DELETE FROM notes WHERE id = 2');
    const second = await collect(config, first.cursor);
    expect(second.complete).toBe(true);
    expect(second.entities.map((entity) => entity.fields.id)).toEqual([1, 3]);
    expect(second.entities[0]!.text).toContain('Budget approved.');
    expect(second.keeps).toEqual([]);
    const third = await collect({ ...config, incremental_deletes: false }, second.cursor);
    expect(third).toMatchObject({ complete: false, keeps: [] });
    expect(third.entities.map((entity) => entity.fields.id)).toEqual([3]);
  });
});
