import type * as lancedb from '@lancedb/lancedb';
import { DataType, Precision, type Table as ArrowTable, tableFromIPC, type Vector as ArrowVector } from 'apache-arrow';
import { entityOfChunkId, type ScoredChunk } from '../vector-index.js';
import { DETAILS_COLUMN, KEYWORDS_COLUMN, textOfKeywords } from './arrow.js';
import { chunkOfDetails, dateOfEpochMillis } from './chunk-details.js';
import { type DecodedBatch, decodeIpcBatch } from './ipc-batch.js';

/** A row of a query's result: the columns it selected (and `_rowid`, `_distance`, `_score` when asked). */
export type Row = Record<string, unknown>;

/**
 * A query's result as plain objects, built column by column. LanceDB's own `toArray()` gives Arrow
 * row proxies, whose every property read walks Arrow's visitors, and rankings read a candidate's id
 * and score many times (sorting, fusion): main-thread CPU profile of 600 hybrid searches at 100,000
 * chunks, about 1.3 ms per search in proxy reads before, 0.65 ms in this function after. Each batch
 * is read by `decodeIpcBatch` (apache-arrow only for what that does not read: its `tableFromIPC`
 * cost ~0.1–0.3 ms of the main thread per batch against ~0.01), and columns without nulls without
 * Arrow's per-value visitors (`columnValues`).
 *
 * `expectedRows`, for a query that cannot return more (a search's limit, a take's row ids): batches
 * are read until they hold that many. Reading the native stream to its end costs one more call across
 * to LanceDB's threads and back, after the last batch, for each of a search's three queries
 * (bench:search's 100,000 chunks, a hybrid search, interleaved in one process on a loaded 2-core host:
 * p50 −0.3 ms, CPU −0.5 ms; results identical).
 */
export async function queryRows(query: LanceQuery, expectedRows = Number.POSITIVE_INFINITY): Promise<Row[]> {
  const batches = await nativeBatches(query);
  const rows: Row[] = [];
  for (let buffer = await batches.next(); buffer; buffer = rows.length >= expectedRows ? null : await batches.next()) {
    const decoded = decodeIpcBatch(buffer);
    if (decoded) addDecodedRows(rows, decoded);
    else addArrowRows(rows, tableFromIPC(buffer));
  }
  return rows;
}

/** The LanceDB queries queryRows reads: searches, scans and takes. */
export type LanceQuery = lancedb.Query | lancedb.VectorQuery | lancedb.TakeQuery;

/** A query's native stream: each `next()` one batch as an Arrow IPC file, null at its end. */
export interface NativeBatchStream {
  next(): Promise<Buffer | null>;
}

/**
 * A query as what LanceDB's own iterators call on it, `QueryBase.nativeExecute` (public at run time,
 * `protected` in its type declarations); tests wrap it to watch or delay a query's reads.
 */
export function nativeExecutable(query: LanceQuery): { nativeExecute: () => Promise<NativeBatchStream> } {
  const executable = query as unknown as { nativeExecute?: () => Promise<NativeBatchStream> };
  if (typeof executable.nativeExecute !== 'function') throw new Error('This LanceDB version has no QueryBase.nativeExecute: queryRows needs it');
  return executable as { nativeExecute: () => Promise<NativeBatchStream> };
}

/** A query's native stream of batches. */
export function nativeBatches(query: LanceQuery): Promise<NativeBatchStream> {
  return nativeExecutable(query).nativeExecute();
}

/** Appends the rows of a batch decodeIpcBatch read. */
function addDecodedRows(rows: Row[], batch: DecodedBatch): void {
  const start = rows.length;
  for (let i = 0; i < batch.numRows; i++) rows.push({});
  for (const [name, values] of batch.columns) for (let i = 0; i < batch.numRows; i++) rows[start + i]![name] = values[i];
}

/** Appends the rows of a batch apache-arrow read. */
function addArrowRows(rows: Row[], batch: ArrowTable): void {
  const start = rows.length;
  for (let i = 0; i < batch.numRows; i++) rows.push({});
  for (const field of batch.schema.fields) {
    const column = batch.getChild(field.name)!;
    const values = columnValues(column);
    if (values) {
      for (let i = 0; i < batch.numRows; i++) rows[start + i]![field.name] = values[i];
    } else {
      let i = start;
      for (const value of column) rows[i++]![field.name] = value;
    }
  }
}

