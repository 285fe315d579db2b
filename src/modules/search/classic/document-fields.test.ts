import { describe, expect, test } from '@jest/globals';
import type { SearchResultView } from '../search-result.js';
import { FIELD_WEIGHTS, FIRST_KEPT_WITHIN, headingsOf, keptWithin, rescoreByFields, stem } from './document-fields.js';

function doc(entityId: string, score: number, text: string, name = entityId): SearchResultView {
  return {
    entityId,
    name,
    relevanceScore: score,
    breadcrumbs: [],
    createdAt: null,
    updatedAt: null,
    textualRepresentation: text,
    serviceSystemMetadata: { sourceName: 'stub', entityType: 'File', chunkIndex: 0, originalEntityId: entityId, syncId: 'c1', syncJobId: 'j1' },
    access: { viewers: null, isPublic: null },
    webUrl: '',
    url: null,
    rawSourceFields: {},
  };
}
const ids = (results: SearchResultView[]) => results.map((r) => r.entityId);
/** Candidates that mention the question's words in passing, scored a little above the one that is about them. */
const filler = (n: number, from = 1) => Array.from({ length: n }, (_, i) => doc(`filler-${i}.md`, from - i * 0.01, `notes on the river survey, with some words on ${i % 2 ? 'ledges' : 'weather'}`));

