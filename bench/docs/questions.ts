/**
 * Questions for bench:docs, made from the documents' own structure — no hand-written question, no
 * corpus-specific rule — each answered by exactly one file:
 * - `faq`: a section heading that is already a question ("How do I …?", as in FAQ pages), asked as is;
 * - `summary`: a man-page style one-line summary without the page's name ("git-add - Add file contents
 *   to the index" → "How do I add file contents to the index?");
 * - `heading`: a section heading (not the page's title, numbering dropped) put in a question
 *   ("5.4.3. Unique Constraints" → "What should I know about unique constraints?").
 * A heading or summary found in more than one file (or a file's title elsewhere) is ambiguous and
 * dropped, as are headings of fewer than two content words ("Examples", "Notes").
 * Those three kinds reuse the documents' words; given WordNet, two harder kinds follow (bench/docs/paraphrase.ts):
 * - `paraphrase`: each of those questions again, with synonyms, a word dropped and another template;
 * - `body`: a distinctive sentence from the middle of a section, lightly paraphrased, for up to
 *   half as many files as there are questions above.
 * Files are split into dev and test by a seeded hash of their path, so the two halves never share an
 * answering file; every question of a file (paraphrases included) is in that file's half.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Structure } from './corpus.js';
import { seededRandom } from '../../src/shared/seeded-random.js';
import { bodyQuestion, paraphraseQuestion, shuffle, statementSentence, type ParaphraseContext, type Phrasing } from './paraphrase.js';
import type { WordNet } from './wordnet.js';

export const QUESTION_KINDS = ['faq', 'summary', 'heading', 'paraphrase', 'body'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];
export type Split = 'dev' | 'test';

export interface Question {
  id: string;
  question: string;
  /** The answering file: its path relative to the corpus folder, the entity id of the local_folder file. */
  answer: string;
  /** The heading, summary or sentence the question came from. */
  section: string;
  kind: QuestionKind;
  split: Split;
  /** A paraphrase: the id of the question it rephrases. */
  source?: string;
}

