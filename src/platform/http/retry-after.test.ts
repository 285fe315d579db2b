import { expect, test } from '@jest/globals';
import { retryAfterMs } from './retry-after.js';

const headers = (values: Record<string, string>) => new Headers(values);

test('Retry-After is read as delay seconds or an HTTP date, retry-after-ms first; anything else asks nothing', () => {
  const now = Date.parse('2026-11-24T10:00:00Z');
  expect(retryAfterMs(headers({ 'retry-after': '120' }), now)).toBe(120_000);
  expect(retryAfterMs(headers({ 'retry-after': '1.5' }), now)).toBe(1500);
  expect(retryAfterMs(headers({ 'retry-after': 'Tue, 24 Nov 2026 10:00:30 GMT' }), now)).toBe(30_000);
  expect(retryAfterMs(headers({ 'retry-after': 'Tue, 24 Nov 2026 09:00:00 GMT' }), now)).toBe(0);
  expect(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
  expect(retryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBeNull();
  expect(retryAfterMs(headers({ 'retry-after': '-3' }), now)).toBeNull();
  expect(retryAfterMs(headers({}), now)).toBeNull();
});
