/**
 * Questions for bench:docs, made from the documents' own structure — no hand-written question, no
 * corpus-specific rule — each answered by exactly one file:
 * - `faq`: a section heading that is already a question ("How do I …?", as in FAQ pages), asked as is;
 * - `summary`: a man-page style one-line summary without the page's name ("git-add - Add file contents
 *   to the index" → "How do I add file contents to the index?");
 * - `heading`: a section heading (not the page's title, numbering dropped) put in a question
 *   ("5.4.3. Unique Constraints" → "What should I know about unique constraints?").
 * A heading or summary found in more than one file (or a file's title elsewhere) is ambiguous and
 * dropped, as are headings of fewer than two content words ("Examples", "Notes"). Files are split
 * into dev and test by a seeded hash of their path, so the two halves never share an answering file.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Structure } from './corpus.js';

export type QuestionKind = 'faq' | 'summary' | 'heading';
export type Split = 'dev' | 'test';

export interface Question {
  id: string;
  question: string;
  /** The answering file: its path relative to the corpus folder, the entity id of the local_folder file. */
  answer: string;
  /** The heading or summary the question came from. */
  section: string;
  kind: QuestionKind;
  split: Split;
}

export interface QuestionOptions {
  seed: number;
  /** At most this many questions from one file. */
  perFile: number;
  /** At most this many questions in all (both splits). */
  total: number;
}

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i in into is it its me my of on or the this that to using use what when where which who why with you your about'.split(' '),
);
const words = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
const normalized = (text: string) => words(text).join(' ');
const contentWords = (text: string) => words(text).filter((word) => word.length > 2 && !STOPWORDS.has(word) && !/^\d+$/.test(word));

/** "5.4.3. Unique Constraints", "Chapter 5. Data Definition", "A.2. Foo" → the words after the number. */
const withoutNumbering = (heading: string) =>
  heading
    .replace(/^((chapter|part|appendix|section)\s+)?([a-z]|[ivxlc]+|\d+)(\.\d+)*\.?\s+(?=\S)/i, (numbering) => (/\d|\./.test(numbering) ? '' : numbering))
    .replace(/\s*\(\d\)\s*$/, '')
    .trim();

/**
 * Title Case words lower-cased ("Unique Constraints" → "unique constraints"), a heading in capitals too
 * ("LIST OUTPUT FORMAT"); acronyms and code in mixed text (`CREATE INDEX` in a sentence, `QuerySet`) kept.
 */
function sentenceCase(text: string): string {
  const letters = text.replace(/[^\p{L}]/gu, '');
  if (words(text).length > 1 && letters === letters.toUpperCase()) return text.toLowerCase();
  return text.replace(/\p{L}[\p{L}\p{N}]*/gu, (word) => (/^\p{Lu}\p{Ll}*$/u.test(word) ? word.toLowerCase() : word));
}

/** A small seeded generator (mulberry32): the same seed, the same questions. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function shuffle<T>(items: T[], next: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

const HEADING_FORMS = [
  (topic: string) => `What should I know about ${topic}?`,
  (topic: string) => `Tell me about ${topic}`,
  (topic: string) => `Where do the docs cover ${topic}?`,
];

/**
 * A summary as a question: a verb phrase ("define a new table") is asked as a task, a noun phrase
 * ("the interactive terminal", or one starting with the first word of the page's name, "git's own …") as a thing.
 */
function summaryQuestion(summary: string, name: string): string {
  const phrase = sentenceCase(summary.replace(/[.;:]+$/, '').trim());
  const first = words(phrase)[0] ?? '';
  if (['a', 'an', 'the', 'this', 'these', 'some', 'one', 'various', 'miscellaneous'].includes(first) || first === name) return `What is ${phrase}?`;
  if (/^\p{L}+ing$/u.test(first)) return `How do I go about ${phrase}?`;
  if (/[^su]s$/.test(first)) return `What ${phrase}?`; // "lists the …", "shows …"
  return `How do I ${phrase}?`;
}

function headingQuestion(heading: string, next: () => number): string {
  const topic = sentenceCase(heading.replace(/[.:]+$/, ''));
  const howTo = /^how to\s+(.+)$/i.exec(topic);
  if (howTo) return `How do I ${howTo[1]}?`;
  if (/^\p{L}+ing\b/u.test(topic)) return `How do I go about ${topic}?`;
  return HEADING_FORMS[Math.floor(next() * HEADING_FORMS.length)]!(topic);
}

const splitOf = (id: string, seed: number): Split => (createHash('sha256').update(`${seed}:${id}`).digest()[0]! % 2 === 0 ? 'dev' : 'test');

export function makeQuestions(structures: Structure[], options: QuestionOptions): Question[] {
  // How many files each heading, title or summary appears in: more than one is ambiguous.
  const filesOf = new Map<string, Set<string>>();
  const count = (text: string, id: string) => {
    const key = normalized(withoutNumbering(text));
    if (!key) return;
    if (!filesOf.has(key)) filesOf.set(key, new Set());
    filesOf.get(key)!.add(id);
  };
  for (const structure of structures) {
    for (const title of structure.title.split(/\s+[|—–-]\s+/)) count(title, structure.id);
    for (const heading of structure.headings) count(heading, structure.id);
    if (structure.summary) count(structure.summary, structure.id);
  }
  const unique = (text: string) => filesOf.get(normalized(withoutNumbering(text)))?.size === 1;

  const next = random(options.seed);
  const candidates: Question[][] = [];
  for (const structure of structures) {
    const titleKeys = new Set(structure.title.split(/\s+[|—–-]\s+/).map((part) => normalized(withoutNumbering(part))));
    // The page's own title: its highest-level heading among the unambiguous ones, and any heading repeating the <title>.
    const ownHeadings = structure.headings.filter(unique);
    const topLevel = ownHeadings[0];
    const stem = normalized(path.basename(structure.id, path.extname(structure.id)));
    const own: Question[] = [];
    const add = (question: string, section: string, kind: QuestionKind) =>
      own.push({ id: '', question, answer: structure.id, section, kind, split: splitOf(structure.id, options.seed) });
    if (structure.summary && unique(structure.summary) && contentWords(structure.summary).length >= 2) add(summaryQuestion(structure.summary, stem.split(' ')[0]!), structure.summary, 'summary');
    for (const heading of new Set(ownHeadings)) {
      const topic = withoutNumbering(heading);
      const key = normalized(topic);
      if (heading === topLevel || titleKeys.has(key) || key === stem || topic.length > 120) continue;
      if (topic.endsWith('?') && contentWords(topic).length >= 2) add(topic, heading, 'faq');
      else if (contentWords(topic).length >= 2 && words(topic).length <= 12) add(headingQuestion(topic, next), heading, 'heading');
    }
    // Questions from the page's own voice first (FAQ entries, its summary), then a seeded choice of headings.
    const byKind = (kind: QuestionKind) => shuffle(own.filter((question) => question.kind === kind), next);
    candidates.push([...byKind('faq'), ...byKind('summary'), ...byKind('heading')].slice(0, options.perFile));
  }
  const seen = new Set<string>();
  const picked = shuffle(candidates.flat(), next).filter((question) => {
    const key = normalized(question.question);
    return !seen.has(key) && seen.add(key);
  });
  return picked.slice(0, options.total).map((question, i) => ({ ...question, id: `q${String(i + 1).padStart(4, '0')}` }));
}
