/**
 * The wait an HTTP answer asks for before a retry, in milliseconds, or null when it asks none (or says
 * something unreadable): `retry-after-ms` (OpenAI, Azure), else `Retry-After` as delay seconds or an
 * HTTP date (RFC 9110 §10.2.3). One reading for every client that retries: sources, the raw data store,
 * token endpoints, embedding endpoints.
 */
export function retryAfterMs(headers: { get(name: string): string | null }, now: number = Date.now()): number | null {
  const milliseconds = headers.get('retry-after-ms')?.trim();
  if (milliseconds && /^\d+(\.\d+)?$/.test(milliseconds)) return Number(milliseconds);
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its weekday and month ("Tue, 24 Nov 2026 10:00:30 GMT"); Date.parse alone would take "-3" as a year.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
