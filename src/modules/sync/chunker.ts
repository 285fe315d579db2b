/**
 * Splits an entity's text into chunks for embedding. Prose splits at headings and paragraphs, then
 * sentences, then word boundaries; source code splits before top-level declarations so a chunk holds
 * whole functions where they fit. Chunks overlap slightly so a sentence cut at a border stays
 * findable. A prose chunk that starts inside a section begins with the section's heading path
 * (`Install › From source`): the words of the heading are what a question about that passage
 * often uses, and keyword and vector search see them in every chunk of the section.
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
  const pieces = language ? splitCode(trimmed).map((text) => ({ text, path: [], heading: false })) : splitProse(trimmed);
  return pack(pieces, options);
}

/** A piece of text and the heading path it sits under (its own heading's included when it is one). */
interface Piece {
  text: string;
  path: string[];
  heading: boolean;
}

/** Separates a section's heading path in a chunk's first line. */
export const HEADING_PATH_SEPARATOR = ' › ';
/** Setext/AsciiDoc underline characters, by heading level. */
const UNDERLINES: Record<string, number> = { '=': 1, '-': 2, '~': 3, '^': 4, '+': 5 };
const FENCE = /^\s*(```|~~~)/;

/**
 * A heading starting at line `i`: Markdown `# Title` (HTML headings arrive so, see text extraction),
 * AsciiDoc `== Title`, or a title underlined with `===`/`---`/`~~~` of about its length after a blank
 * line (Markdown setext, AsciiDoc, reStructuredText; the length rule keeps listing delimiters out).
 */
function headingAt(lines: string[], i: number): { level: number; title: string; lines: number } | null {
  const line = lines[i]!;
  const atx = /^(#{1,6}|={1,6})[ \t]+(\S.*?)[ \t]*#*[ \t]*$/.exec(line);
  if (atx) return { level: atx[1]!.length, title: atx[2]!, lines: 1 };
  const next = lines[i + 1];
  const title = line.trim();
  if (next === undefined || title === '' || /^\s/.test(line) || (i > 0 && lines[i - 1]!.trim() !== '')) return null;
  const underline = /^([=\-~^+])\1{2,}\s*$/.exec(next);
  if (!underline || Math.abs(next.trim().length - title.length) > 3) return null;
  return { level: UNDERLINES[underline[1]!]!, title, lines: 2 };
}

/** Paragraphs (blank-line separated) under their heading path; headings are pieces of their own. */
function splitProse(text: string): Piece[] {
  const lines = text.split('\n');
  const pieces: Piece[] = [];
  let path: { level: number; title: string }[] = [];
  let body: string[] = [];
  const titles = () => path.map((h) => h.title);
  const flush = () => {
    for (const paragraph of body.join('\n').split(/\n\s*\n/)) if (paragraph.trim()) pieces.push({ text: paragraph, path: titles(), heading: false });
    body = [];
  };
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    if (FENCE.test(lines[i]!)) fenced = !fenced;
    const heading = fenced ? null : headingAt(lines, i);
    if (!heading) {
      body.push(lines[i]!);
      continue;
    }
    flush();
    path = [...path.filter((h) => h.level < heading.level), { level: heading.level, title: heading.title }];
    pieces.push({ text: lines.slice(i, i + heading.lines).join('\n'), path: titles(), heading: true });
    i += heading.lines - 1;
  }
  flush();
  return pieces;
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

/**
 * Greedily packs pieces into chunks ≤ maxChars (plus the overlap carried from the previous chunk and
 * the heading path of the section the chunk starts in, when it does not start with that heading).
 */
function pack(pieces: Piece[], options: ChunkOptions): string[] {
  const chunks: string[] = [];
  let carried = '';
  let current = '';
  let first: Piece | null = null;
  const flush = () => {
    const path = first!.heading ? first!.path.slice(0, -1) : first!.path;
    const body = (carried ? `${carried} ${current}` : current).trim();
    chunks.push(path.length ? `${path.join(HEADING_PATH_SEPARATOR)}\n${body}` : body);
    // Carry the tail of this chunk into the next, from a word boundary.
    carried = options.overlapChars > 0 && current.length > options.overlapChars ? current.slice(-options.overlapChars).replace(/^\S*\s/, '') : '';
    current = '';
    first = null;
  };
  const sized = pieces.flatMap((p) => (p.text.length > options.maxChars ? breakLong(p.text, options.maxChars).map((text) => ({ ...p, text })) : [p]));
  for (const piece of sized) {
    if (current && current.length + piece.text.length + 2 > options.maxChars) flush();
    first ??= piece;
    current = current ? `${current}\n\n${piece.text}` : piece.text;
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
