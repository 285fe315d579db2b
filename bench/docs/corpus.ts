/**
 * A documentation corpus for bench:docs: the readable files of a directory (or of an installed Debian
 * package), copied into a working folder the service syncs, and the structure of each file (title,
 * section headings, man-page style one-line summary) the question generator works from.
 *
 * Copying rather than syncing the original directory: `.gz` files (common under /usr/share/doc) are
 * stored decompressed, and when one document exists in several formats (git-doc ships `git-add.txt`
 * and `git-add.html`) only one is kept, so every question has exactly one answering file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import picomatch from 'picomatch';

/** Extensions read, in order of preference when one document exists in several of them. */
const FORMATS = ['.md', '.markdown', '.rst', '.adoc', '.txt', '.html', '.htm'] as const;
type Format = 'markdown' | 'text' | 'html';
const formatOf = (extension: string): Format => (extension === '.html' || extension === '.htm' ? 'html' : extension === '.md' || extension === '.markdown' ? 'markdown' : 'text');

/** One file of the corpus as the service sees it: `id` is its path relative to the folder, the entity id local_folder gives it. */
export interface CorpusFile {
  id: string;
  format: Format;
  text: string;
}

/**
 * The directory of `source`: a directory as given, or a Debian package's documentation (the deepest
 * folder holding all of its files under /usr/share/doc). Throws with the install command when the
 * package is not installed.
 */
export function resolveSource(source: string): string {
  if (source.includes('/') || existsSync(source)) {
    const dir = path.resolve(source);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
    return dir;
  }
  let listed: string;
  try {
    listed = execFileSync('dpkg', ['-L', source], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    throw new Error(`Package ${source} is not installed: apt-get install -y ${source} (or give a directory)`);
  }
  const files = listed
    .split('\n')
    .filter((line) => line.startsWith('/usr/share/doc/') && FORMATS.some((extension) => line.endsWith(extension) || line.endsWith(`${extension}.gz`)));
  if (files.length === 0) throw new Error(`Package ${source} installs no documentation files under /usr/share/doc`);
  let common = path.dirname(files[0]!);
  for (const file of files) while (!file.startsWith(`${common}/`)) common = path.dirname(common);
  return common;
}

/** Relative paths ('/'-separated) of the readable files under `dir`, dot folders and `exclude` globs skipped. */
function walk(dir: string, excluded: (relative: string) => boolean, prefix = ''): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.name.startsWith('.') || excluded(relative)) continue;
    if (entry.isDirectory()) found.push(...walk(dir, excluded, relative));
    else if (entry.isFile() && FORMATS.some((extension) => relative.endsWith(extension) || relative.endsWith(`${extension}.gz`))) found.push(relative);
  }
  return found;
}

/**
 * Copies the corpus of `source` into `target` (which must be empty or missing) and returns its files.
 * `exclude` globs match paths relative to `source` (`_modules/**`, `releases/**`).
 */
export function copyCorpus(source: string, target: string, exclude: string[] = []): CorpusFile[] {
  const excluded = exclude.length ? picomatch(exclude, { dot: true }) : () => false;
  // One document per path without its extension: the most source-like format wins.
  const chosen = new Map<string, { relative: string; extension: string }>();
  for (const relative of walk(source, excluded)) {
    const plain = relative.replace(/\.gz$/, '');
    const extension = path.extname(plain).toLowerCase();
    const stem = plain.slice(0, plain.length - extension.length);
    const previous = chosen.get(stem);
    if (!previous || FORMATS.indexOf(extension as never) < FORMATS.indexOf(previous.extension as never)) chosen.set(stem, { relative, extension });
  }
  mkdirSync(target, { recursive: true });
  if (readdirSync(target).length > 0) throw new Error(`${target} is not empty`);
  const files: CorpusFile[] = [];
  for (const { relative, extension } of [...chosen.values()].sort((a, b) => a.relative.localeCompare(b.relative))) {
    const raw = readFileSync(path.join(source, relative));
    const bytes = relative.endsWith('.gz') ? gunzipSync(raw) : raw;
    const id = relative.replace(/\.gz$/, '');
    mkdirSync(path.dirname(path.join(target, id)), { recursive: true });
    writeFileSync(path.join(target, id), bytes);
    files.push({ id, format: formatOf(extension), text: bytes.toString('utf8') });
  }
  return files;
}

/**
 * What a file says about itself: its title, its section headings, for man-page style pages the one-line
 * summary of its NAME, and the sentences of its prose that are not the first of their section.
 */
export interface Structure {
  id: string;
  title: string;
  headings: string[];
  summary: string | null;
  /** Prose sentences from the middle of sections (each section's first sentence left out), in order. */
  sentences: string[];
}

