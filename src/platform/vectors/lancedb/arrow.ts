import {
  type Data,
  Field,
  FixedSizeList,
  Float16,
  Float32,
  Int32,
  Int64,
  List,
  Precision,
  Schema,
  Table as ArrowTable,
  TimestampMillisecond,
  Utf8,
  makeData,
  makeVector,
} from 'apache-arrow';
import { isContainerType } from '../document-ranking.js';
import type { ChunkRecord } from '../vector-index.js';
import { chunkDetailsJson, epochMillis } from './chunk-details.js';
import { entityKeyOf } from './entity-key.js';

/** Arrow for the LanceDB chunk table: its schema, and chunk records as columns. */

const UTC = 'UTC';

/**
 * The columns of the current layout that tables made by an older version lack (see LanceDbTables):
 * those are still read and written in their own layout, with a column per display field instead.
 */
export const ENTITY_KEY_COLUMN = 'entity_key';
export const DETAILS_COLUMN = 'details';

/**
 * How a table stores its vectors: `half` (float16), what tables are made with, or `single` (float32),
 * what tables made before were (they keep it). Half precision halves the bytes a search reads and
 * the IVF index LanceDB's index cache holds. bench:search's 100,000 chunks, both tables with a
 * one-segment index, searches alternated in one process (load ~10), CPU per search: hybrid 11.8 →
 * 11.5 ms, semantic 5.4 → 5.0; the candidate search alone, depth 200: 40 IVF probes 3.3 → 3.1 ms, an
 * exact scan (tables under the index's threshold, selective filters) 52 → 19 ms. Cosine similarities
 * move by ~1e-4: recall@10 of the float32 exact scan 0.995 at 40 probes (0.996 with float32); SciFact
 * test nDCG@10 semantic 0.3593 → 0.3592, hybrid 0.6943 both; bench:docs postgresql-doc-15 dev
 * identical (semantic 0.537 / 0.334, hybrid 0.871 / 0.628).
 */
export type VectorPrecision = 'half' | 'single';

/**
 * What a chunk table holds, as the version that made it wrote it: `keyed`, ENTITY_KEY_COLUMN and
 * DETAILS_COLUMN (tables made before have neither, and a column per display field); `keywords`,
 * KEYWORDS_COLUMN, the one column keyword search matches (tables made before match `text` and `name`,
 * two full-text searches); `textInKeywords`, no `text` column: a chunk's text is read from
 * KEYWORDS_COLUMN (`textOfKeywords`; tables made before store it twice); its vectors' precision
 * (tables made before half precision: single).
 */
export interface ChunkLayout {
  keyed: boolean;
  keywords: boolean;
  textInKeywords: boolean;
  precision: VectorPrecision;
}
/** The layout new tables are made with. */
export const CURRENT_LAYOUT: ChunkLayout = { keyed: true, keywords: true, textInKeywords: true, precision: 'half' };
/** Tables made before the entity key and details columns. */
export const LEGACY_LAYOUT: ChunkLayout = { keyed: false, keywords: false, textInKeywords: false, precision: 'single' };

/**
 * The one column with a full-text index in the current layout: a chunk's name, a line break, and its
 * text. One BM25 search instead of one per column (the name's and the text's scores added): a
 * LanceDB query less per search. bench:search's 100,000 chunks, tables of both layouts searched
 * alternately in one process (load ~6–7), CPU per search: hybrid 11.2 → 10.3 ms, keyword 7.9 → 7.1;
 * bench lab, the keyword ranking alone, depth 200: 4.3–4.8 ms for the two searches, 3.9–4.0 for this
 * one (a MultiMatchQuery over both columns 10.4, a BooleanQuery of two matches 37). The sync builds
 * one full-text index instead of two. Quality, bench:docs test splits, recall@10 / MRR@10 (hybrid;
 * classic): postgresql-doc-15 0.848 / 0.593 → 0.881 / 0.685 (likely: a file name matched on its own, as a
 * short field, no longer outranks the pages that answer; 0.921 / 0.803 → 0.936 / 0.814), python-django-doc
 * 0.897 / 0.645 → 0.878 / 0.661 (0.944 / 0.859 → 0.937 / 0.856; classic on its faq questions 1.00 →
 * 0.88), git-doc 0.963 / 0.768 → 0.955 / 0.792 (0.978 / 0.883 → 0.978 / 0.882): MRR up on all
 * three, recall down on two. SciFact test nDCG@10 keyword 0.6924 → 0.6927, hybrid 0.6943 → 0.6938,
 * classic 0.7015 → 0.7018.
 */
export const KEYWORDS_COLUMN = 'keywords';

