import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { copyCorpus, structureOf } from '../../bench/docs/corpus.js';
import { makeQuestions } from '../../bench/docs/questions.js';
import { WordNet } from '../../bench/docs/wordnet.js';

/** A small documentation folder in the formats bench:docs reads, with the traps its generator must avoid. */
function writeCorpus(dir: string) {
  mkdirSync(path.join(dir, 'ref'), { recursive: true });
  // A PostgreSQL-style reference page: the summary names the page, a heading every page shares.
  writeFileSync(
    path.join(dir, 'ref', 'sql-createwidget.html'),
    '<html><head><title>CREATE WIDGET</title></head><body><div class="refnamediv"><h2>CREATE WIDGET</h2><p>CREATE WIDGET — define a new widget</p></div>' +
      '<h2>Description</h2><p>Widgets.</p><h3>5.4.1. Widget Storage Parameters</h3><p>Storage.</p><h3>Shared Caveats Explained</h3>' +
      '<h3>Widget Lifetime</h3><p>A widget lives until its owner drops it. A widget created inside a transaction disappears when the transaction rolls back before commit. ' +
      'This sentence points back and is not asked.</p><p>Large widgets are stored compressed on disk, so reading them back costs a little processor time.</p></body></html>',
  );
  writeFileSync(
    path.join(dir, 'ref', 'sql-dropwidget.html'),
    '<html><head><title>DROP WIDGET</title></head><body><h2>DROP WIDGET</h2><p>DROP WIDGET — remove a widget</p><h2>Description</h2><h3>Shared Caveats Explained</h3>' +
      '<p>Dropped.</p><p>The space of a big or small widget is free at once.</p></body></html>',
  );
  // A Markdown FAQ.
  writeFileSync(
    path.join(dir, 'faq.md'),
    '# Frequently asked questions\n\n## Why does the gadget refuse my login?\n\nBecause. An expired password makes the gadget reject every attempt until an administrator resets the account.\n\n' +
      '## Gadget Login Troubleshooting\n\nSteps.\n\n    indented code is not prose, even when it reads like a long and plain sentence.\n\nSpecify the record, alter the data, show the change and decline the rest.\n',
  );
  // A man page in AsciiDoc, shipped twice (text and HTML): only the text is kept.
  const man = 'git-frob(1)\n===========\n\nNAME\n----\ngit-frob - Frobnicate the working tree files\n\nSYNOPSIS\n--------\ngit frob\n\nFROB OUTPUT FORMAT\n------------------\nLines.\n';
  writeFileSync(path.join(dir, 'git-frob.txt'), man);
  writeFileSync(path.join(dir, 'git-frob.html'), '<html><body><h2>NAME</h2><p>git-frob - Frobnicate the working tree files</p></body></html>');
  // A compressed page.
  writeFileSync(path.join(dir, 'notes.md.gz'), gzipSync('# Release notes\n\n## Upgrading from older gadgets\n\nText.\n'));
  writeFileSync(path.join(dir, 'style.css'), 'body {}');
}

