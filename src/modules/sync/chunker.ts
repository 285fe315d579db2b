/**
 * Splits an entity's text into chunks for embedding. Prose splits at paragraph, then sentence,
 * then word boundaries; source code splits before top-level declarations so a chunk holds whole
 * functions where they fit. Chunks overlap slightly so a sentence cut at a border stays findable.
 */
export interface ChunkOptions {
  maxChars: number;
  overlapChars: number;
}

export const DEFAULT_CHUNKING: ChunkOptions = { maxChars: 1500, overlapChars: 150 };

const DECLARATION = /^(export\s+|public\s+|private\s+|protected\s+|pub\s+)?(async\s+)?(function|class|interface|type|enum|const|let|var|def|fn|func|impl|struct|trait|module|package|namespace)\b/;

export function chunkText(text: string, language: string | undefined, options: ChunkOptions = DEFAULT_CHUNKING): string[] {
  const trimmed = text.trim();
  if (trimmed.length === 0) return [];
  if (trimmed.length <= options.maxChars) return [trimmed];
  const pieces = language ? splitCode(trimmed) : splitProse(trimmed);
  return pack(pieces, options);
}

function splitCode(text: string): string[] {
  const pieces: string[] = [];
  let current: string[] = [];
  for (const line of text.split('\n')) {
    // A declaration at column 0 starts a new piece (comments and decorators just above stay with it).
    if (DECLARATION.test(line) && current.some((l) => l.trim() && !/^\s*(\/\/|#|\*|\/\*|@)/.test(l))) {
      pieces.push(current.join('\n'));
      current = [];
    }
    current.push(line);
  }
  pieces.push(current.join('\n'));
  return pieces.filter((piece) => piece.trim());
}

function splitProse(text: string): string[] {
  return text.split(/\n\s*\n/).filter((piece) => piece.trim());
}

/** Greedily packs pieces into chunks ≤ maxChars (plus the overlap carried from the previous chunk). */
function pack(pieces: string[], options: ChunkOptions): string[] {
  const chunks: string[] = [];
  let carried = '';
  let current = '';
  const flush = () => {
    chunks.push((carried ? `${carried} ${current}` : current).trim());
    // Carry the tail of this chunk into the next, from a word boundary.
    carried = options.overlapChars > 0 && current.length > options.overlapChars ? current.slice(-options.overlapChars).replace(/^\S*\s/, '') : '';
    current = '';
  };
  for (const piece of pieces.flatMap((p) => (p.length > options.maxChars ? breakLong(p, options.maxChars) : [p]))) {
    if (current && current.length + piece.length + 2 > options.maxChars) flush();
    current = current ? `${current}\n\n${piece}` : piece;
  }
  if (current.trim()) flush();
  return chunks;
}

function breakLong(piece: string, maxChars: number): string[] {
  const sentences = piece.match(/[^.!?\n]+[.!?]*\s*|\n+/g) ?? [piece];
  const out: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (sentence.length > maxChars) {
      if (current) out.push(current);
      current = '';
      for (let start = 0; start < sentence.length; start += maxChars) {
        let end = Math.min(sentence.length, start + maxChars);
        const space = sentence.lastIndexOf(' ', end);
        if (end < sentence.length && space > start + maxChars / 2) end = space;
        out.push(sentence.slice(start, end));
        start = end - maxChars;
      }
      continue;
    }
    if (current.length + sentence.length > maxChars) {
      out.push(current);
      current = '';
    }
    current += sentence;
  }
  if (current) out.push(current);
  return out;
}