describe('second stage: the question’s words in name, headings and best passage', () => {
  test('a document whose heading path holds the question’s words rises over ones that only mention some of them', () => {
    const about = doc('nesting.md', 0.9, 'Seabirds › Nesting on cliffs\nThe colony returns every spring to the same ledges.');
    const results = [...filler(6), about];
    const rescored = rescoreByFields('nesting on cliffs', results);
    expect(ids(rescored).indexOf('nesting.md')).toBeLessThan(FIRST_KEPT_WITHIN);
    expect(ids(rescored).indexOf('nesting.md')).toBeLessThan(ids(results).indexOf('nesting.md'));
  });

  test('a file name counts, its run-together words too ("createtable" for "create table")', () => {
    const named = doc('sql-createtable.html', 0.8, 'Synopsis and parameters of the command.', 'sql-createtable.html');
    const results = [...filler(5).map((r) => ({ ...r, textualRepresentation: `${r.textualRepresentation} create table` })), named];
    const rescored = rescoreByFields('create table', results, { ...FIELD_WEIGHTS, heading: 0, passage: 0, phrase: 0, name: 1 });
    expect(rescored[0]!.entityId).toBe('sql-createtable.html');
    // Without the name's words the same document stays last.
    const unnamed = rescoreByFields('create table', [...results.slice(0, 5), { ...named, name: 'reference.html' }], { ...FIELD_WEIGHTS, heading: 0, passage: 0, phrase: 0, name: 1 });
    expect(unnamed.at(-1)!.entityId).toBe('sql-createtable.html');
  });

  test('the question’s words standing together in a passage count more than the same words scattered (phrase share)', () => {
    const scattered = doc('scattered.md', 0.9, 'The branch on the remote server is what upstream tracking follows.');
    const together = doc('together.md', 0.85, 'A remote-tracking branch records where the upstream one stood when last fetched.');
    const results = [filler(1)[0]!, scattered, together];
    const rescored = rescoreByFields('remote tracking branch', results);
    expect(ids(rescored).indexOf('together.md')).toBeLessThan(ids(rescored).indexOf('scattered.md'));
    // Without the phrase share the same words, scattered or not, leave the first-stage order.
    const unphrased = rescoreByFields('remote tracking branch', results, { ...FIELD_WEIGHTS, phrase: 0 });
    expect(ids(unphrased).indexOf('scattered.md')).toBeLessThan(ids(unphrased).indexOf('together.md'));
  });

  test('the first document stays within the first three; scores still order the list; documents past the depth keep their place below', () => {
    const first = doc('first.md', 1, 'unrelated words only');
    const strong = Array.from({ length: 5 }, (_, i) => doc(`strong-${i}.md`, 0.95 - i * 0.01, `Seabirds › Nesting on cliffs\nnesting on cliffs ${i}`));
    const tail = doc('tail.md', 0.1, 'Seabirds › Nesting on cliffs\nnesting on cliffs');
    const results = [first, ...strong, ...filler(3, 0.5), tail];
    const rescored = rescoreByFields('nesting on cliffs', results, { ...FIELD_WEIGHTS, depth: results.length - 1 });
    expect(ids(rescored).indexOf('first.md')).toBe(FIRST_KEPT_WITHIN - 1);
    expect(rescored.at(-1)!.entityId).toBe('tail.md');
    const scores = rescored.map((r) => r.relevanceScore);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(new Set(ids(rescored)).size).toBe(results.length);
  });

  test('a term said again counts less each time (saturation); a long passage holding the words counts less than a short one (length normalization)', () => {
    const passageOnly = { ...FIELD_WEIGHTS, name: 0, heading: 0, passage: 1, fields: 1 };
    // "cliffs" once and "nesting" once beats "cliffs" five times: both words of the question are worth more than one repeated.
    const both = doc('both.md', 0.5, 'nesting below the cliffs');
    const repeated = doc('repeated.md', 0.5, 'cliffs cliffs cliffs cliffs cliffs');
    expect(ids(rescoreByFields('nesting cliffs', [...filler(4), repeated, both], passageOnly)).indexOf('both.md')).toBeLessThan(
      ids(rescoreByFields('nesting cliffs', [...filler(4), repeated, both], passageOnly)).indexOf('repeated.md'),
    );
    const long = doc('long.md', 0.5, `nesting cliffs ${'and other words of a long passage '.repeat(20)}`);
    const short = doc('short.md', 0.5, 'nesting cliffs');
    const order = (bPassage: number) => ids(rescoreByFields('nesting cliffs', [...filler(4), long, short], { ...passageOnly, bPassage }));
    expect(order(1).indexOf('short.md')).toBeLessThan(order(1).indexOf('long.md'));
    // Without length normalization the tie stays in the first stage's order.
    expect(order(0).indexOf('long.md')).toBeLessThan(order(0).indexOf('short.md'));
  });

  test('keptWithin: a document is moved up to the given place or put there when missing; scores still order the list', () => {
    const results = filler(6);
    const moved = keptWithin(results, results[5]!, 3);
    expect(ids(moved)).toEqual(['filler-0.md', 'filler-1.md', 'filler-5.md', 'filler-2.md', 'filler-3.md', 'filler-4.md']);
    expect(keptWithin(results, results[1]!, 3)).toBe(results);
    const outsider = doc('outsider.md', 0.01, 'elsewhere');
    const added = keptWithin(results, outsider, 2);
    expect(ids(added)).toEqual(['filler-0.md', 'outsider.md', ...ids(results.slice(1))]);
    for (const list of [moved, added]) {
      const scores = list.map((r) => r.relevanceScore);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    }
  });

  test('nothing to go on (no words, one candidate, no positive score): the ranking as it was', () => {
    const results = filler(4);
    expect(rescoreByFields('the of and', results)).toBe(results);
    expect(rescoreByFields('river', results.slice(0, 1))).toEqual(results.slice(0, 1));
    const zero = results.map((r) => ({ ...r, relevanceScore: 0 }));
    expect(rescoreByFields('river', zero)).toBe(zero);
  });

  test('stems and headings', () => {
    expect(['tables', 'indexes', 'queries', 'nesting', 'nested', 'class'].map(stem)).toEqual(['table', 'index', 'query', 'nest', 'nest', 'class']);
    expect(headingsOf('A › B\nbody\n## C\nmore')).toBe('A › B\n## C');
    expect(headingsOf('plain text\nno heading')).toBe('');
  });
});
