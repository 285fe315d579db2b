import { expect, test } from '@jest/globals';
import { documentNestingRefusal, MAX_DOCUMENT_NESTING } from './document-nesting.js';

const nested = (levels: number, inner = 'a') => `${'{'.repeat(levels)}${inner}${'}'.repeat(levels)}`;

test('braces, brackets and parentheses count together, up to MAX_DOCUMENT_NESTING', () => {
  expect(documentNestingRefusal(nested(MAX_DOCUMENT_NESTING))).toBeNull();
  expect(documentNestingRefusal(nested(MAX_DOCUMENT_NESTING + 1))?.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  expect(documentNestingRefusal(`${'([{'.repeat(167)}`)).not.toBeNull(); // 501, never closed
  // Closing brackets bring the level down: many shallow ones are fine.
  expect(documentNestingRefusal(nested(10).repeat(1000))).toBeNull();
});

test('what strings, block strings and comments hold does not count', () => {
  const deep = '{'.repeat(MAX_DOCUMENT_NESTING + 1);
  expect(documentNestingRefusal(`{ a(s: "${deep} \\" ${deep}") }`)).toBeNull();
  expect(documentNestingRefusal(`{ a(s: """${deep} \\""" " ${deep}""") }`)).toBeNull();
  expect(documentNestingRefusal(`{ a # ${deep}\n b }`)).toBeNull();
  // After a string or a comment ends, counting goes on.
  expect(documentNestingRefusal(`"x" # c\n${deep}`)).not.toBeNull();
  expect(documentNestingRefusal(`"""x""" ${deep}`)).not.toBeNull();
});
