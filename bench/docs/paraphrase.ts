/**
 * Harder questions for bench:docs, in the words a person might use rather than the document's:
 * - `paraphrase`: a summary, heading or FAQ question with about half of its content words replaced by
 *   common WordNet synonyms, an article or modifier dropped, and the phrase put in
 *   another question template ("How do I define a new table?" → "Is there a way to specify a new array?");
 * - `body`: a distinctive sentence from the middle of a section (not its heading), about half of its
 *   content words replaced the same way, asked as "Where is it explained that …?".
 * Words that look like code (capitals inside or after the first letter, digits, punctuation) are never
 * replaced, and a replacement must occur somewhere in the corpus, which keeps the domain's senses
 * ("server" does not become "waiter" in a database manual).
 */
import type { PartOfSpeech, WordNet } from './wordnet.js';

/**
 * What a question asks about: a task (verb phrase), what something does ("lists the …"), an activity
 * (-ing phrase), a thing (noun phrase) or a question already.
 */
export type Shape = 'task' | 'does' | 'doing' | 'thing' | 'question';

export interface Phrasing {
  shape: Shape;
  phrase: string;
}

export interface ParaphraseContext {
  wordnet: WordNet;
  /** Lowercase words of the answering file's title, headings and the source phrase: the sense to prefer. */
  senseHints: Set<string>;
  /** Lowercase words of the whole corpus: a replacement must be one of them. */
  vocabulary: Set<string>;
  next: () => number;
}

const TEMPLATES: Record<Exclude<Shape, 'question' | 'does'>, ((phrase: string) => string)[]> = {
  task: [(p) => `How can I ${p}?`, (p) => `Is there a way to ${p}?`, (p) => `What is the way to ${p}?`, (p) => `I want to ${p}, how?`, (p) => `Steps to ${p}?`],
  doing: [(p) => `Any advice on ${p}?`, (p) => `How does one go about ${p}?`, (p) => `What is involved in ${p}?`],
  thing: [(p) => `How does ${p} work?`, (p) => `Where can I read about ${p}?`, (p) => `Explain ${p}`, (p) => `Is there a page on ${p}?`],
};
const BODY_TEMPLATES = [(s: string) => `Where is it explained that ${s}?`, (s: string) => `Which page says that ${s}?`, (s: string) => `I read that ${s}; where was that?`];

const FUNCTION_WORDS = new Set(
  'a an the and or but nor of to in on at by for from with without into onto over under about as is are was were be been being do does did have has had not no can could may might must shall should will would this that these those it its their there here which what when where who whom whose why how than then also only very more most such each every all any some other another same own so if else per via'.split(' '),
);
/** A plain lowercase English word (not code, not an acronym, not a number). */
const plainWord = (token: string) => /^[a-z]{3,}$/.test(token) && !FUNCTION_WORDS.has(token);

/**
 * Replaces a share (at least one) of the plain content words of `phrase` and, unless it is a sentence,
 * drops an article or, in longer phrases, one modifier. A task's first word is its verb.
 * Null when no word could be replaced: the result must differ from the source in its words.
 */
