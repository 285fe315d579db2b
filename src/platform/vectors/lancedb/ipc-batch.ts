/**
 * A reader of the record batches LanceDB's native query iterator hands over, each an Arrow IPC file
 * holding one batch, for the column types searches read (integers, floats, UTF-8 strings), straight
 * from the file's buffers. apache-arrow's `tableFromIPC`, which LanceDB's own iterator calls on each
 * batch, decodes the footer, the schema and every column through its visitors: on a 2-core host about
 * 0.1–0.3 ms of the main thread per batch, three or four batches a hybrid search, against ~0.01 here.
 * A file holding any other type, compressed buffers, dictionaries, more than one batch, or anything
 * that does not add up (a buffer outside the batch's body, a column of another length) is not read
 * here (null): the caller reads it with apache-arrow, which says what is wrong with it.
 *
 * Layout (Arrow columnar format, IPC file): "ARROW1" and padding, the messages of the stream (the
 * schema, then the batch: each a continuation marker 0xFFFFFFFF, the length of its metadata, a
 * FlatBuffers `Message` and its body), then the footer (a FlatBuffers `Footer`: the schema and where
 * each batch's message starts), its length as an int32, and "ARROW1". The footer is read first.
 */

/** A batch's columns by name, each as plain values (bigint for 64-bit integers, null where null), and its rows. */
export interface DecodedBatch {
  numRows: number;
  columns: Map<string, ArrayLike<unknown>>;
}

const MAGIC = 'ARROW1';
const CONTINUATION = 0xffffffff;
/** The message header type of a record batch (Arrow's MessageHeader union). */
const RECORD_BATCH = 3;
/** Type union members read here (Arrow's Type union). */
const INT = 2;
const FLOATING_POINT = 3;
const UTF8 = 5;
/** FloatingPoint precisions read here (HALF, 0, is not). */
const SINGLE = 1;
const DOUBLE = 2;
/** Schema.endianness: Big. */
const BIG_ENDIAN = 1;

/**
 * A column this reader reads: UTF-8 (validity, int32 offsets, characters), or numbers (validity,
 * values of `width` bytes, each read by `read`).
 */
type Column = { name: string; kind: 'utf8' } | { name: string; kind: 'number'; width: number; read: (view: DataView, at: number) => unknown };

/** Reads FlatBuffers tables of one buffer: the few accessors Arrow's messages need. */
class FlatBuffer {
  constructor(private readonly view: DataView) {}

  root(at: number): number {
    return at + this.view.getUint32(at, true);
  }

  /** The position of a table's field `index`, or 0 when the field is absent. */
  field(table: number, index: number): number {
    const vtable = table - this.view.getInt32(table, true);
    const slot = 4 + 2 * index;
    if (slot >= this.view.getUint16(vtable, true)) return 0;
    const offset = this.view.getUint16(vtable + slot, true);
    return offset === 0 ? 0 : table + offset;
  }

  /** The table (or vector, or string) a field refers to; 0 when absent. */
  reference(table: number, index: number): number {
    const at = this.field(table, index);
    return at === 0 ? 0 : at + this.view.getUint32(at, true);
  }

  uint8(table: number, index: number, fallback: number): number {
    const at = this.field(table, index);
    return at === 0 ? fallback : this.view.getUint8(at);
  }

  int16(table: number, index: number, fallback: number): number {
    const at = this.field(table, index);
    return at === 0 ? fallback : this.view.getInt16(at, true);
  }

  int32(table: number, index: number, fallback: number): number {
    const at = this.field(table, index);
    return at === 0 ? fallback : this.view.getInt32(at, true);
  }

  /** A table's int64 field as a number (0 when absent). */
  int64(table: number, index: number): number {
    const at = this.field(table, index);
    return at === 0 ? 0 : this.int64At(at);
  }

  /** The int64 at a position (inside structs: Block, FieldNode, Buffer) as a number. */
  int64At(at: number): number {
    return Number(this.view.getBigInt64(at, true));
  }

  /** A vector's length and the position of its first element. */
  vector(at: number): { length: number; start: number } {
    return at === 0 ? { length: 0, start: 0 } : { length: this.view.getUint32(at, true), start: at + 4 };
  }