export interface QuestionOptions {
  seed: number;
  /** At most this many questions from one file. */
  perFile: number;
  /** At most this many faq, summary and heading questions in all (both splits); paraphrase and body questions come on top. */
  total: number;
  /** Makes the paraphrase and body kinds; without it only the documents' own words are asked. */
  wordnet?: WordNet;
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


const HEADING_FORMS = [
  (topic: string) => `What should I know about ${topic}?`,
  (topic: string) => `Tell me about ${topic}`,
  (topic: string) => `Where do the docs cover ${topic}?`,
];

/**
 * What a summary asks: a verb phrase ("define a new table") is a task, a noun phrase ("the interactive
 * terminal", or one starting with the first word of the page's name, "git's own …") a thing.
 */
function summaryPhrasing(summary: string, name: string): Phrasing {
  const phrase = sentenceCase(summary.replace(/[.;:]+$/, '').trim());
  const first = words(phrase)[0] ?? '';
  if (['a', 'an', 'the', 'this', 'these', 'some', 'one', 'various', 'miscellaneous'].includes(first) || first === name) return { shape: 'thing', phrase };
  if (/^\p{L}+ing$/u.test(first)) return { shape: 'doing', phrase };
  if (/[^su]s$/.test(first)) return { shape: 'does', phrase }; // "lists the …", "shows …"
  return { shape: 'task', phrase };
}

/** What a heading asks: "How to …" a task, "Creating …" an activity, anything else a thing. */
function headingPhrasing(heading: string): Phrasing {
  const topic = sentenceCase(heading.replace(/[.:]+$/, ''));
  const howTo = /^how to\s+(.+)$/i.exec(topic);
  if (howTo) return { shape: 'task', phrase: howTo[1]! };
  if (/^\p{L}+ing\b/u.test(topic)) return { shape: 'doing', phrase: topic };
  return { shape: 'thing', phrase: topic };
}

/** A summary's or heading's question; a heading's topic (a thing) in one of several forms. */
function asked({ shape, phrase }: Phrasing, kind: 'summary' | 'heading', next: () => number): string {
  if (shape === 'task') return `How do I ${phrase}?`;
  if (shape === 'doing') return `How do I go about ${phrase}?`;
  if (shape === 'does') return `What ${phrase}?`;
  if (kind === 'summary') return `What is ${phrase}?`;
  return HEADING_FORMS[Math.floor(next() * HEADING_FORMS.length)]!(phrase);
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

  const next = seededRandom(options.seed);
  const phrasingOf = new Map<Question, Phrasing>();
  const candidates: Question[][] = [];
  for (const structure of structures) {
    const titleKeys = new Set(structure.title.split(/\s+[|—–-]\s+/).map((part) => normalized(withoutNumbering(part))));
    // The page's own title: its highest-level heading among the unambiguous ones, and any heading repeating the <title>.
    const ownHeadings = structure.headings.filter(unique);
    const topLevel = ownHeadings[0];
    const stem = normalized(path.basename(structure.id, path.extname(structure.id)));
    const own: Question[] = [];
    const add = (phrasing: Phrasing, question: string, section: string, kind: QuestionKind) => {
      const made: Question = { id: '', question, answer: structure.id, section, kind, split: splitOf(structure.id, options.seed) };
      phrasingOf.set(made, phrasing);
      own.push(made);
    };
    if (structure.summary && unique(structure.summary) && contentWords(structure.summary).length >= 2) {
      const phrasing = summaryPhrasing(structure.summary, stem.split(' ')[0]!);
      add(phrasing, asked(phrasing, 'summary', next), structure.summary, 'summary');
    }
    for (const heading of new Set(ownHeadings)) {
      const topic = withoutNumbering(heading);
      const key = normalized(topic);
      if (heading === topLevel || titleKeys.has(key) || key === stem || topic.length > 120) continue;
      if (topic.endsWith('?') && contentWords(topic).length >= 2) add({ shape: 'question', phrase: topic }, topic, heading, 'faq');
      else if (contentWords(topic).length >= 2 && words(topic).length <= 12) {
        const phrasing = headingPhrasing(topic);
        add(phrasing, asked(phrasing, 'heading', next), heading, 'heading');
      }
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
  const own = picked.slice(0, options.total).map((question, i) => ({ ...question, id: `q${String(i + 1).padStart(4, '0')}`, phrasing: phrasingOf.get(question)! }));
  const questions = own.map(({ phrasing, ...question }) => question);
  if (!options.wordnet) return questions;

  // The harder kinds draw from their own seeded sequence, so the questions above stay the same with or without them.
  const derive = seededRandom(options.seed ^ 0x5eed);
  const vocabulary = new Set(structures.flatMap((structure) => words([structure.title, ...structure.headings, structure.summary ?? '', ...structure.sentences].join(' '))));
  const contextOf = (structure: Structure, extra: string): ParaphraseContext => ({
    wordnet: options.wordnet!,
    senseHints: new Set(words([structure.title, ...structure.headings, structure.summary ?? '', extra].join(' '))),
    vocabulary,
    next: derive,
  });
  const byId = new Map(structures.map((structure) => [structure.id, structure]));
  const paraphrases: Question[] = [];
  for (const { phrasing, ...question } of own) {
    const paraphrased = paraphraseQuestion(phrasing, contextOf(byId.get(question.answer)!, question.section));
    const key = paraphrased && normalized(paraphrased);
    if (!paraphrased || seen.has(key!)) continue;
    seen.add(key!);
    paraphrases.push({ ...question, id: question.id.replace(/^q/, 'p'), question: paraphrased, kind: 'paraphrase', source: question.id });
  }
  return [...questions, ...paraphrases, ...bodyQuestions(structures, Math.round(options.total / 2), seen, options.seed, contextOf, derive)];
}

/**
 * Up to `count` body questions, one per file: a statement no other file contains, distinctive but not
 * the file's most distinctive (ranked by the summed rarity across the corpus of its three rarest words,
 * the one a third of the way down: the top ones hang on a term only that file uses, which keyword
 * search alone finds), paraphrased.
 */
function bodyQuestions(
  structures: Structure[],
  count: number,
  seen: Set<string>,
  seed: number,
  contextOf: (structure: Structure, extra: string) => ParaphraseContext,
  next: () => number,
): Question[] {
  const filesWith = new Map<string, number>();
  const sentenceFiles = new Map<string, number>();
  for (const structure of structures) {
    for (const word of new Set(structure.sentences.flatMap(contentWords))) filesWith.set(word, (filesWith.get(word) ?? 0) + 1);
    for (const key of new Set(structure.sentences.map(normalized))) sentenceFiles.set(key, (sentenceFiles.get(key) ?? 0) + 1);
  }
  const rarity = (sentence: string) =>
    [...new Set(contentWords(sentence))]
      .map((word) => Math.log(structures.length / (filesWith.get(word) ?? 1)))
      .sort((a, b) => b - a)
      .slice(0, 3)
      .reduce((sum, value) => sum + value, 0);
  const questions: Question[] = [];
  for (const structure of shuffle(structures, next)) {
    if (questions.length >= count) break;
    const statements = structure.sentences.filter((sentence) => statementSentence(sentence) && sentenceFiles.get(normalized(sentence)) === 1);
    const ranked = statements.sort((a, b) => rarity(b) - rarity(a));
    const third = Math.floor(ranked.length / 3);
    for (const sentence of [...ranked.slice(third, third + 3), ...ranked.slice(0, third)]) {
      const asked = bodyQuestion(sentence, contextOf(structure, sentence));
      if (!asked || seen.has(normalized(asked))) continue;
      seen.add(normalized(asked));
      questions.push({ id: `b${String(questions.length + 1).padStart(4, '0')}`, question: asked, answer: structure.id, section: sentence, kind: 'body', split: splitOf(structure.id, seed) });
      break;
    }
  }
  return questions;
}
