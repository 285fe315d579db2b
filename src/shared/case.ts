/** `targetDestinations` → `target_destinations`. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** `target_destinations` → `targetDestinations`. */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * Renames the keys of plain objects at every depth (including GraphQL results, whose objects have a
 * null prototype); arrays and values are kept. Values under an `opaque` key (user-defined maps
 * such as a connection's config) keep their keys as they are.
 */
export function renameKeys(value: unknown, rename: (key: string) => string, opaque: ReadonlySet<string> = NONE): unknown {
  if (Array.isArray(value)) return value.map((item) => renameKeys(item, rename, opaque));
  const prototype = value !== null && typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (prototype === Object.prototype || prototype === null) {
    return Object.fromEntries(
      Object.entries(value as object).map(([key, item]) => [rename(key), opaque.has(key) ? item : renameKeys(item, rename, opaque)]),
    );
  }
  return value;
}

const NONE: ReadonlySet<string> = new Set();
