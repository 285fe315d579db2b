import { describe, expect, test } from '@jest/globals';
import { applyNativeMemorySettings, NATIVE_MEMORY_SETTINGS } from '../../src/platform/vectors/lancedb/connection.js';
import { useLanceDbIndex } from '../support/lancedb-fixture.js';

/**
 * Issue 18, finding 8 (the 1,000,000-entity sync's memory): every compaction rewrites every fragment
 * under 1,048,576 rows, all of a table up to that size, and then its full-text index for the moved
 * rows; by default that index is one partition of up to 4 GiB, held whole while it is rewritten (at
 * 600,000 chunks one optimize() took up to 720 MiB more RSS at its peak, and glibc kept most of it).
 * Lance reads the sizes of its partitions (NATIVE_MEMORY_SETTINGS) from the environment at their
 * first use, so the connection sets those the environment lacks before LanceDB runs anything.
 */
describe('issue 18-08: LanceDB upkeep runs with bounded native buffers', () => {
  test('the settings the environment lacks are set; an operator value is kept', () => {
    const unset: NodeJS.ProcessEnv = { OTHER: 'x' };
    applyNativeMemorySettings(unset);
    expect(unset).toEqual({ ...NATIVE_MEMORY_SETTINGS, OTHER: 'x' });
    const given: NodeJS.ProcessEnv = { LANCE_FTS_PARTITION_SIZE: '512' };
    applyNativeMemorySettings(given);
    expect(given).toEqual({ LANCE_FTS_PARTITION_SIZE: '512' });
  });

  test('a malformed operator value is refused with its name, before Lance would abort the process on it', () => {
    for (const bad of ['', '64MiB', '0', '-1', '1e3']) {
      expect(() => applyNativeMemorySettings({ LANCE_FTS_PARTITION_SIZE: bad })).toThrow(/LANCE_FTS_PARTITION_SIZE must be a positive whole number of MiB/);
    }
  });

  describe('an index opened', () => {
    const lance = useLanceDbIndex(8);
    test('has them in the process environment before its first table', async () => {
      expect(await lance.index.count('any')).toBe(0);
      for (const [name, value] of Object.entries(NATIVE_MEMORY_SETTINGS)) expect(process.env[name]).toBe(value);
    });
  });
});
