import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  Field,
  Float16,
  Float32,
  Int32,
  Int64,
  List,
  makeTable,
  RecordBatch,
  Schema,
  Table,
  tableFromArrays,
  tableFromIPC,
  tableToIPC,
  Uint64,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { decodeIpcBatch } from './ipc-batch.js';
import { type LanceQuery, nativeBatches } from './rows.js';

/** What apache-arrow reads of the same file, column by column: the reference the decoder must match. */
function arrowColumns(file: Uint8Array): Map<string, unknown[]> {
  const table = tableFromIPC(file);
  return new Map(table.schema.fields.map((field) => [field.name, [...table.getChild(field.name)!]]));
}

function decodedColumns(file: Uint8Array): Map<string, unknown[]> | null {
  const batch = decodeIpcBatch(file);
  return batch ? new Map([...batch.columns].map(([name, values]) => [name, Array.from(values)])) : null;
}

describe('decodeIpcBatch', () => {
  test('reads integers of every width, floats and strings, with their nulls, as apache-arrow does', () => {
    const table = makeTable({
      i8: Int8Array.from([1, -2, 3]),
      i16: Int16Array.from([300, -300, 0]),
      i32: Int32Array.from([70000, -1, 2]),
      f32: Float32Array.from([0.5, -1.25, 3.1]),
      f64: Float64Array.from([Math.PI, -0, 1e300]),
    });
    const withNulls = new Table({
      ...Object.fromEntries(table.schema.names.map((name) => [name, table.getChild(name)!])),
      i64: vectorFromArray([1n, null, -(2n ** 62n)], new Int64()),
      u64: vectorFromArray([2n ** 63n + 5n, 0n, null], new Uint64()),
      text: vectorFromArray(['héllo', null, ''], new Utf8()),
    });
    const file = tableToIPC(withNulls, 'file');
    const decoded = decodedColumns(file);
    expect(decoded).not.toBeNull();
    expect(decoded).toEqual(arrowColumns(file));
    expect(decoded!.get('text')).toEqual(['héllo', null, '']);
    expect(decoded!.get('u64')).toEqual([2n ** 63n + 5n, 0n, null]);
    expect(decodeIpcBatch(file)!.numRows).toBe(3);
  });

  test('reads a batch of no rows', () => {
    const empty = new Table({ score: vectorFromArray([], new Float32()), name: vectorFromArray([], new Utf8()) });
    const file = tableToIPC(empty, 'file');
    expect(tableFromIPC(file).batches).toHaveLength(1);
    expect(decodeIpcBatch(file)).toEqual({ numRows: 0, columns: new Map([['score', []], ['name', []]]) });
  });

  test('leaves to apache-arrow what it does not read: other types, several batches, a stream or anything else', () => {
    const half = new Table({ h: vectorFromArray([1, 2], new Float16()) });
    expect(decodeIpcBatch(tableToIPC(half, 'file'))).toBeNull();
    const list = new Table({ l: vectorFromArray([[1], [2, 3]], new List(new Field('item', new Int32()))) });
    expect(decodeIpcBatch(tableToIPC(list, 'file'))).toBeNull();
    const dictionary = tableFromArrays({ d: ['a', 'b', 'a'] }); // apache-arrow makes string arrays dictionary-encoded
    expect(decodeIpcBatch(tableToIPC(dictionary, 'file'))).toBeNull();
    const one = tableFromArrays({ n: Int32Array.from([1, 2]) });
    const twoBatches = new Table([...one.batches, new RecordBatch(new Schema(one.schema.fields), one.batches[0]!.data)]);
    expect(twoBatches.batches).toHaveLength(2);
    expect(decodeIpcBatch(tableToIPC(twoBatches, 'file'))).toBeNull();
    expect(decodeIpcBatch(tableToIPC(one, 'stream'))).toBeNull();
    expect(decodeIpcBatch(new Uint8Array(0))).toBeNull();
    expect(decodeIpcBatch(Buffer.from('ARROW1 but nothing else ARROW1'))).toBeNull();
  });

  test('a file whose buffers do not add up is left to apache-arrow, never misread', () => {
    // One Int32 column of three rows: its buffers are { validity: offset 0, length 0 } and { data: 0, 16 } (12 bytes, padded).
    const file = tableToIPC(new Table({ n: vectorFromArray([16, 17, 18], new Int32()) }), 'file');
    expect(decodedColumns(file)).toEqual(new Map([['n', [16, 17, 18]]]));
    const buffers = Buffer.concat([Buffer.alloc(24), Buffer.from([16, 0, 0, 0, 0, 0, 0, 0])]);
    const at = Buffer.from(file).indexOf(buffers);
    expect(at).toBeGreaterThan(0);
    const outside = Uint8Array.from(file);
    outside[at + 16] = 64; // the data buffer's offset, past the 16 bytes of the body
    expect(decodeIpcBatch(outside)).toBeNull();
    const short = Uint8Array.from(file);
    short[at + 24] = 8; // the data buffer's length: two values' worth for three rows
    expect(decodeIpcBatch(short)).toBeNull();

    // Strings 'a', 'bc': offsets 0, 1, 3; made to go back (0, 3, 1) or past the characters (0, 1, 64).
    const text = tableToIPC(new Table({ s: vectorFromArray(['a', 'bc'], new Utf8()) }), 'file');
    expect(decodedColumns(text)).toEqual(new Map([['s', ['a', 'bc']]]));
    const offsets = Buffer.from([0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0]);
    const first = Buffer.from(text).indexOf(offsets);
    expect(first).toBeGreaterThan(0);
    const back = Uint8Array.from(text);
    back[first + 4] = 3;
    back[first + 8] = 1;
    expect(decodeIpcBatch(back)).toBeNull();
    const past = Uint8Array.from(text);
    past[first + 8] = 64;
    expect(decodeIpcBatch(past)).toBeNull();
  });

  describe('LanceDB’s own batches', () => {
    let directory: string;
    let table: lancedb.Table;
    beforeAll(async () => {
      directory = mkdtempSync(path.join(tmpdir(), 'catchment-ipc-batch-'));
      const db = await lancedb.connect(directory);
      table = await db.createTable('rows', [
        { id: 'a', key: 10n, score: 0.25, text: 'first row', vector: [1, 0, 0] },
        { id: 'b', key: -3n, score: 1.5, text: 'second row, ünïcode', vector: [0, 1, 0] },
        { id: 'c', key: 0n, score: -2, text: '', vector: [0, 0, 1] },
        { id: 'd', key: 7n, score: null, text: null, vector: [1, 1, 0] },
      ]);
      await table.createIndex('text', { config: lancedb.Index.fts() });
    });
    afterAll(async () => {
      table.close();
      rmSync(directory, { recursive: true, force: true });
    });

    /** The IPC files of a query's native stream (what queryRows reads). */
    async function batchesOf(query: LanceQuery): Promise<Buffer[]> {
      const stream = await nativeBatches(query);
      const files: Buffer[] = [];
      for (let file = await stream.next(); file; file = await stream.next()) files.push(file);
      return files;
    }

    test('a scan, a vector search, a keyword search and a take read as apache-arrow reads them', async () => {
      const queries = [
        table.query().select(['id', 'key', 'score', 'text']).withRowId(),
        table.vectorSearch([1, 0, 0]).distanceType('cosine').select(['id', '_distance']).withRowId().limit(4),
        table.query().fullTextSearch('row').select(['_score', 'text']).withRowId().limit(3),
        table.takeOffsets([2, 0]).select(['text', 'key']).withRowId(),
      ];
      const [scan] = await batchesOf(queries[0]!);
      expect(decodedColumns(scan!)!.get('text')).toEqual(['first row', 'second row, ünïcode', '', null]);
      expect(decodedColumns(scan!)!.get('score')).toEqual([0.25, 1.5, -2, null]);
      for (const query of queries) {
        const files = await batchesOf(query);
        expect(files.length).toBeGreaterThan(0);
        for (const file of files) {
          expect(decodedColumns(file)).not.toBeNull();
          expect(decodedColumns(file)).toEqual(arrowColumns(file));
        }
      }
    });

    test('a batch holding the vector column (half or single floats in a fixed-size list) is left to apache-arrow', async () => {
      const [file] = await batchesOf(table.query().select(['id', 'vector']).limit(1));
      expect(decodeIpcBatch(file!)).toBeNull();
      expect(tableFromIPC(file!).numRows).toBe(1);
    });
  });
});
