import { expect, test } from '@jest/globals';
import { makeChunk } from '../vector-index.contract.js';
import { chunkSchema, chunksToArrow, KEYWORDS_COLUMN, LEGACY_LAYOUT } from './arrow.js';

test('text columns hold each value as given: all ASCII, with non-ASCII and lone surrogates, and nulls', () => {
  const names = ['plain ascii', 'naïve — 東京 🐋', 'ends high \ud83d', '\udc0b starts low', ''];
  const chunks = names.map((name, i) => makeChunk(8, i, { name, text: `text ${i}`, entityId: `entity-${i}`, url: i % 2 ? null : `https://example.test/${i}` }));
  const table = chunksToArrow(chunks, chunkSchema(8));
  // Lone surrogates go as U+FFFD (UTF-8 has no code for them), each on its own: not joined into one pair.
  const expected = names.map((name) => name.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
  expect(table.getChild('name')!.toArray()).toEqual(expected);
  expect(table.getChild(KEYWORDS_COLUMN)!.toArray()).toEqual(expected.map((name, i) => `${name}\ntext ${i}`));
  expect(table.getChild('entity_id')!.toArray()).toEqual(names.map((_, i) => `entity-${i}`));
  expect(table.getChild('chunk_id')!.toArray()).toEqual(chunks.map((chunk) => chunk.chunkId));
  // The layout before the details column keeps a nullable url column of its own.
  const legacy = chunksToArrow(chunks, chunkSchema(8, LEGACY_LAYOUT));
  expect(legacy.getChild('url')!.toArray()).toEqual(names.map((_, i) => (i % 2 ? null : `https://example.test/${i}`)));
  expect(legacy.getChild('name')!.toArray()).toEqual(expected);
});
