import type { ErrorLocation, ValidationIssue } from './errors.js';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from './json-depth.js';

/**
 * Text the service can store and index: well-formed UTF-16 (no lone surrogate, which has no UTF-8
 * form) and no NUL character (PostgreSQL text and jsonb refuse it). JSON and GraphQL escapes can
 * carry both (`"\ud800"`, `"\u0000"`), so every string a client sends is checked against this once,
 * at the transport's door, instead of failing deep in a driver as a 500.
 */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** NUL, or a surrogate standing alone: in a `u` regular expression a well-formed pair is one code point, never `\p{Cs}`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this refuses (PostgreSQL text cannot hold it).
const UNSTORABLE = /[\u0000\p{Cs}]/u;

const TEXT_ISSUE = { msg: 'Text must be valid Unicode without NUL characters (no \\u0000, no unpaired surrogate)', type: 'string_unicode' };

/**
 * Every string in a JSON-like value (object keys included) that is not storable text, each at its
 * place under `loc`. Objects are walked to MAX_JSON_DEPTH levels; a key's issue is located at that
 * key, and an array or object nested deeper is one issue at its place (not walked: the recursion stays shallow).
 */
export function unstorableTextIssues(value: unknown, loc: ErrorLocation): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const walk = (node: unknown, at: ErrorLocation, depth: number) => {
    if (typeof node === 'string') {
      if (!isStorableText(node)) issues.push({ loc: at, ...TEXT_ISSUE });
    } else if (node !== null && typeof node === 'object' && depth >= MAX_JSON_DEPTH) {
      issues.push({ loc: at, msg: TOO_DEEP_MESSAGE, type: 'value_error' });
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, [...at, index], depth + 1));
    } else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        if (!isStorableText(key)) issues.push({ loc: [...at, key], ...TEXT_ISSUE });
        walk(item, [...at, key], depth + 1);
      }
    }
  };
  walk(value, loc, 0);
  return issues;
}