/**
 * A chunk's text from its KEYWORDS_COLUMN value (its name, a line break, its text), in tables that
 * keep it there alone (`textInKeywords`). Stored once, the text is written, encoded, compacted and
 * kept on disk once: it was most of a row's bytes twice over. SciFact's table (bench:quality, 8,857
 * chunks of abstracts): 31.3 → 21.3 MB on disk (its data files 28.7 → 18.7), nDCG@10 identical; a
 * 100,000-entity bench:sync moved within its noise on a shared 2-core host (112–149 against 125–155 µs
 * of CPU an entity, three runs each).
 */
export function textOfKeywords(name: string, keywords: string): string {
  return keywords.slice(name.length + 1);
}

/** A chunk's KEYWORDS_COLUMN value: its name, a line break, its text (`textOfKeywords` reads the text back). */
function keywordsOf(name: string, text: string): string {
  return `${name}\n${text}`;
}

/** What keyword search matches in a table of `layout`, one full-text search per column. */
export function fullTextColumns(layout: ChunkLayout): readonly string[] {
  return layout.keywords ? [KEYWORDS_COLUMN] : ['text', 'name'];
}

/**
 * The chunk table's columns (integer and timestamp types explicit: LanceDB would infer others from
 * values) in `layout` (see ChunkLayout); filtered fields keep columns of their own in every layout.
 */
export function chunkSchema(dimensions: number, layout: ChunkLayout = CURRENT_LAYOUT): Schema {
  const { keyed: current, precision } = layout;
  const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
  const texts = (name: string) => new Field(name, new List(new Field('item', new Utf8(), true)), false);
  const time = (name: string) => new Field(name, new TimestampMillisecond(UTC), true);
  return new Schema([
    text('chunk_id'),
    text('source_connection_id'),
    text('entity_id'),
    new Field('chunk_index', new Int32(), false),
    ...(current ? [new Field(ENTITY_KEY_COLUMN, new Int64(), false)] : []),
    text('name'),
    ...(layout.textInKeywords ? [] : [text('text')]),
    ...(layout.keywords ? [text(KEYWORDS_COLUMN)] : []),
    new Field('vector', new FixedSizeList(dimensions, new Field('item', precision === 'half' ? new Float16() : new Float32(), true)), false),
    text('entity_type'),
    text('source_name'),
    ...(current ? [] : [text('breadcrumbs')]),
    texts('breadcrumb_entity_ids'),
    texts('breadcrumb_names'),
    texts('breadcrumb_entity_types'),
    time('created_at'),
    time('updated_at'),
    ...(current ? [] : [text('web_url'), text('url', true)]),
    text('sync_id'),
    text('sync_job_id'),
    ...(current ? [text(DETAILS_COLUMN)] : [text('raw_source_fields'), text('access')]),
  ]);
}

/** Builds the Arrow columns of chunks directly (no row objects, no type inference), for a table of `schema` (any layout). */
export function chunksToArrow(chunks: ChunkRecord[], schema: Schema): ArrowTable {
  const vectorType = schema.fields.find((field) => field.name === 'vector')!.type as FixedSizeList<Float16 | Float32>;
  const column = (pick: (chunk: ChunkRecord) => string | null) => utf8Data(chunks.map(pick));
  // Built per column of the schema: a table of either layout takes only its own columns.
  const columns: Partial<Record<string, () => Data>> = {
    chunk_id: () => column((c) => c.chunkId),
    source_connection_id: () => column((c) => c.sourceConnectionId),
    entity_id: () => column((c) => c.entityId),
    chunk_index: () => makeData({ type: new Int32(), length: chunks.length, nullCount: 0, data: Int32Array.from(chunks, (c) => c.chunkIndex) }),
    name: () => column((c) => c.name),
    text: () => column((c) => c.text),
    [KEYWORDS_COLUMN]: () => column((c) => keywordsOf(c.name, c.text)),
    vector: () => vectorData(chunks, vectorType),
    entity_type: () => column((c) => c.entityType),
    source_name: () => column((c) => c.sourceName),
    breadcrumbs: () => column((c) => JSON.stringify(c.breadcrumbs)),
    breadcrumb_entity_ids: () => listData(chunks.map((c) => c.breadcrumbs.map((b) => b.entity_id))),
    breadcrumb_names: () => listData(chunks.map((c) => c.breadcrumbs.map((b) => b.name))),
    breadcrumb_entity_types: () => listData(chunks.map((c) => c.breadcrumbs.map((b) => b.entity_type))),
    created_at: () => timestampData(chunks.map((c) => c.createdAt)),
    updated_at: () => timestampData(chunks.map((c) => c.updatedAt)),
    web_url: () => column((c) => c.webUrl),
    url: () => column((c) => c.url),
    sync_id: () => column((c) => c.syncId),
    sync_job_id: () => column((c) => c.syncJobId),
    raw_source_fields: () => column((c) => JSON.stringify(c.rawSourceFields ?? {})),
    access: () => column((c) => JSON.stringify(c.access)),
    [DETAILS_COLUMN]: () => column(chunkDetailsJson),
    [ENTITY_KEY_COLUMN]: () => makeData({ type: new Int64(), length: chunks.length, nullCount: 0, data: BigInt64Array.from(chunks, (c) => entityKeyOf(c.sourceConnectionId, c.entityId, isContainerType(c.entityType))) }),
  };
  return new ArrowTable(schema, Object.fromEntries(schema.fields.map((field) => [field.name, makeVector(columns[field.name]!())])));
}