function rewrite(phrase: string, shape: Shape | 'sentence', share: number, context: ParaphraseContext): string | null {
  const { wordnet, senseHints, vocabulary, next } = context;
  const tokens = phrase.split(/(\s+)/);
  const wordAt = tokens.map((token, i) => (i % 2 === 0 && plainWord(token) ? token : null));
  const positions = wordAt.flatMap((word, i) => (word ? [i] : []));
  const wanted = Math.max(1, Math.round(positions.length * share));
  let replaced = 0;
  for (const i of shuffle(positions, next)) {
    if (replaced >= wanted) break;
    const word = wordAt[i]!;
    // A phrase is a verb and its objects or a noun phrase; a question or a sentence may hold anything.
    const parts: PartOfSpeech[] = shape === 'task' && i === 0 ? ['verb'] : shape === 'question' || shape === 'sentence' ? ['noun', 'verb', 'adj', 'adv'] : ['noun', 'adj'];
    const pos = wordnet.likeliestPart(word, parts) ?? wordnet.likeliestPart(word, ['verb', 'adv']);
    if (!pos) continue;
    const found = wordnet.replacement(word, pos, senseHints);
    if (!found || !found.split(' ').every((part) => vocabulary.has(part))) continue;
    tokens[i] = found;
    wordAt[i] = null;
    replaced++;
  }
  if (replaced === 0) return null;
  // Drop a leading article, and in a phrase of four or more content words one adjective left unreplaced (each with the space after it).
  // The adjective must modify the plain word after it ("a new table"), not follow a verb ("is not feasible").
  const dropWords = shape !== 'sentence';
  const dropped = new Set<number>();
  if (dropWords && /^(the|a|an)$/i.test(tokens[0] ?? '') && tokens.length > 2 && next() < 0.5) dropped.add(0);
  const adjectives = wordAt.flatMap((word, i) =>
    word && i > 0 && plainWord(tokens[i + 2] ?? '') && !/^(is|are|be|not|was|were)$/.test(tokens[i - 2] ?? '') && wordnet.likeliestPart(word, ['noun', 'adj', 'verb']) === 'adj' ? [i] : [],
  );
  if (dropWords && positions.length >= 4 && adjectives.length > 0) dropped.add(adjectives[Math.floor(next() * adjectives.length)]!);
  return tokens
    .filter((_, i) => !dropped.has(i) && !dropped.has(i - 1))
    .join('')
    .replace(/\s+/g, ' ')
    .replace(/\b([Aa])n? ([a-z])/g, (_, article: string, initial: string) => `${article}${'aeio'.includes(initial) ? 'n' : ''} ${initial}`) // "a user"
    .trim();
}

/** A paraphrase of a question asked as `phrasing`, in a template other than the source's; null when nothing could be replaced. */
export function paraphraseQuestion(phrasing: Phrasing, context: ParaphraseContext): string | null {
  const phrase = phrasing.phrase.replace(/\s*\([^)]*\)/g, '').replace(/[?.!]+$/, '');
  if (phrasing.shape === 'question') {
    const rewritten = rewrite(phrase.charAt(0).toLowerCase() + phrase.slice(1), 'question', 0.5, context);
    return rewritten && `${rewritten.charAt(0).toUpperCase()}${rewritten.slice(1)}?`;
  }
  // "lists the …" asked as the task "list the …".
  const [first = '', ...rest] = phrase.split(' ');
  const verb = phrasing.shape === 'does' && context.wordnet.likeliestPart(first) === 'verb' ? context.wordnet.lemma(first, 'verb') : null;
  const shape = phrasing.shape === 'does' ? (verb ? 'task' : 'thing') : phrasing.shape;
  const task = verb ? [verb, ...rest].join(' ') : phrase;
  const rewritten = rewrite(task, shape, 0.5, context);
  if (!rewritten) return null;
  const templates = TEMPLATES[shape];
  return templates[Math.floor(context.next() * templates.length)]!(rewritten);
}

/** Sentences that read as a statement on their own: no code, no markup, no pronoun pointing back to what came before. */
const CODE = /[`{}<>=$\\|_[\]*#@~^]|--|\w\.\w|\(\)|'\w+'/;
const DEICTIC = /^(this|that|these|those|it|its|they|their|such|here|there|see|also|then|otherwise|note|example|for example|e\.g|i\.e)\b/i;
export function statementSentence(sentence: string): boolean {
  const words = sentence.split(/\s+/);
  if (words.length < 8 || words.length > 30 || !/^[A-Z]([a-z]| [a-z])/.test(sentence) || !/[a-z]\.$/.test(sentence)) return false;
  if (CODE.test(sentence) || DEICTIC.test(sentence)) return false;
  return words.filter((word) => /^[a-z]+[,;:]?$/.test(word)).length >= words.length * 0.7;
}

/** A sentence as a "where is it explained that …" question, about half of its content words replaced; null when none could be. */
export function bodyQuestion(sentence: string, context: ParaphraseContext): string | null {
  const statement = sentence.replace(/^(however|also|moreover|in addition|in particular|by default|finally|instead|thus|therefore),\s+/i, '').replace(/\.$/, '');
  const first = statement.split(' ')[0]!;
  const lowered = /^[A-Z][a-z]+$/.test(first) ? statement.charAt(0).toLowerCase() + statement.slice(1) : statement;
  const rewritten = rewrite(lowered, 'sentence', 0.5, context);
  return rewritten && BODY_TEMPLATES[Math.floor(context.next() * BODY_TEMPLATES.length)]!(rewritten);
}

export function shuffle<T>(items: T[], next: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
