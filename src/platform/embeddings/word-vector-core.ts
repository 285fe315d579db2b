/**
 * The compute core of the built-in word-vector embedder: tokenizer, SIF weighting, hashed fallback,
 * and the worker-thread entry point.
 *
 * This module is loaded twice: normally (by the embedder, on the main thread) and as the entry file of
 * the embedding worker thread. Node loads the worker file itself, outside any test or build tooling,
 * so the file must stay self-contained: only `node:` imports, and only erasable TypeScript syntax (no
 * enums, namespaces or constructor parameter properties), so Node's built-in type stripping can run the
 * `.ts` source as well as the compiled `.js`.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

/** URL of this module, used to start it as a worker thread (the `.ts` source or the compiled `.js`). */
export const CORE_MODULE_URL: string = import.meta.url;

/**
 * Recorded on collections as `embedding_model_name`. Versioned: vectors from an earlier weighting
 * (plain `catchment-word-vectors-100d`, then `…-sif`, which dropped unknown words) are not comparable,
 * so those collections are refused, not silently mis-ranked.
 */
export const BUILTIN_MODEL_NAME = 'catchment-word-vectors-100d-sif2';
export const BUILTIN_DIMENSIONS = 100;

const WORKER_KIND = 'catchment-word-vector-worker';

/**
 * SIF's `a` in `a / (a + p(w))`. The vocabulary has no counts, only frequency order, so `p(w)` is
 * estimated from the rank by Zipf's law: `p(rank) = 1 / ((rank + 1) * H_N)`. Tuned on SciFact train
 * (semantic nDCG@10): 1e-3 → 0.270, 1e-4 → 0.300, 3e-5 → 0.324, 1e-5 → 0.341 without component removal;
 * with it 3e-5 and 1e-5 both give 0.351.
 */
export const SIF_A = 3e-5;

/**
 * Length of an unknown word's trigram vector, where the known words' post-processed average counts as
 * a unit vector times their total SIF weight: an unknown word weighs like 1.5 of the rarest known words.
 * Tuned on SciFact train (semantic nDCG@10): dropped 0.379, 0.5 → 0.382, 1 → 0.386, 1.5 → 0.388,
 * 2 → 0.388, 2.5 → 0.374, 3 → 0.359.
 */
const UNKNOWN_WORD_LENGTH = 1.5;

/**
 * English stop words (NLTK's list, without its contracted forms) plus the fragments left when the
 * tokenizer splits contractions at the apostrophe ("don't" → "don", "t").
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves s t d ll m re ve'
  ).split(' '),
);

const RUN = /[\p{L}\p{N}]+/gu;
const HAS_UPPER = /\p{Lu}/u;
const CAMEL_BOUNDARY = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;
const DIGIT_BOUNDARY = /(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;
const HAS_DIGIT_BOUNDARY = /\p{L}\p{N}|\p{N}\p{L}/u;

/**
 * Lower-cased tokens of a text without a vocabulary: runs of letters and digits (so `snake_case`,
 * `kebab-case` and `dotted.names` fall apart at the punctuation), camelCase and PascalCase split at
 * case changes (`parseHTTPRequest` → parse, http, request), stop words dropped. The embedder applies
 * the same rules but keeps a mixed-case run whole when the vocabulary knows it ("JavaScript", "iPhone"),
 * and splits letters from digits only when the whole token is unknown ("utf8" → utf, 8; "base64" stays).
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const match of text.matchAll(RUN)) {
    const run = match[0];
    const parts = HAS_UPPER.test(run) ? run.split(CAMEL_BOUNDARY) : [run];
    for (const part of parts) {
      const token = part.toLowerCase();
      if (!STOP_WORDS.has(token)) tokens.push(token);
    }
  }
  return tokens;
}

/** Where the parts of a converted model sit in one (shared) buffer; see `word-vector-cache.ts`. */
export interface ModelLayout {
  buffer: SharedArrayBuffer | ArrayBuffer;
  dimensions: number;
  /** Rows, in frequency order: row = rank. */
  count: number;
  /** UTF-16 code units of all words, back to back (Uint16). */
  charsOffset: number;
  charsLength: number;
  /** Int32 × (count + 1): where each word starts in the chars. */
  offsetsOffset: number;
  /** Int32 open-addressing hash table (`tableSize` slots, a power of two) of row + 1, 0 = empty. */
  tableOffset: number;
  tableSize: number;
  /** Float32: the mean word vector, then `components` unit principal directions, each `dimensions` long. */
  postprocessOffset: number;
  components: number;
  /** count × dimensions values, Int8 (`valueBytes` 1) or Float32 (4); a row's vector is its values times its scale. */
  matrixOffset: number;
  valueBytes: 1 | 4;
  /** Float32 × count: each row's scale. */
  scalesOffset: number;
}