/** The sentences of one section's paragraphs, its first left out (it usually restates the heading). */
const middleSentences = (paragraphs: string[]) =>
  paragraphs
    .flatMap((paragraph) => paragraph.replace(/\s+/g, ' ').trim().split(/(?<=[a-z)][.!?])\s+(?=[A-Z])/))
    .slice(1)
    .filter(Boolean);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“' };
const decode = (html: string) =>
  html.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) =>
    name.startsWith('#x') || name.startsWith('#X') ? String.fromCodePoint(parseInt(name.slice(2), 16)) : name.startsWith('#') ? String.fromCodePoint(Number(name.slice(1))) : (ENTITIES[name.toLowerCase()] ?? whole),
  );
/** Text of an HTML fragment: tags dropped, entities decoded, permalink marks (¶) removed, spaces collapsed. */
const textOf = (html: string) => decode(html.replace(/<[^>]*>/g, ' ')).replace(/[¶#]\s*$/u, '').replace(/\s+/g, ' ').trim();

/** "NAME — summary" or "NAME - summary" where the name is made of the page's title or file name words. */
function summaryOf(line: string, title: string, id: string): string | null {
  const match = /^(.{1,80}?)\s+(?:—|–|-{1,2})\s+(.{8,240})$/u.exec(line.trim());
  if (!match) return null;
  const known = new Set(`${title} ${path.basename(id)}`.toLowerCase().split(/[^\p{L}\p{N}]+/u));
  const nameWords = match[1]!.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return nameWords.length > 0 && nameWords.length <= 8 && nameWords.every((word) => known.has(word)) ? match[2]!.trim() : null;
}

function htmlStructure(file: CorpusFile): Structure {
  const html = file.text;
  const title = textOf(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '');
  const headings = [...html.matchAll(/<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1>/gi)].map((match) => textOf(match[2]!)).filter(Boolean);
  const sections = html.split(/<h[1-6]\b/i).map((section) => [...section.matchAll(/<p\b[^>]*>([\s\S]*?)<\/p>/gi)].map((match) => textOf(match[1]!)));
  // The summary is one of the first paragraphs (PostgreSQL's refnamediv, a NAME section of a man page in HTML).
  let summary: string | null = null;
  for (const match of [...html.matchAll(/<p\b[^>]*>([\s\S]*?)<\/p>/gi)].slice(0, 4)) {
    summary = summaryOf(textOf(match[1]!), `${title} ${headings.slice(0, 3).join(' ')}`, file.id);
    if (summary) break;
  }
  return { id: file.id, title, headings, summary, sentences: sections.flatMap(middleSentences) };
}

const UNDERLINE = /^([=\-~^"'`#*+])\1{2,}\s*$/;

function textStructure(file: CorpusFile): Structure {
  const lines = file.text.split(/\r?\n/);
  const headings: string[] = [];
  let fenced = false;
  let summary: string | null = null;
  let afterName = false;
  // Paragraphs of the current section: runs of unindented prose lines (indented lines are code or examples).
  const sentences: string[] = [];
  let paragraphs: string[] = [];
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length) paragraphs.push(paragraph.join(' '));
    paragraph = [];
  };
  const endSection = () => {
    endParagraph();
    sentences.push(...middleSentences(paragraphs));
    paragraphs = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    let heading: string | null = null;
    const atx = file.format === 'markdown' ? /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line) : /^={1,5}\s+(\S.*?)\s*=*\s*$/.exec(line);
    if (atx) heading = atx[1]!;
    else if (line.trim() && !/^\s/.test(line) && !UNDERLINE.test(line) && UNDERLINE.test(lines[i + 1] ?? '') && (lines[i + 1]!.trim().length >= Math.max(3, line.trim().length - 2))) {
      heading = line.trim();
      i++;
    }
    if (heading !== null) {
      endSection();
      headings.push(heading.replace(/\[\[[^\]]*\]\]|[*_`]/g, '').trim());
      afterName = /^name$/i.test(heading.trim());
      continue;
    }
    if (afterName && line.trim()) {
      summary = summaryOf(line, headings[0] ?? '', file.id);
      afterName = false;
    }
    if (/^[A-Za-z]/.test(line) && !UNDERLINE.test(line)) paragraph.push(line.trim());
    else endParagraph();
  }
  endSection();
  const frontTitle = /^---\s*\n[\s\S]*?^title:\s*["']?(.+?)["']?\s*$/m.exec(file.text)?.[1];
  return { id: file.id, title: frontTitle ?? headings[0] ?? '', headings, summary, sentences };
}

export const structureOf = (file: CorpusFile): Structure => (file.format === 'html' ? htmlStructure(file) : textStructure(file));