/**
 * The precision of a vector column's items. Read from the type's fields, not its class: a schema
 * LanceDB returns is built by its own copy of Arrow's classes.
 */
export function precisionOf(vectorType: FixedSizeList): VectorPrecision {
  return (vectorType.children[0]!.type as { precision?: Precision }).precision === Precision.HALF ? 'half' : 'single';
}

/** The chunks' vectors as a column of `type`: float16 (rounded to nearest) or float32 items. */
function vectorData(chunks: ChunkRecord[], type: FixedSizeList<Float16 | Float32>): Data<FixedSizeList<Float16 | Float32>> {
  const dimensions = type.listSize;
  const half = precisionOf(type) === 'half';
  const values = half ? new Float16Array(chunks.length * dimensions) : new Float32Array(chunks.length * dimensions);
  chunks.forEach((chunk, i) => values.set(chunk.vector, i * dimensions));
  const child = half
    ? makeData({ type: new Float16(), length: values.length, nullCount: 0, data: new Uint16Array(values.buffer, values.byteOffset, values.length) })
    : makeData({ type: new Float32(), length: values.length, nullCount: 0, data: values as Float32Array });
  return makeData({ type, length: chunks.length, nullCount: 0, child });
}

/**
 * A UTF-8 column. Values all ASCII (ids, hashes, most names) are joined and encoded in one call, their
 * offsets being their lengths: two native calls a value (its byte length, then its write) took ~85 µs
 * for 2,000 short ids against ~35 (node micro-benchmark). Any other column is encoded value by value:
 * joined, a lone surrogate ending one value and another starting the next would encode as one pair.
 */
function utf8Data(values: readonly (string | null)[]): Data<Utf8> {
  const offsets = new Int32Array(values.length + 1);
  let nulls = 0;
  let chars = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) nulls++;
    else chars += value.length;
    offsets[i + 1] = chars;
  }
  // Joined, they could pass V8's longest string (2^29 - 24 characters): encoded value by value then.
  if (chars > 2 ** 28) return utf8Column(values, encodeEach(values, offsets), offsets, nulls);
  const joined = values.join(''); // null and undefined join as nothing
  // One byte a character: every character is ASCII, and each value's bytes are its characters.
  const buffer = Buffer.from(joined, 'utf8');
  return utf8Column(values, buffer.length === joined.length ? buffer : encodeEach(values, offsets), offsets, nulls);
}

function utf8Column(values: readonly (string | null)[], buffer: Buffer, offsets: Int32Array, nulls: number): Data<Utf8> {
  return makeData({
    type: new Utf8(),
    length: values.length,
    nullCount: nulls,
    nullBitmap: nulls > 0 ? validity(values.map((value) => value !== null && value !== undefined)) : null,
    valueOffsets: offsets,
    data: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length),
  });
}

/** The values' UTF-8 bytes, value by value, with `offsets` rewritten in bytes. */
function encodeEach(values: readonly (string | null)[], offsets: Int32Array): Buffer {
  let bytes = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value !== null && value !== undefined) bytes += Buffer.byteLength(value, 'utf8');
    if (bytes > 0x7fffffff) throw new Error('An add of more than 2 GiB of text in one column: pass fewer chunks per add');
    offsets[i + 1] = bytes;
  }
  const buffer = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value !== null && value !== undefined) buffer.write(value, offsets[i]!, 'utf8');
  }
  return buffer;
}

function listData(values: readonly string[][]): Data<List<Utf8>> {
  const offsets = new Int32Array(values.length + 1);
  values.forEach((list, i) => (offsets[i + 1] = offsets[i]! + list.length));
  return makeData({
    type: new List(new Field('item', new Utf8(), true)),
    length: values.length,
    nullCount: 0,
    valueOffsets: offsets,
    child: utf8Data(values.flat()),
  });
}

function timestampData(values: readonly (Date | null)[]): Data<TimestampMillisecond> {
  const millis = values.map(epochMillis);
  const nulls = millis.filter((value) => value === null).length;
  return makeData({
    type: new TimestampMillisecond(UTC),
    length: values.length,
    nullCount: nulls,
    nullBitmap: nulls > 0 ? validity(millis.map((value) => value !== null)) : null,
    data: BigInt64Array.from(millis, (value) => BigInt(value ?? 0)),
  });
}

function validity(valid: readonly boolean[]): Uint8Array {
  const bitmap = new Uint8Array(Math.ceil(valid.length / 8));
  valid.forEach((ok, i) => {
    if (ok) bitmap[i >> 3]! |= 1 << (i & 7);
  });
  return bitmap;
}
