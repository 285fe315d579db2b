import { GraphQLError } from 'graphql';

/**
 * How deep a GraphQL document may nest braces, brackets and parentheses. graphql-js parses by
 * recursion: a document nesting ~1,500–2,000 levels (objects, lists or selections) overflowed the
 * stack, and the client was told "Maximum call stack size exceeded". A field nests its selection set
 * one level and an argument's literal (MAX_JSON_DEPTH at most, for variables) a few more, so
 * CATCHMENT_GRAPHQL_MAX_DEPTH's largest value (200) fits, with an inline fragment in most levels;
 * only documents nesting fragments in fragments for hundreds of levels reach the limit.
 */
export const MAX_DOCUMENT_NESTING = 500;

/** The parse failure (GRAPHQL_PARSE_FAILED: the transports answer 400) of a document that nests deeper than MAX_DOCUMENT_NESTING, or null. */
export function documentNestingRefusal(source: string): GraphQLError | null {
  if (!bracketsNestDeeperThan(source, MAX_DOCUMENT_NESTING)) return null;
  return new GraphQLError(`Syntax Error: the document nests braces, brackets and parentheses more than ${MAX_DOCUMENT_NESTING} levels deep`, {
    extensions: { code: 'GRAPHQL_PARSE_FAILED' },
  });
}

/** Whether `source` nests `{`, `[` and `(` more than `max` levels, outside strings and comments: a scan, not a parse. */
function bracketsNestDeeperThan(source: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === '{' || char === '[' || char === '(') {
      if (++depth > max) return true;
    } else if (char === '}' || char === ']' || char === ')') depth--;
    else if (char === '#') i = lineEnd(source, i);
    else if (char === '"') i = stringEnd(source, i);
  }
  return false;
}

/** Where the comment or line at `from` ends. */
function lineEnd(source: string, from: number): number {
  let i = from;
  while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
  return i;
}

/** The last index of the string that opens at `from` (a block string's `"""`, escaped as `\"""`, or a one-line string). */
function stringEnd(source: string, from: number): number {
  if (source.startsWith('"""', from)) {
    for (let i = from + 3; i < source.length; i++) {
      if (source.startsWith('\\"""', i)) i += 3;
      else if (source.startsWith('"""', i)) return i + 2;
    }
    return source.length;
  }
  for (let i = from + 1; i < source.length; i++) {
    const char = source[i];
    if (char === '\\') i++;
    else if (char === '"' || char === '\n' || char === '\r') return i;
  }
  return source.length;
}
