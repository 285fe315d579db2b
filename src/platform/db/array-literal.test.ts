import { expect, test } from '@jest/globals';
import { integerArray, textArray, timestampArray, timestampText } from './array-literal.js';

/** What the literals read as is tested against both databases in entity-store.test.ts; here, their text. */
test('text arrays quote every element and escape only backslashes and double quotes; null is NULL', () => {
  expect(textArray([])).toBe('{}');
  expect(textArray(['a,b', '{x}', 'say "hi"', 'back\\slash', 'NULL', '', null])).toBe('{"a,b","{x}","say \\"hi\\"","back\\\\slash","NULL","",NULL}');
  expect(textArray([JSON.stringify({ quote: '"', path: 'C:\\' })])).toBe('{"{\\"quote\\":\\"\\\\\\"\\",\\"path\\":\\"C:\\\\\\\\\\"}"}');
});

test('integer arrays refuse what is not a whole number', () => {
  expect(integerArray([0, -3, 42])).toBe('{0,-3,42}');
  expect(() => integerArray([1.5])).toThrow('Not an integer: 1.5');
  expect(() => integerArray([Number.NaN])).toThrow(TypeError);
});

test('instants: ISO 8601 in UTC within years 1-9999, the full year beyond, BC before year 1; an invalid date throws', () => {
  expect(timestampText(new Date('2024-02-29T23:59:58.123Z'))).toBe('2024-02-29T23:59:58.123Z');
  expect(timestampText(new Date('0001-01-01T00:00:00.000Z'))).toBe('0001-01-01T00:00:00.000Z');
  expect(timestampText(new Date('+010000-01-01T00:00:00.001Z'))).toBe('10000-01-01T00:00:00.001+00:00');
  expect(timestampText(new Date('0000-06-15T12:00:00.000Z'))).toBe('0001-06-15T12:00:00.000+00:00 BC');
  expect(timestampText(new Date('-000044-03-15T00:00:00.000Z'))).toBe('0045-03-15T00:00:00.000+00:00 BC');
  expect(() => timestampText(new Date(Number.NaN))).toThrow(RangeError);
  expect(timestampArray([new Date(0), null])).toBe('{"1970-01-01T00:00:00.000Z",NULL}');
  // What the types rule out but a connector's JavaScript may give: NULL, as the pg driver made it.
  expect(timestampArray([undefined as unknown as null])).toBe('{NULL}');
  expect(textArray([undefined as unknown as null])).toBe('{NULL}');
});
