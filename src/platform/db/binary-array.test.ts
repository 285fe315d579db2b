import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { POSTGRES_ADMIN_URL } from '../../../test/support/harness.js';
import { createLogger } from '../logger.js';
import { int4Array, jsonbArray, textArray, timestamptzArray } from './binary-array.js';
import { type EmbeddedPostgres, openEmbeddedPostgres } from './embedded-postgres.js';

/** Values an array literal must quote, non-ASCII ones (2, 3 and 4 bytes of UTF-8) and SQL NULL. */
const TEXTS = ['a,b', '{braced}', 'say "hi"', 'back\\slash', 'NULL', ' padded ', '', 'naïve — 東京 🐋', "it's", null];
const JSON_TEXTS = ['[{"entityId":"f-1","name":"Folder \\"1\\", {root}"}]', '{"n":1.5,"list":[1,"two",null],"deep":{"x":"\\\\ é 🐋"}}', '[]', 'null', null];
const INTEGERS = [0, 1, -1, 2_147_483_647, -2_147_483_648];
/** To the millisecond, before 1970 and after 2285 (past a double's exact microseconds), at PostgreSQL's epoch, and NULL. */
const INSTANTS = [
  new Date('2024-02-29T23:59:58.123Z'),
  new Date('1969-12-31T23:59:59.999Z'),
  new Date('1900-01-01T00:00:00.001Z'),
  new Date('2000-01-01T00:00:00.000Z'),
  new Date('2999-12-31T23:59:59.999Z'),
  new Date('0001-01-01T00:00:00.000Z'),
  null,
];

describe.each(['embedded', 'servers'] as const)('arrays bound in binary read back as the driver\'s text form of them does (%s deployment)', (deployment) => {
  let embedded: EmbeddedPostgres | null = null;
  let directory = '';
  let client: pg.Client;
  beforeAll(async () => {
    if (deployment === 'embedded') {
      directory = mkdtempSync(path.join(tmpdir(), 'catchment-binary-array-'));
      embedded = await openEmbeddedPostgres({ dataDir: directory, logger: createLogger('silent'), join: false });
    }
    client = new pg.Client({ connectionString: embedded?.url ?? POSTGRES_ADMIN_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await embedded?.close();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  /** The server's reading of the binary array and of the driver's text form of the same values, and whether it finds them equal. */
  async function bothForms(type: string, binary: Buffer, values: unknown[]) {
    const { rows } = await client.query(`select $1::${type} as binary, $2::${type} as text, $1::${type} is not distinct from $2::${type} as same`, [binary, values]);
    return rows[0] as { binary: unknown; text: unknown; same: boolean };
  }

  test.each([
    ['text[]', textArray(TEXTS), TEXTS],
    ['jsonb[]', jsonbArray(JSON_TEXTS), JSON_TEXTS],
    ['int[]', int4Array(INTEGERS), INTEGERS],
    ['timestamptz[]', timestamptzArray(INSTANTS), INSTANTS],
    ['text[]', textArray([]), []],
  ])('%s', async (type, binary, values) => {
    const read = await bothForms(type, binary, values);
    expect(read.same).toBe(true);
    expect(read.binary).toEqual(read.text);
  });

  test('unnest pairs the elements of several arrays in order, as the entity upsert reads them', async () => {
    const { rows } = await client.query('select u.* from unnest($1::text[], $2::int[], $3::timestamptz[]) with ordinality as u(id, n, at, position) order by position', [
      textArray(['b', 'a', 'c']),
      int4Array([2, 1, 3]),
      timestamptzArray([INSTANTS[0]!, null, INSTANTS[4]!]),
    ]);
    expect(rows.map((row) => [row.id, row.n, row.at && new Date(row.at).toISOString()])).toEqual([
      ['b', 2, '2024-02-29T23:59:58.123Z'],
      ['a', 1, null],
      ['c', 3, '2999-12-31T23:59:59.999Z'],
    ]);
  });

  test('what the text form fails on fails in binary too: a NUL character, invalid JSON, a fraction, an invalid date, the wrong element type', async () => {
    await expect(client.query('select $1::text[]', [['a\u0000b']])).rejects.toThrow(/0x00/);
    await expect(client.query('select $1::text[]', [textArray(['a\u0000b'])])).rejects.toThrow(/0x00/);
    await expect(client.query('select $1::jsonb[]', [jsonbArray(['{"unclosed": '])])).rejects.toThrow(/json/i);
    expect(() => int4Array([2.5])).toThrow(/Not an int4/);
    expect(() => int4Array([2 ** 31])).toThrow(/out of range/);
    expect(() => timestamptzArray([new Date(Number.NaN)])).toThrow(/NaN/);
    await expect(client.query('select $1::int[]', [textArray(['1'])])).rejects.toThrow(/element type/);
  });
});