  string(at: number): string {
    const { length, start } = this.vector(at);
    if (start + length > this.view.byteLength) throw new RangeError('string outside the file');
    return Buffer.from(this.view.buffer, this.view.byteOffset + start, length).toString('utf8');
  }

  /** The i-th table of a vector of tables. */
  tableAt(start: number, i: number): number {
    const at = start + 4 * i;
    return at + this.view.getUint32(at, true);
  }
}

/**
 * One batch of an IPC file as plain columns, or null when it holds what this reader does not read.
 * Throws on a big-endian file: neither this reader nor apache-arrow reads one (LanceDB writes little-endian).
 */
export function decodeIpcBatch(file: Uint8Array): DecodedBatch | null {
  try {
    return decodeFile(file);
  } catch (error) {
    // Offsets pointing outside the file: not an IPC file this reader understands; apache-arrow says why.
    if (error instanceof RangeError) return null;
    throw error;
  }
}

function decodeFile(file: Uint8Array): DecodedBatch | null {
  const size = file.byteLength;
  if (size < 18 || !magicAt(file, 0) || !magicAt(file, size - 6)) return null;
  const view = new DataView(file.buffer, file.byteOffset, size);
  const fb = new FlatBuffer(view);
  const footer = fb.root(size - 10 - view.getInt32(size - 10, true));
  if (fb.vector(fb.reference(footer, 2)).length > 0) return null; // dictionaries
  const blocks = fb.vector(fb.reference(footer, 3));
  const columns = schemaColumns(fb, fb.reference(footer, 1));
  if (blocks.length !== 1 || !columns) return null;
  // A Block is { offset: int64, metaDataLength: int32, (padding), bodyLength: int64 }: where the batch's message
  // starts (a continuation marker, the metadata's length, the Message) and where its body does.
  const offset = fb.int64At(blocks.start);
  const metadataLength = view.getInt32(blocks.start + 8, true);
  const bodyLength = fb.int64At(blocks.start + 16);
  const prefix = view.getUint32(offset, true) === CONTINUATION ? 8 : 4;
  // The message's own length prefix must agree with the footer's account of it, and the body lie inside the file.
  if (prefix + view.getInt32(offset + prefix - 4, true) !== metadataLength || offset + metadataLength + bodyLength > size) return null;
  const message = fb.root(offset + prefix);
  if (fb.uint8(message, 1, 0) !== RECORD_BATCH) return null;
  return recordBatch(fb, view, fb.reference(message, 2), { start: offset + metadataLength, length: bodyLength }, columns);
}

/** Whether the file holds Arrow's magic at `at`. */
function magicAt(file: Uint8Array, at: number): boolean {
  for (let i = 0; i < MAGIC.length; i++) if (file[at + i] !== MAGIC.charCodeAt(i)) return false;
  return true;
}

/** The schema's columns, or null when one is of a type (or has children, or a name met before) this reader does not read. */
function schemaColumns(fb: FlatBuffer, schema: number): Column[] | null {
  if (fb.int16(schema, 0, 0) === BIG_ENDIAN) throw new Error('A big-endian Arrow IPC file: not readable here');
  const { length, start } = fb.vector(fb.reference(schema, 1));
  const columns: Column[] = [];
  const names = new Set<string>();
  for (let i = 0; i < length; i++) {
    const field = fb.tableAt(start, i);
    if (fb.reference(field, 4) !== 0 || fb.vector(fb.reference(field, 5)).length > 0) return null; // dictionary-encoded, nested
    const name = fb.string(fb.reference(field, 0));
    if (names.has(name)) return null; // rows are keyed by name
    names.add(name);
    const type = fb.uint8(field, 2, 0);
    const typeTable = fb.reference(field, 3);
    const column =
      type === INT
        ? integerColumn(name, fb.int32(typeTable, 0, 0), fb.uint8(typeTable, 1, 0) !== 0)
        : type === FLOATING_POINT
          ? floatColumn(name, fb.int16(typeTable, 0, 0))
          : type === UTF8
            ? ({ name, kind: 'utf8' } satisfies Column)
            : null;
    if (!column) return null;
    columns.push(column);
  }
  return columns;
}

