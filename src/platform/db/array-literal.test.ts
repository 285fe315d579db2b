import { expect, test } from '@jest/globals';
import { instantArrays, integerArray, textArray, timestampText } from './array-literal.js';

/** What the literals read as is tested against both databases in entity-store.test.ts; here, their text. */
test('text arrays quote every element and escape only backslashes and double quotes; null is NULL', () => {
  expect(textArray([])).toBe('{}');
  // Written by JSON.stringify: PostgreSQL reads an unquoted null, in any case, as NULL.
  expect(textArray(['a,b', '{x}', 'say "hi"', 'back\\slash', 'NULL', '', null])).toBe('{"a,b","{x}","say \\"hi\\"","back\\\\slash","NULL","",null}');
  expect(textArray([JSON.stringify({ quote: '"', path: 'C:\\' })])).toBe('{"{\\"quote\\":\\"\\\\\\"\\",\\"path\\":\\"C:\\\\\\\\\\"}"}');
});

test('control characters and lone surrogates go as themselves, not as the escapes JSON writes for them', () => {
  // An array literal reads `\n` as the letter n: such elements take the element-by-element path.
  expect(textArray(['line\nbreak', 'tab\there', 'bell\u0007', 'half \ud83d', null])).toBe('{"line\nbreak","tab\there","bell\u0007","half \ud83d",NULL}');
  // A backslash followed by a letter JSON would use is escaped as any backslash, on either path.
  expect(textArray(['C:\\new', 'say "hi"'])).toBe('{"C:\\\\new","say \\"hi\\""}');
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
  // Epoch milliseconds where PostgreSQL's interval product is exact (years 1684-2255), the text beyond.
  expect(instantArrays([new Date(0), null, new Date('2255-06-05T23:47:34.740Z'), new Date('2255-06-05T23:47:34.741Z'), new Date('1684-07-28T00:12:25.260Z'), new Date('1684-07-28T00:12:25.259Z')])).toEqual({
    millis: '{0,NULL,9007199254740,NULL,-9007199254740,NULL}',
    text: '{null,null,null,"2255-06-05T23:47:34.741Z",null,"1684-07-28T00:12:25.259Z"}',
  });
  expect(() => instantArrays([new Date(Number.NaN)])).toThrow(RangeError);
  // What the types rule out but a connector's JavaScript may give: NULL, as the pg driver made it.
  expect(instantArrays([undefined as unknown as null])).toEqual({ millis: '{NULL}', text: '{null}' });
  expect(textArray([undefined as unknown as null])).toBe('{null}');
});
