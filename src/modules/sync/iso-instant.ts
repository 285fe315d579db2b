const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const threeDigits = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `date.toISOString()`, the same string, in less than half its time: V8's toISOString took ~430 ns
 * a call here against ~180 ns for the UTC getters, and a sync formats each entity's two dates for its
 * content hash and again for the raw data store. Years outside 0-9999 (written with a sign and six
 * digits) and invalid dates (a RangeError) are left to toISOString itself.
 */
export function isoInstant(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return `${year < 1000 ? String(year).padStart(4, '0') : year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}.${threeDigits(date.getUTCMilliseconds())}Z`;
}