/** An Int column of `bits` bits; null for widths Arrow does not define. */
function integerColumn(name: string, bits: number, signed: boolean): Column | null {
  const readers: Partial<Record<number, (view: DataView, at: number) => unknown>> = signed
    ? { 8: (view, at) => view.getInt8(at), 16: (view, at) => view.getInt16(at, true), 32: (view, at) => view.getInt32(at, true), 64: (view, at) => view.getBigInt64(at, true) }
    : { 8: (view, at) => view.getUint8(at), 16: (view, at) => view.getUint16(at, true), 32: (view, at) => view.getUint32(at, true), 64: (view, at) => view.getBigUint64(at, true) };
  const read = readers[bits];
  return read ? { name, kind: 'number', width: bits / 8, read } : null;
}

/** A FloatingPoint column of single or double precision; null for half (apache-arrow reads those). */
function floatColumn(name: string, precision: number): Column | null {
  if (precision === SINGLE) return { name, kind: 'number', width: 4, read: (view, at) => view.getFloat32(at, true) };
  if (precision === DOUBLE) return { name, kind: 'number', width: 8, read: (view, at) => view.getFloat64(at, true) };
  return null;
}

/**
 * The batch's columns, or null when its nodes and buffers do not add up: a column of another length
 * than the batch, a buffer outside the body or too short for its rows, UTF-8 offsets that go back or
 * past their characters.
 */
function recordBatch(fb: FlatBuffer, view: DataView, batch: number, body: { start: number; length: number }, columns: Column[]): DecodedBatch | null {
  if (fb.reference(batch, 3) !== 0) return null; // compressed buffers
  const numRows = fb.int64(batch, 0);
  const nodes = fb.vector(fb.reference(batch, 1));
  const buffers = fb.vector(fb.reference(batch, 2));
  const wanted = columns.reduce((count, column) => count + (column.kind === 'utf8' ? 3 : 2), 0);
  if (nodes.length !== columns.length || buffers.length !== wanted) return null;
  // Each FieldNode is { length: int64, null_count: int64 }; each Buffer { offset: int64, length: int64 }, in the body.
  let next = 0;
  /** The next buffer, where it starts in the file and its length, when it lies in the body and holds `needed` bytes. */
  const buffer = (needed: number) => {
    const at = buffers.start + 16 * next++;
    const offset = fb.int64At(at);
    const length = fb.int64At(at + 8);
    return offset >= 0 && length >= needed && offset + length <= body.length ? { start: body.start + offset, length } : null;
  };
  const decoded = new Map<string, ArrayLike<unknown>>();
  for (let f = 0; f < columns.length; f++) {
    const column = columns[f]!;
    if (fb.int64At(nodes.start + 16 * f) !== numRows) return null;
    const nulls = fb.int64At(nodes.start + 16 * f + 8);
    // A validity buffer may be left empty when no value is null.
    const validity = buffer(nulls === 0 ? 0 : Math.ceil(numRows / 8));
    const data = buffer(column.kind === 'utf8' ? 4 * (numRows + 1) : column.width * numRows);
    if (validity === null || data === null) return null;
    const isNull = nulls === 0 ? null : (row: number) => (view.getUint8(validity.start + (row >> 3)) & (1 << (row & 7))) === 0;
    const values = new Array<unknown>(numRows);
    if (column.kind === 'utf8') {
      const characters = buffer(0);
      if (characters === null) return null;
      const text = Buffer.from(view.buffer, view.byteOffset + characters.start, characters.length);
      let from = view.getInt32(data.start, true);
      for (let row = 0; row < numRows; row++) {
        const to = view.getInt32(data.start + 4 * row + 4, true);
        if (from < 0 || to < from || to > characters.length) return null;
        values[row] = isNull?.(row) ? null : text.toString('utf8', from, to);
        from = to;
      }
    } else {
      for (let row = 0; row < numRows; row++) values[row] = isNull?.(row) ? null : column.read(view, data.start + column.width * row);
    }
    decoded.set(column.name, values);
  }
  return { numRows, columns: decoded };
}
