import { describe, expect, test } from '@jest/globals';
import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  const clock = () => {
    let now = 1_000;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  test('keeps a loaded value for its TTL, then loads again', async () => {
    const time = clock();
    const cache = new TtlCache<number>(1000, 10, time.now);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('a', load)).toBe(1);
    time.advance(999);
    expect(await cache.get('a', load)).toBe(1);
    time.advance(1);
    expect(await cache.get('a', load)).toBe(2);
  });

  test('concurrent misses share one load; failures are not kept', async () => {
    const cache = new TtlCache<string>(1000);
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const load = async () => {
      loads++;
      await gate;
      return 'value';
    };
    const both = Promise.all([cache.get('k', load), cache.get('k', load)]);
    release();
    expect(await both).toEqual(['value', 'value']);
    expect(loads).toBe(1);

    let attempts = 0;
    const failing = async () => {
      attempts++;
      throw new Error('not found');
    };
    await expect(cache.get('missing', failing)).rejects.toThrow('not found');
    await expect(cache.get('missing', failing)).rejects.toThrow('not found');
    expect(attempts).toBe(2);
  });

  test('invalidate drops entries, and a load that overlapped it is returned but not kept', async () => {
    const cache = new TtlCache<number>(60_000);
    let loads = 0;
    expect(await cache.get('a', async () => ++loads)).toBe(1);
    cache.invalidate();
    expect(await cache.get('a', async () => ++loads)).toBe(2);

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stale = cache.get('b', async () => {
      await gate;
      return 100;
    });
    cache.invalidate(); // the write happened while the old state was being read
    const fresh = cache.get('b', async () => 200); // does not join the stale load
    release();
    expect(await stale).toBe(100);
    expect(await fresh).toBe(200);
    expect(await cache.get('b', async () => 300)).toBe(200);
  });

  test('holds at most maxEntries, dropping the oldest; a TTL of 0 never caches', async () => {
    const cache = new TtlCache<string>(60_000, 2);
    for (const key of ['a', 'b', 'c']) await cache.get(key, async () => key);
    expect(await cache.get('a', async () => 'reloaded')).toBe('reloaded');
    expect(await cache.get('c', async () => 'reloaded')).toBe('c');

    const off = new TtlCache<number>(0);
    let loads = 0;
    await off.get('a', async () => ++loads);
    await off.get('a', async () => ++loads);
    expect(loads).toBe(2);
  });

  test('set keeps a value at once, and a load of its key under way is returned but not kept over it', async () => {
    const cache = new TtlCache<string>(60_000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const older = cache.get('k', async () => {
      await gate;
      return 'read before the change';
    });
    cache.set('k', 'current');
    expect(cache.peek('k')).toBe('current');
    release();
    expect(await older).toBe('read before the change');
    expect(await cache.get('k', async () => 'loaded')).toBe('current');
  });

  test('invalidate(key) drops that key only, with its loads under way', async () => {
    const cache = new TtlCache<number>(60_000);
    await cache.get('a', async () => 1);
    await cache.get('b', async () => 2);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    cache.invalidate('a');
    const stale = cache.get('a', async () => {
      await gate;
      return 10;
    });
    cache.invalidate('a');
    release();
    expect(await stale).toBe(10);
    expect(cache.peek('a')).toBeUndefined();
    expect(await cache.get('b', async () => 20)).toBe(2);
  });

  test('keep decides whether a load is kept, given the value it replaces, expired or not', async () => {
    const time = clock();
    const cache = new TtlCache<string[]>(1000, 10, time.now);
    const replacedSeen: (string[] | undefined)[] = [];
    const keepNonEmpty = (value: string[], replaced: string[] | undefined) => {
      replacedSeen.push(replaced);
      return value.length > 0;
    };
    expect(await cache.get('c', async () => [], keepNonEmpty)).toEqual([]);
    expect(cache.peek('c')).toBeUndefined();
    expect(await cache.get('c', async () => ['s0', 's1'], keepNonEmpty)).toEqual(['s0', 's1']);
    time.advance(1000);
    expect(await cache.get('c', async () => ['s1'], keepNonEmpty)).toEqual(['s1']);
    expect(replacedSeen).toEqual([undefined, undefined, ['s0', 's1']]);
    expect(await cache.get('c', async () => ['other'], keepNonEmpty)).toEqual(['s1']);
  });
});
