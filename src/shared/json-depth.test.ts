import { expect, test } from '@jest/globals';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

/** Arrays (or objects, every other level) nested `depth` levels, built from JSON text: JSON.stringify itself overflows past ~10,000. */
const nested = (depth: number) => JSON.parse('[{"a":'.repeat(depth / 2) + '1' + '}]'.repeat(depth / 2)) as unknown;

test('a value nested to the limit passes, one level more does not; scalars and empty containers count as JSON does', () => {
  expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
  expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 2), MAX_JSON_DEPTH)).toBe(true);
  expect(nestsDeeperThan('text', 0)).toBe(false);
  expect(nestsDeeperThan([], 0)).toBe(true);
  expect(nestsDeeperThan([], 1)).toBe(false);
  expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
  expect(nestsDeeperThan({ a: [1, { b: [] }] }, 4)).toBe(false);
});

test('a value a million levels deep is told apart without overflowing the stack', () => {
  expect(nestsDeeperThan(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
});
