/**
 * A reader of the record batches LanceDB's native query iterator hands over, each an Arrow IPC file
 * holding one batch, for the column types searches read (integers, floats, UTF-8 strings), straight
 * from the file's buffers. apache-arrow's `tableFromIPC`, which LanceDB's own iterator calls on each
 * batch, decodes the footer, the schema and every column through its visitors: on a 2-core host about
 * 0.2 ms of the main thread per batch, three or four batches a hybrid search. A batch holding any
 * other type, compressed buffers or more than one record batch is not read here (null): the caller
 * reads it with apache-arrow.
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

interface FieldType {
  name: string;
  type: typeof INT | typeof FLOATING_POINT | typeof UTF8;
  /** Int: bits and signedness; FloatingPoint: precision. */
  bitWidth: number;
  signed: boolean;
}

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

  int64(table: number, index: number): number {
    const at = this.field(table, index);
    return at === 0 ? 0 : Number(this.view.getBigInt64(at, true));
  }

  /** A vector's length and the position of its first element. */
  vector(at: number): { length: number; start: number } {
    return at === 0 ? { length: 0, start: 0 } : { length: this.view.getUint32(at, true), start: at + 4 };
  }

  string(at: number): string {
    const { length, start } = this.vector(at);
    return Buffer.from(this.view.buffer, this.view.byteOffset + start, length).toString('utf8');
  }

  /** The i-th table of a vector of tables. */
  tableAt(start: number, i: number): number {
    const at = start + 4 * i;
    return at + this.view.getUint32(at, true);
  }

  bigint(at: number): number {
    return Number(this.view.getBigInt64(at, true));
  }
}

/** One batch of an IPC file as plain columns, or null when it holds what this reader does not read. */
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
  const fields = schemaFields(fb, fb.reference(footer, 1));
  if (blocks.length !== 1 || !fields) return null;
  // A Block is { offset: int64, metaDataLength: int32, (padding), bodyLength: int64 }: where the batch's message
  // starts (a continuation marker, the metadata's length, the Message) and where its body does.
  const offset = fb.bigint(blocks.start);
  const metadataLength = view.getInt32(blocks.start + 8, true);
  const prefix = view.getUint32(offset, true) === CONTINUATION ? 8 : 4;
  const message = fb.root(offset + prefix);
  if (fb.uint8(message, 1, 0) !== RECORD_BATCH) return null;
  return recordBatch(fb, view, fb.reference(message, 2), offset + metadataLength, fields);
}

/** Whether the file holds Arrow's magic at `at`. */
function magicAt(file: Uint8Array, at: number): boolean {
  for (let i = 0; i < MAGIC.length; i++) if (file[at + i] !== MAGIC.charCodeAt(i)) return false;
  return true;
}

/** The schema's fields, or null when one is of a type (or has children) this reader does not read. */
function schemaFields(fb: FlatBuffer, schema: number): FieldType[] | null {
  const { length, start } = fb.vector(fb.reference(schema, 1));
  const fields: FieldType[] = [];
  for (let i = 0; i < length; i++) {
    const field = fb.tableAt(start, i);
    if (fb.reference(field, 4) !== 0 || fb.vector(fb.reference(field, 5)).length > 0) return null; // dictionary-encoded, nested
    const type = fb.uint8(field, 2, 0);
    const typeTable = fb.reference(field, 3);
    const name = fb.string(fb.reference(field, 0));
    if (type === INT) {
      fields.push({ name, type, bitWidth: fb.int32(typeTable, 0, 0), signed: fb.uint8(typeTable, 1, 0) !== 0 });
    } else if (type === FLOATING_POINT) {
      const precision = fb.int16(typeTable, 0, 0);
      if (precision !== SINGLE && precision !== DOUBLE) return null;
      fields.push({ name, type, bitWidth: precision === SINGLE ? 32 : 64, signed: true });
    } else if (type === UTF8) {
      fields.push({ name, type, bitWidth: 0, signed: false });
    } else {
      return null;
    }
  }
  return fields;
}

function recordBatch(fb: FlatBuffer, view: DataView, batch: number, bodyStart: number, fields: FieldType[]): DecodedBatch | null {
  if (fb.reference(batch, 3) !== 0) return null; // compressed buffers
  const numRows = fb.int64(batch, 0);
  const nodes = fb.vector(fb.reference(batch, 1));
  const buffers = fb.vector(fb.reference(batch, 2));
  if (nodes.length !== fields.length) return null;
  // Each FieldNode is { length: int64, null_count: int64 }; each Buffer { offset: int64, length: int64 }.
  const bufferAt = (i: number) => ({ offset: bodyStart + fb.bigint(buffers.start + 16 * i), length: fb.bigint(buffers.start + 16 * i + 8) });
  const columns = new Map<string, ArrayLike<unknown>>();
  let buffer = 0;
  for (let f = 0; f < fields.length; f++) {
    const field = fields[f]!;
    const rows = fb.bigint(nodes.start + 16 * f);
    const nulls = fb.bigint(nodes.start + 16 * f + 8);
    const validity = bufferAt(buffer++);
    const isValid = nulls === 0 ? null : (row: number) => (view.getUint8(validity.offset + (row >> 3)) & (1 << (row & 7))) !== 0;
    let values: unknown[];
    if (field.type === UTF8) {
      const offsets = bufferAt(buffer++);
      const data = bufferAt(buffer++);
      const text = Buffer.from(view.buffer, view.byteOffset + data.offset, data.length);
      values = new Array<unknown>(rows);
      for (let row = 0; row < rows; row++) {
        const from = view.getInt32(offsets.offset + 4 * row, true);
        values[row] = isValid && !isValid(row) ? null : text.toString('utf8', from, view.getInt32(offsets.offset + 4 * row + 4, true));
      }
    } else {
      const data = bufferAt(buffer++);
      const read = numberReader(view, field);
      if (!read) return null;
      values = new Array<unknown>(rows);
      for (let row = 0; row < rows; row++) values[row] = isValid && !isValid(row) ? null : read(data.offset, row);
    }
    columns.set(field.name, values);
  }
  return { numRows, columns };
}

/** How a value of an integer or float column is read; null for widths this reader does not read. */
function numberReader(view: DataView, field: FieldType): ((start: number, row: number) => unknown) | null {
  if (field.type === FLOATING_POINT) return field.bitWidth === 32 ? (start, row) => view.getFloat32(start + 4 * row, true) : (start, row) => view.getFloat64(start + 8 * row, true);
  switch (field.bitWidth) {
    case 8:
      return field.signed ? (start, row) => view.getInt8(start + row) : (start, row) => view.getUint8(start + row);
    case 16:
      return field.signed ? (start, row) => view.getInt16(start + 2 * row, true) : (start, row) => view.getUint16(start + 2 * row, true);
    case 32:
      return field.signed ? (start, row) => view.getInt32(start + 4 * row, true) : (start, row) => view.getUint32(start + 4 * row, true);
    case 64:
      return field.signed ? (start, row) => view.getBigInt64(start + 8 * row, true) : (start, row) => view.getBigUint64(start + 8 * row, true);
    default:
      return null;
  }
}
