/**
 * PostgreSQL array literals (`{"a","say \"hi\"",NULL}`) for parameters cast to an array type
 * (`$1::text[]`, `jsonb[]`, `int[]`, `timestamptz[]`, `int8[]`), sent as the text they are. The `pg` driver
 * makes the same text from a JavaScript array, but escapes each element in two regular-expression
 * passes and formats each Date in local time with a dozen string pads: ~250 ms of the main thread in
 * a 100,000-entity sync (bench:sync --cpu-profile-dir), which this does in a third of the work, and
 * strings mostly through JSON.stringify (see textArray): ~340 → ~90 ms, and ~220 MB less allocated
 * (bench:sync --heap-profile-dir).
 */

/** What an element's quotes must escape: its backslashes and double quotes. */
const ESCAPED = /[\\"]/g;

/**
 * What JSON writes for a control character or a lone surrogate (`\n`, `\u0001`, `\ud800`), which an
 * array literal would read as the letter after the backslash. It may also match an escaped backslash
 * followed by one of these letters (`\\n`): the slow path then runs where it was not needed, never the other way.
 */
const JSON_ONLY_ESCAPE = /\\[bfnrtu]/;

/**
 * Strings (and nulls) as an array literal of any text-like type: text, varchar, jsonb (JSON text), uuid.
 * JSON.stringify of the array writes the literal's body (each string quoted with `\"` and `\\`
 * escaped, `null` for NULL) in one native pass, unless an element holds a control character or a lone
 * surrogate: 0.75 against 3.4 ms for a batch's breadcrumbs and fields (2,000 each; node
 * micro-benchmark), and no intermediate string an element. JSON text (a jsonb column's values) never
 * holds those characters raw, so the slow path is for names and ids that do.
 */
export function textArray(values: readonly (string | null)[]): string {
  const json = JSON.stringify(values);
  if (!JSON_ONLY_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`;
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (i > 0) literal += ',';
    // `== null`: an undefined that slipped past the types is NULL, as the driver made it.
    literal += value == null ? 'NULL' : `"${value.replace(ESCAPED, '\\$&')}"`;
  }
  return `${literal}}`;
}

/** Integers as an `int[]` literal. */
export function integerArray(values: readonly number[]): string {
  for (const value of values) if (!Number.isSafeInteger(value)) throw new TypeError(`Not an integer: ${value}`);
  return `{${values.join(',')}}`;
}

/**
 * Epoch milliseconds within which `ms * interval '1 millisecond'` is exact: PostgreSQL multiplies
 * the interval's microseconds by the factor as doubles, exact while the product stays under 2^53
 * (years 1684 to 2255).
 */
const EXACT_MILLIS = 2 ** 53 / 1000;

/**
 * Instants (and nulls) as two parallel literals, read as
 * `coalesce(text::timestamptz, timestamptz 'epoch' + millis * interval '1 millisecond')` (see
 * INSTANT_OF): epoch milliseconds (`int8[]`) where that is exact (EXACT_MILLIS), else the instant as
 * text (`timestamptz[]`, NULL where the milliseconds are given). PGlite parsed a batch's 4,000
 * timestamp texts in ~4.5 ms of its upsert's CPU and the milliseconds in next to nothing (`unnest` of
 * two such arrays 6.0–6.5 against 1.5 ms), and each text took ~0.5 µs to make here (toISOString).
 */
export function instantArrays(values: readonly (Date | null)[]): { millis: string; text: string } {
  let millis = '{';
  const text: (string | null)[] = [];
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const ms = value == null ? null : value.getTime();
    const exact = ms !== null && Math.abs(ms) <= EXACT_MILLIS;
    if (i > 0) millis += ',';
    millis += exact ? ms : 'NULL';
    // timestampText throws for an invalid date (NaN), as PostgreSQL would refuse one.
    text.push(value == null || exact ? null : timestampText(value));
  }
  return { millis: `${millis}}`, text: textArray(text) };
}

/** The SQL of an instant given as instantArrays' two columns. */
export const INSTANT_OF = (text: string, millis: string) => `coalesce(${text}, timestamptz 'epoch' + ${millis} * interval '1 millisecond')`;

/**
 * An instant as PostgreSQL reads it: ISO 8601 in UTC for years 1 to 9999 (what toISOString writes),
 * else the year in full (toISOString writes six digits and a sign) and, before year 1, as `BC`
 * (astronomical year 0 is 1 BC).
 */
export function timestampText(date: Date): string {
  const iso = date.toISOString(); // a RangeError for an invalid date, as PostgreSQL would refuse one
  const year = date.getUTCFullYear();
  if (year >= 1 && year <= 9999) return iso;
  const rest = iso.slice(iso.indexOf('-', 1)).replace('Z', '+00:00');
  return year < 1 ? `${String(1 - year).padStart(4, '0')}${rest} BC` : `${year}${rest}`;
}
