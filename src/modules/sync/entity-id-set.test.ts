import { expect, test } from '@jest/globals';
import { EntityIdSet } from './entity-id-set.js';

test('an id set answers for every id added and none other, through its growth, and counts each id once', () => {
  const ids = new EntityIdSet();
  const added = (i: number) => `stub-${i}`;
  for (let i = 0; i < 300_000; i++) ids.add(added(i));
  for (let i = 0; i < 300_000; i += 7) ids.add(added(i)); // again: no change
  expect(ids.size).toBe(300_000);
  for (let i = 0; i < 300_000; i++) if (!ids.has(added(i))) throw new Error(`lost ${added(i)}`);
  // Ids one character or one digit away, and the empty id, were never added.
  const others = ['', 'stub-', 'stub-300000', 'stub-0 ', 'Stub-1', 'stub-1\u0000', ...Array.from({ length: 300_000 }, (_, i) => `stub-${i}x`)];
  expect(others.filter((id) => ids.has(id))).toEqual([]);
});

test('ids of any characters are told apart (code units beyond one byte, long ids)', () => {
  const ids = new EntityIdSet();
  const names = ['naïve', 'naive', '東京', '東亰', '🐋', '🐳', 'x'.repeat(10_000), `${'x'.repeat(9_999)}y`];
  ids.add(names[0]!);
  ids.add(names[2]!);
  ids.add(names[4]!);
  ids.add(names[6]!);
  expect(names.map((name) => ids.has(name))).toEqual([true, false, true, false, true, false, true, false]);
  expect(ids.size).toBe(4);
});
