import { describe, expect, test } from '@jest/globals';
import { UUID_PATTERN, uuidv7 } from './ids.js';

describe('uuidv7', () => {
  test('ids are version 7, RFC 9562 variant, carry their millisecond and are all different past a random pool refill', () => {
    const now = Date.UTC(2026, 10, 24, 5, 0, 0);
    // 4 KiB of pooled randomness serves 256 ids: 2,000 cross several refills.
    const ids = Array.from({ length: 2000 }, (_, i) => uuidv7(now + Math.floor(i / 100)));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(UUID_PATTERN);
      expect(id[14]).toBe('7');
      expect(['8', '9', 'a', 'b']).toContain(id[19]);
    }
    expect(Number.parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
    // The random part differs between ids of one millisecond (not one block handed out twice).
    const randomTails = ids.slice(0, 100).map((id) => id.slice(24));
    expect(new Set(randomTails).size).toBe(100);
  });

  test('ids of one process increase strictly, within a millisecond and when the clock steps back', () => {
    const now = Date.UTC(2027, 0, 1);
    const ids = [uuidv7(now), uuidv7(now), uuidv7(now), uuidv7(now - 5), uuidv7(now + 1)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