describe('bench:docs question generator', () => {
  const wordnet = new WordNet();
  const source = mkdtempSync(path.join(tmpdir(), 'bench-docs-src-'));
  const target = mkdtempSync(path.join(tmpdir(), 'bench-docs-out-'));
  writeCorpus(source);
  const files = copyCorpus(source, path.join(target, 'corpus'));
  const structures = files.map(structureOf);
  const questions = makeQuestions(structures, { seed: 13, perFile: 5, total: 100 });
  const all = makeQuestions(structures, { seed: 13, perFile: 5, total: 100, wordnet });
  afterAll(() => {
    rmSync(source, { recursive: true, force: true });
    rmSync(target, { recursive: true, force: true });
  });

  it('copies each document once, in its most source-like format, decompressed', () => {
    expect(files.map((file) => file.id).sort()).toEqual(['faq.md', 'git-frob.txt', 'notes.md', 'ref/sql-createwidget.html', 'ref/sql-dropwidget.html']);
    expect(readFileSync(path.join(target, 'corpus', 'notes.md'), 'utf8')).toContain('## Upgrading from older gadgets');
  });

  it('asks man-page summaries as tasks without the page name, FAQ headings as they are, other headings in a question', () => {
    const asked = new Map(questions.map((question) => [question.question, question]));
    expect(asked.get('How do I define a new widget?')).toMatchObject({ answer: 'ref/sql-createwidget.html', kind: 'summary' });
    expect(asked.get('How do I frobnicate the working tree files?')).toMatchObject({ answer: 'git-frob.txt', kind: 'summary' });
    expect(asked.get('Why does the gadget refuse my login?')).toMatchObject({ answer: 'faq.md', kind: 'faq' });
    expect(asked.get('How do I go about upgrading from older gadgets?')).toMatchObject({ answer: 'notes.md', kind: 'heading' });
    const storage = questions.find((question) => question.section.includes('Widget Storage Parameters'))!;
    expect(storage.question).toMatch(/widget storage parameters/); // numbering dropped, Title Case lowered
    expect(storage.question).not.toMatch(/5\.4/);
    expect(questions.find((question) => question.section === 'FROB OUTPUT FORMAT')!.question).toMatch(/frob output format/);
  });

  it('drops ambiguous headings, titles, one-word headings and names', () => {
    const sections = questions.map((question) => question.section);
    expect(sections).not.toContain('Shared Caveats Explained'); // in two files
    expect(sections).not.toContain('Description');
    expect(sections).not.toContain('Frequently asked questions'); // the page's title
    expect(questions.some((question) => /CREATE WIDGET|git-frob/i.test(question.question))).toBe(false);
  });

  it('is deterministic for a seed and splits by answering file', () => {
    expect(makeQuestions(structures, { seed: 13, perFile: 5, total: 100 })).toEqual(questions);
    const splitOf = new Map<string, Set<string>>();
    for (const question of questions) splitOf.set(question.answer, (splitOf.get(question.answer) ?? new Set()).add(question.split));
    for (const splits of splitOf.values()) expect(splits.size).toBe(1);
    expect(makeQuestions(structures, { seed: 13, perFile: 1, total: 100 }).length).toBe(new Set(questions.map((question) => question.answer)).size);
  });

  it('adds paraphrases and body questions without changing the questions in the documents\' words', () => {
    expect(all.filter((question) => !['paraphrase', 'body'].includes(question.kind))).toEqual(questions);
    expect(makeQuestions(structures, { seed: 13, perFile: 5, total: 100, wordnet })).toEqual(all);
    expect(all.some((question) => question.kind === 'paraphrase')).toBe(true);
    expect(all.some((question) => question.kind === 'body')).toBe(true);
    expect(new Set(all.map((question) => question.question.toLowerCase())).size).toBe(all.length);
  });

  it('paraphrases in other words and another template, answered by the same file in the same split', () => {
    const contentWords = (text: string) => new Set(text.toLowerCase().match(/[a-z]{3,}/g));
    for (const paraphrase of all.filter((question) => question.kind === 'paraphrase')) {
      const source = questions.find((question) => question.id === paraphrase.source)!;
      expect(paraphrase).toMatchObject({ answer: source.answer, split: source.split, section: source.section });
      const before = contentWords(source.question.replace(/^(How do I|What should I know about|Tell me about|Where do the docs cover|What is)/, ''));
      const after = contentWords(paraphrase.question);
      expect([...after].some((word) => !before.has(word) && !/^(how|can|there|way|what|involved|explain|where|read|about|page|does|work|steps|want|one|advice|any|the)$/.test(word))).toBe(true);
      if (source.kind !== 'faq') expect(paraphrase.question).not.toMatch(/^(How do I|What should I know about|Tell me about|Where do the docs cover) /);
    }
    const widget = all.find((question) => question.kind === 'paraphrase' && question.answer === 'ref/sql-createwidget.html' && question.section.startsWith('define'));
    expect(widget?.question).toMatch(/specify/); // "define" → its common synonym, found in the corpus
    expect(widget?.question).not.toMatch(/^How do I/);
  });

  it('asks body questions from prose in the middle of a section, never from code, headings or sentences pointing back', () => {
    const body = all.filter((question) => question.kind === 'body');
    for (const question of body) {
      const owner = structures.find((structure) => structure.id === question.answer)!;
      expect(owner.sentences).toContain(question.section);
      expect(structures.filter((structure) => structure.sentences.includes(question.section))).toHaveLength(1);
      expect(owner.headings).not.toContain(question.section);
      expect(question.question).not.toMatch(/indented code|points back|Because/);
      expect(question.question).toMatch(/^(Where is it explained that|Which page says that|I read that) .+\?$/);
    }
    expect(structures.find((structure) => structure.id === 'faq.md')!.sentences).not.toContain('Because.'); // a section's first sentence
    expect(body.map((question) => question.answer)).toEqual(expect.arrayContaining(['faq.md', 'ref/sql-createwidget.html']));
  });
});