/**
 * A column's values straight from its buffers, for the types rankings read (utf8 ids and numbers:
 * the same values Arrow's iterator gives, strings and numbers, bigints for 64-bit integers), when it
 * has no nulls; null for any other column (read through Arrow's iterator). About half the CPU of the
 * iterator for a search's candidates.
 */
function columnValues(column: ArrowVector): ArrayLike<unknown> | null {
  if (column.nullCount > 0) return null;
  if (DataType.isInt(column.type) || DataType.isFloat(column.type)) return DataType.isFloat(column.type) && column.type.precision === Precision.HALF ? null : column.toArray();
  if (!DataType.isUtf8(column.type)) return null;
  const values: string[] = [];
  for (const data of column.data) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < data.length; i++) values.push(text.toString('utf8', offsets[i]!, offsets[i + 1]!));
  }
  return values;
}

/** What a table's results read, and how a row of those columns is the chunk it stores. */
export interface ResultColumns {
  columns: readonly string[];
  toChunk: (row: Row) => ScoredChunk['chunk'];
}

/**
 * The current layout: name, KEYWORDS_COLUMN (name and text, see `textOfKeywords`) and DETAILS_COLUMN
 * (the rest of the chunk, as JSON). A take of 10 rows by row id at 100,000 chunks costs about 0.25 ms
 * per column read.
 */
export const KEYWORDS_DETAILS_RESULT: ResultColumns = {
  columns: ['name', KEYWORDS_COLUMN, DETAILS_COLUMN],
  toChunk: (row) => {
    const name = String(row.name);
    return chunkOfDetails(name, textOfKeywords(name, String(row[KEYWORDS_COLUMN])), String(row[DETAILS_COLUMN]));
  },
};

/** Tables made with the details column before the text was kept in KEYWORDS_COLUMN alone: its own `text` column. */
export const DETAILS_RESULT: ResultColumns = {
  columns: ['name', 'text', DETAILS_COLUMN],
  toChunk: (row) => chunkOfDetails(String(row.name), String(row.text), String(row[DETAILS_COLUMN])),
};

/**
 * Tables made before the current layout: everything but the vector, the list columns filters read,
 * and the entity id and chunk index, which the chunk id holds (`entityOfChunkId`).
 */
export const LEGACY_RESULT: ResultColumns = {
  columns: [
    'chunk_id',
    'source_connection_id',
    'name',
    'text',
    'entity_type',
    'source_name',
    'breadcrumbs',
    'created_at',
    'updated_at',
    'web_url',
    'url',
    'sync_id',
    'sync_job_id',
    'raw_source_fields',
    'access',
  ],
  toChunk: legacyChunk,
};

/**
 * The result columns of a page's chunks, by row id. Read by row id (a direct take; a predicate on
 * another column scans it: `chunk_id IN (…)` 9 ms against 1.4 ms at 100,000 rows; `takeRowIds` is a
 * little cheaper than a `_rowid IN (…)` predicate). Row ids address the version the ranking read: a
 * compaction by another process in between retires them, and a retired row id reads nothing (it never
 * names another row), so the map may lack some.
 */
export async function pageRows(table: lancedb.Table, result: ResultColumns, rowIds: readonly bigint[]): Promise<Map<bigint, Row>> {
  if (rowIds.length === 0) return new Map();
  const taken = await queryRows(table.takeRowIds([...rowIds]).select([...result.columns]).withRowId(), rowIds.length);
  return new Map(taken.map((row) => [row._rowid as bigint, row]));
}

/** A row of LEGACY_RESULT's columns as the chunk it stores. */
function legacyChunk(row: Row): ScoredChunk['chunk'] {
  const chunkId = String(row.chunk_id);
  const sourceConnectionId = String(row.source_connection_id);
  return {
    chunkId,
    sourceConnectionId,
    ...entityOfChunkId(chunkId, sourceConnectionId),
    name: String(row.name),
    text: String(row.text),
    entityType: String(row.entity_type),
    sourceName: String(row.source_name),
    breadcrumbs: JSON.parse(String(row.breadcrumbs)) as ScoredChunk['chunk']['breadcrumbs'],
    createdAt: dateOfEpochMillis(row.created_at),
    updatedAt: dateOfEpochMillis(row.updated_at),
    webUrl: String(row.web_url),
    url: row.url === null || row.url === undefined ? null : String(row.url),
    syncId: String(row.sync_id),
    syncJobId: String(row.sync_job_id),
    rawSourceFields: JSON.parse(String(row.raw_source_fields)) as Record<string, unknown>,
    access: JSON.parse(String(row.access)) as ScoredChunk['chunk']['access'],
  };
}
