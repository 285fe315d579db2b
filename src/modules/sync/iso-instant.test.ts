import { expect, test } from '@jest/globals';
import { isoInstant } from './iso-instant.js';

test('instants format as toISOString formats them: random ones over years -200 to 10200, and the edges of 0-9999, leap days, 1970 and before it', () => {
  const edges = [0, -1, 1, Date.UTC(2000, 1, 29, 23, 59, 59, 999), -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15];
  const low = -68_500_000_000_000;
  const high = 259_700_000_000_000;
  const random = Array.from({ length: 20_000 }, () => Math.floor(low + Math.random() * (high - low)));
  for (const time of [...edges, ...random]) {
    const date = new Date(time);
    expect(isoInstant(date)).toBe(date.toISOString());
  }
});

test('an invalid date throws as toISOString does', () => {
  expect(() => isoInstant(new Date(Number.NaN))).toThrow(/Invalid time value/);
});
