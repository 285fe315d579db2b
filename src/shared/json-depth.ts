/**
 * How deep a client's JSON may nest arrays and objects. Code that walks a value by recursion (the
 * text checks at the transports' doors, JSON.stringify on the way to a jsonb column) overflowed the
 * stack on a body nested ~10,000 levels deep, a 500. Nothing the API takes nests near this: the
 * deepest is a pushed entity's `fields` (32 levels, PUSH_LIMITS) inside a request's envelope.
 */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `JSON nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`;

/**
 * Whether `value` nests arrays and objects more than `max` levels deep (a scalar is 0, `[]` 1). It
 * stops descending past `max`, so its own recursion never goes deeper than that, whatever the value.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max <= 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (nestsDeeperThan(child, max - 1)) return true;
  return false;
}
