/**
 * One-dimensional PostgreSQL arrays in the binary wire format (what `array_send` writes), as a Buffer
 * the `pg` driver binds as a binary parameter. For bulk statements over `unnest($1::text[], ...)`: the
 * driver's own text form of a JavaScript array escapes every element character by character, and the
 * server then parses that literal back, quotes and all (and each timestamp from its text); in binary,
 * each element is its length and its bytes.
 *
 * The statement must give the parameter its array type (`$1::text[]`): the server checks that the
 * element type written here is the one it expects, and fails the statement otherwise.
 */

/** Element type oids (pg_type), as `array_recv` checks them. */
const INT4 = 23;
const TEXT = 25;
const TIMESTAMPTZ = 1184;
const JSONB = 3802;

/** jsonb's binary form: a version byte, then the JSON text. */
const JSONB_VERSION = 1;
/** Milliseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC); binary timestamps count microseconds from it. */
const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);

/** ndim, has-nulls flag, element type, then the one dimension's length and lower bound. */
const HEADER_BYTES = 20;

function header(buffer: Buffer, elementType: number, length: number, hasNulls: boolean): number {
  buffer.writeInt32BE(length === 0 ? 0 : 1, 0);
  buffer.writeInt32BE(hasNulls ? 1 : 0, 4);
  buffer.writeInt32BE(elementType, 8);
  if (length === 0) return 12; // an empty array has no dimension
  buffer.writeInt32BE(length, 12);
  buffer.writeInt32BE(1, 16);
  return HEADER_BYTES;
}

/** Strings (or NULLs) as UTF-8, each after its byte length; `prefix` is a byte written before each string's text (jsonb's version). */
function stringArray(elementType: number, values: readonly (string | null)[], prefix: number | null): Buffer {
  const prefixBytes = prefix === null ? 0 : 1;
  // Sized exactly: room for the most UTF-8 a string may take (3 bytes a UTF-16 unit) made a batch's
  // arrays ~3 times what they hold, memory outside V8's heap that brought its full collections sooner.
  let size = HEADER_BYTES;
  let hasNulls = false;
  for (const value of values) {
    if (value === null) hasNulls = true;
    size += 4 + (value === null ? 0 : prefixBytes + Buffer.byteLength(value));
  }
  const buffer = Buffer.allocUnsafe(size);
  let offset = header(buffer, elementType, values.length, hasNulls);
  for (const value of values) {
    if (value === null) {
      buffer.writeInt32BE(-1, offset);
      offset += 4;
      continue;
    }
    const start = offset + 4;
    if (prefix !== null) buffer[start] = prefix;
    const written = buffer.write(value, start + prefixBytes);
    buffer.writeInt32BE(prefixBytes + written, offset);
    offset = start + prefixBytes + written;
  }
  return buffer.subarray(0, offset); // an empty array has no dimension: shorter than its header
}

export function textArray(values: readonly (string | null)[]): Buffer {
  return stringArray(TEXT, values, null);
}

/** JSON texts (or SQL NULLs) as a jsonb[]: the server parses each as it would the text form. */
export function jsonbArray(jsonTexts: readonly (string | null)[]): Buffer {
  return stringArray(JSONB, jsonTexts, JSONB_VERSION);
}

export function int4Array(values: readonly number[]): Buffer {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + values.length * 8);
  let offset = header(buffer, INT4, values.length, false);
  for (const value of values) {
    // writeInt32BE would store a fraction's integer part; the text form fails the statement instead.
    if (!Number.isInteger(value)) throw new RangeError(`Not an int4: ${value}`);
    buffer.writeInt32BE(4, offset);
    buffer.writeInt32BE(value, offset + 4);
    offset += 8;
  }
  return buffer.subarray(0, offset);
}

/** Instants (or NULLs) to the millisecond, as microseconds from PostgreSQL's epoch; an invalid Date throws, as the text form fails. */
export function timestamptzArray(values: readonly (Date | null)[]): Buffer {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + values.length * 12);
  let offset = header(buffer, TIMESTAMPTZ, values.length, values.includes(null));
  for (const value of values) {
    if (value === null) {
      buffer.writeInt32BE(-1, offset);
      offset += 4;
      continue;
    }
    buffer.writeInt32BE(8, offset);
    const milliseconds = value.getTime() - POSTGRES_EPOCH_MS;
    const microseconds = milliseconds * 1000;
    // Exact as a double within ±285 years of 2000, written as two 32-bit halves (a BigInt per value cost twice as much);
    // beyond, as a BigInt, which throws a RangeError for NaN (an invalid Date).
    if (Number.isSafeInteger(microseconds)) {
      buffer.writeInt32BE(Math.floor(microseconds / 2 ** 32), offset + 4);
      buffer.writeUInt32BE(microseconds >>> 0, offset + 8);
    } else {
      buffer.writeBigInt64BE(BigInt(milliseconds) * 1000n, offset + 4);
    }
    offset += 12;
  }
  return buffer.subarray(0, offset);
}