/** FNV-1a over UTF-16 code units; the cache's hash table is built with it, so changing it needs a new cache format. */
export function hashWord(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The vocabulary's words, in row order (for tools; the embedder itself never materialises them). */
export function vocabularyWords(layout: ModelLayout): string[] {
  const chars = new Uint16Array(layout.buffer, layout.charsOffset, layout.charsLength);
  const offsets = new Int32Array(layout.buffer, layout.offsetsOffset, layout.count + 1);
  const words: string[] = [];
  for (let row = 0; row < layout.count; row++) words.push(String.fromCharCode(...chars.subarray(offsets[row]!, offsets[row + 1]!)));
  return words;
}

/**
 * Embeds texts as the SIF-weighted average of their word vectors with the common directions removed
 * (the vocabulary's mean vector and its top principal components, computed once at conversion:
 * "all-but-the-top" post-processing, applied to the average, which is the same thing because it is
 * linear), then L2-normalised.
 *
 * Everything it reads (vocabulary, hash table, matrix) lives in the shared buffer: a worker thread
 * starts without building anything, and ASCII words are looked up straight from the text's characters,
 * lower-casing on the fly, without allocating a string per token.
 */
export class WordVectorModel {
  readonly dimensions: number;
  private readonly chars: Uint16Array;
  private readonly offsets: Int32Array;
  private readonly table: Int32Array;
  private readonly mask: number;
  private readonly stop: Uint8Array;
  private readonly matrix: Int8Array | Float32Array;
  private readonly scales: Float32Array;
  private readonly mean: Float32Array;
  private readonly directions: Float32Array[];
  private readonly harmonic: number;
  private readonly sum: Float64Array;
  private readonly trigrams: Float64Array;
  /** The unknown words' trigram vectors of the text being embedded, kept apart from the known words' `sum`. */
  private readonly unknownSum: Float64Array;

  constructor(layout: ModelLayout) {
    const { buffer, dimensions, count } = layout;
    if ((layout.tableSize & (layout.tableSize - 1)) !== 0 || layout.tableSize <= count) throw new Error('Word-vector hash table has an invalid size');
    this.dimensions = dimensions;
    this.chars = new Uint16Array(buffer, layout.charsOffset, layout.charsLength);
    this.offsets = new Int32Array(buffer, layout.offsetsOffset, count + 1);
    this.table = new Int32Array(buffer, layout.tableOffset, layout.tableSize);
    this.mask = layout.tableSize - 1;
    this.matrix = layout.valueBytes === 1 ? new Int8Array(buffer, layout.matrixOffset, count * dimensions) : new Float32Array(buffer, layout.matrixOffset, count * dimensions);
    this.scales = new Float32Array(buffer, layout.scalesOffset, count);
    this.mean = new Float32Array(buffer, layout.postprocessOffset, dimensions);
    this.directions = [];
    for (let k = 0; k < layout.components; k++) {
      this.directions.push(new Float32Array(buffer, layout.postprocessOffset + (k + 1) * dimensions * 4, dimensions));
    }
    this.stop = new Uint8Array(count);
    for (const word of STOP_WORDS) {
      const row = this.lookup(word, 0, word.length);
      if (row >= 0) this.stop[row] = 1;
    }
    this.harmonic = Math.log(count) + 0.5772156649;
    this.sum = new Float64Array(dimensions);
    this.trigrams = new Float64Array(dimensions);
    this.unknownSum = new Float64Array(dimensions);
  }

  /** One row-major block of `texts.length × dimensions` unit vectors. */
  embedBatch(texts: readonly string[]): Float32Array {
    const out = new Float32Array(texts.length * this.dimensions);
    for (let i = 0; i < texts.length; i++) this.embedInto(texts[i]!, out, i * this.dimensions);
    return out;
  }

  embedInto(text: string, out: Float32Array, offset: number): void {
    this.sum.fill(0);
    this.unknownSum.fill(0);
    const weights = this.accumulate(text);
    const dims = this.dimensions;
    const sum = this.sum;
    if (weights > 0) {
      // Post-processing applies to the known words' average only: the trigram vectors are not in the
      // word-vector space, so its mean and common directions mean nothing for them.
      const mean = this.mean;
      for (let d = 0; d < dims; d++) sum[d] = sum[d]! / weights - mean[d]!;
      for (const direction of this.directions) {
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += sum[d]! * direction[d]!;
        for (let d = 0; d < dims; d++) sum[d] = sum[d]! - dot * direction[d]!;
      }
      let known = 0;
      for (let d = 0; d < dims; d++) known += sum[d]! * sum[d]!;
      const toWeight = known === 0 ? 0 : weights / Math.sqrt(known);
      for (let d = 0; d < dims; d++) sum[d] = sum[d]! * toWeight;
    }
    const unknown = this.unknownSum;
    for (let d = 0; d < dims; d++) sum[d] = sum[d]! + unknown[d]!;
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += sum[d]! * sum[d]!;
    if (norm === 0) {
      hashedVector(text, out, offset, dims);
      return;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < dims; d++) out[offset + d] = sum[d]! * scale;
  }

  /** Adds the weighted vectors of the text's known words to `sum`; returns the total weight. */
  private accumulate(text: string): number {
    let weights = 0;
    let start = -1;
    const length = text.length;
    for (let i = 0; i <= length; i++) {
      const c = i < length ? text.charCodeAt(i) : 0x20;
      if (c >= 0x80) return this.accumulateUnicode(text);
      const alnum = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
      if (alnum) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        weights += this.asciiRun(text, start, i);
        start = -1;
      }
    }
    return weights;
  }

  /** A run of ASCII letters and digits: the whole word if known, else its camelCase parts, else letter/digit parts. */
  private asciiRun(text: string, start: number, end: number): number {
    const row = this.lookup(text, start, end);
    if (row >= 0) return this.stop[row] ? 0 : this.add(row);
    let weights = 0;
    let part = start;
    for (let i = start + 1; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x41 || c > 0x5a) continue; // boundaries are before capitals only
      const before = text.charCodeAt(i - 1);
      const beforeUpper = before >= 0x41 && before <= 0x5a;
      const after = i + 1 < end ? text.charCodeAt(i + 1) : 0;
      // "parseHttp" → parse|Http; "HTTPServer" → HTTP|Server
      if (!beforeUpper || (after >= 0x61 && after <= 0x7a)) {
        weights += this.asciiPart(text, part, i);
        part = i;
      }
    }
    if (part === start) return weights + this.digitParts(text, start, end);
    return weights + this.asciiPart(text, part, end);
  }

  private asciiPart(text: string, start: number, end: number): number {
    const row = this.lookup(text, start, end);
    if (row >= 0) return this.stop[row] ? 0 : this.add(row);
    return this.digitParts(text, start, end);
  }

  /** "utf8" → utf, 8 (only for words the vocabulary does not know whole); unknown pieces by their trigrams. */
  private digitParts(text: string, start: number, end: number): number {
    let weights = 0;
    let part = start;
    for (let i = start + 1; i <= end; i++) {
      const boundary = i === end || isDigit(text.charCodeAt(i)) !== isDigit(text.charCodeAt(i - 1));
      if (!boundary) continue;
      if (part === start && i === end) {
        this.addUnknown(text, start, end); // no boundary: the word is simply unknown
        return 0;
      }
      const row = this.lookup(text, part, i);
      if (row < 0) this.addUnknown(text, part, i);
      else if (!this.stop[row]) weights += this.add(row);
      part = i;
    }
    return weights;
  }

  /** The same rules for texts with non-ASCII characters, through Unicode-aware regular expressions. */
  private accumulateUnicode(text: string): number {
    this.sum.fill(0);
    this.unknownSum.fill(0);
    let weights = 0;
    for (const match of text.matchAll(RUN)) {
      const run = match[0];
      const lower = run.toLowerCase();
      const row = this.lookupExact(lower);
      if (row >= 0) {
        if (!this.stop[row]) weights += this.add(row);
        continue;
      }
      const parts = lower !== run && HAS_UPPER.test(run) ? run.split(CAMEL_BOUNDARY).map((part) => part.toLowerCase()) : [lower];
      for (const part of parts) {
        const partRow = parts.length > 1 ? this.lookupExact(part) : -1;
        if (partRow >= 0) {
          if (!this.stop[partRow]) weights += this.add(partRow);
          continue;
        }
        if (!HAS_DIGIT_BOUNDARY.test(part)) {
          this.addUnknown(part, 0, part.length);
          continue;
        }
        for (const piece of part.split(DIGIT_BOUNDARY)) {
          const pieceRow = this.lookupExact(piece);
          if (pieceRow < 0) this.addUnknown(piece, 0, piece.length);
          else if (!this.stop[pieceRow]) weights += this.add(pieceRow);
        }
      }
    }
    return weights;
  }

  private lookupExact(word: string): number {
    return this.lookup(word, 0, word.length);
  }

  /** Row of `text[start, end)` lower-cased (ASCII letters only; other characters as they are), or -1. */
  lookup(text: string, start: number, end: number): number {
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) {
      hash = Math.imul(hash ^ lowerAscii(text.charCodeAt(i)), 0x01000193);
    }
    const length = end - start;
    const { table, offsets, chars, mask } = this;
    for (let slot = (hash >>> 0) & mask; ; slot = (slot + 1) & mask) {
      const entry = table[slot]!;
      if (entry === 0) return -1;
      const row = entry - 1;
      const at = offsets[row]!;
      if (offsets[row + 1]! - at !== length) continue;
      let i = 0;
      for (; i < length; i++) {
        if (lowerAscii(text.charCodeAt(start + i)) !== chars[at + i]) break;
      }
      if (i === length) return row;
    }
  }

  /**
   * Adds a word the vocabulary does not know: its character trigrams hashed into a vector (the same
   * feature hashing as `hashedVector`) of length `UNKNOWN_WORD_LENGTH`, kept apart from the known
   * words' average. Unknown words are mostly the rarest, most specific terms of a text (gene names, drugs,
   * product codes): dropping them made "PGAM1 inhibition" and "inhibition" the same query. Their
   * trigram vectors do not point along any word's direction, so they only make texts that share the
   * term (or most of its trigrams) closer.
   */
  private addUnknown(text: string, start: number, end: number): void {
    const dims = this.dimensions;
    const trigrams = this.trigrams;
    trigrams.fill(0);
    addTrigrams(text, start, end, trigrams, 0, dims);
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += trigrams[d]! * trigrams[d]!;
    if (norm === 0) return;
    const scale = UNKNOWN_WORD_LENGTH / Math.sqrt(norm);
    const unknown = this.unknownSum;
    for (let d = 0; d < dims; d++) unknown[d] = unknown[d]! + scale * trigrams[d]!;
  }

  private add(row: number): number {
    const x = SIF_A * (row + 1) * this.harmonic;
    const weight = x / (1 + x);
    const scaled = weight * this.scales[row]!;
    const dims = this.dimensions;
    const matrix = this.matrix;
    const sum = this.sum;
    const base = row * dims;
    for (let d = 0; d < dims; d++) sum[d] = sum[d]! + scaled * matrix[base + d]!;
    return weight;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function lowerAscii(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c + 32 : c;
}

/** FNV-1a of three UTF-16 code units, then Murmur3's finaliser: it spreads FNV's weak low bits before the modulus and the sign. */
function trigramHash(a: number, b: number, c: number): number {
  let hash = Math.imul(0x811c9dc5 ^ a, 0x01000193);
  hash = Math.imul(hash ^ b, 0x01000193);
  hash = Math.imul(hash ^ c, 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash;
}

/**
 * The vector of a text with no word to embed (empty text, only punctuation or symbols, only stop
 * words): feature hashing of the whole text's character trigrams, lower-cased, whitespace collapsed.
 * Deterministic across runs and machines, distinct for distinct texts, similar for texts sharing many
 * trigrams. These vectors do not live in the word-vector space: their similarity to vectors of
 * ordinary text is noise around zero, which is the honest answer.
 */
export function hashedVector(text: string, out: Float32Array, offset: number, dims: number): void {
  const collapsed = text.toLowerCase().replace(/\s+/g, ' ').trim();
  for (let d = 0; d < dims; d++) out[offset + d] = 0;
  const first = addTrigrams(collapsed, 0, collapsed.length, out, offset, dims);
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += out[offset + d]! * out[offset + d]!;
  if (norm === 0) {
    // No trigram (the empty text) or every trigram cancelled out: still a deterministic unit vector.
    out[offset + Math.max(first, 0)] = 1;
    return;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < dims; d++) out[offset + d] = out[offset + d]! * scale;
}

/**
 * Feature hashing of the character trigrams of `text[start, end)`, ASCII letters lower-cased, framed
 * by start and end marks (so a one-letter word has a trigram): each adds ±1 to `into[offset + d]`,
 * with `d` and the sign from the trigram's hash. Returns the first dimension touched, or -1 for none.
 */
function addTrigrams(text: string, start: number, end: number, into: Float32Array | Float64Array, offset: number, dims: number): number {
  let first = -1;
  let a = 0x02;
  let b = start < end ? lowerAscii(text.charCodeAt(start)) : 0x03;
  for (let i = start + 1; i <= end; i++) {
    const c = i < end ? lowerAscii(text.charCodeAt(i)) : 0x03;
    const hash = trigramHash(a, b, c);
    const d = (hash >>> 0) % dims;
    if (first < 0) first = d;
    into[offset + d] = into[offset + d]! + (hash < 0 ? -1 : 1);
    a = b;
    b = c;
  }
  return first;
}

/** Messages between the embedder and its worker thread. */
export interface WorkerInit {
  kind: typeof WORKER_KIND;
  layout: ModelLayout;
}
export type WorkerRequest = { id: number; texts: string[] };
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'init-error'; message: string }
  | { type: 'result'; id: number; vectors: Float32Array }
  | { type: 'error'; id: number; message: string };

export function workerInit(layout: ModelLayout): WorkerInit {
  return { kind: WORKER_KIND, layout };
}

function runWorker(init: WorkerInit): void {
  const port = parentPort!;
  let model: WordVectorModel;
  try {
    model = new WordVectorModel(init.layout);
  } catch (error) {
    port.postMessage({ type: 'init-error', message: (error as Error).message } satisfies WorkerReply);
    return;
  }
  port.on('message', (request: WorkerRequest) => {
    try {
      const vectors = model.embedBatch(request.texts);
      port.postMessage({ type: 'result', id: request.id, vectors } satisfies WorkerReply, [vectors.buffer as ArrayBuffer]);
    } catch (error) {
      port.postMessage({ type: 'error', id: request.id, message: (error as Error).message } satisfies WorkerReply);
    }
  });
  port.postMessage({ type: 'ready' } satisfies WorkerReply);
}

if (!isMainThread && (workerData as { kind?: unknown } | null)?.kind === WORKER_KIND) runWorker(workerData as WorkerInit);
