import { describe, expect, test } from '@jest/globals';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { endsWithin } from '../../../test/support/threads.js';
import type { ModelLayout } from './word-vector-core.js';
import { WorkerPool } from './word-vector-embedder.js';

/** A thread that stays up until it is terminated (a worker whose start succeeded). */
function idleWorker(): Worker {
  return new Worker('setInterval(() => {}, 1 << 30);', { eval: true });
}

describe('word-vector worker pool', () => {
  // The pool never reads the layout itself: it hands it to each start.
  const layout = {} as ModelLayout;

  test('a start where one worker fails ends the workers that did start, and fails with that reason', async () => {
    const started: Worker[] = [];
    let calls = 0;
    const startOne = async () => {
      calls++;
      if (calls === 2) throw new Error('second worker failed its start');
      const worker = idleWorker();
      await once(worker, 'online');
      started.push(worker);
      return worker;
    };
    await expect(WorkerPool.start(layout, 3, undefined, startOne)).rejects.toThrow('second worker failed its start');
    // Every start settles before the pool gives up (a Promise.all would reject before the others are online, and fail here)...
    expect(calls).toBe(3);
    expect(started).toHaveLength(2);
    // ...and the started threads are ended: left running, they would hold the process.
    for (const worker of started) expect(await endsWithin(worker, 5_000)).toBe(true);
  });

  test('a start where every worker starts keeps them all until close', async () => {
    const started: Worker[] = [];
    const pool = await WorkerPool.start(layout, 2, undefined, async () => {
      const worker = idleWorker();
      await once(worker, 'online');
      started.push(worker);
      return worker;
    });
    expect(pool.size).toBe(2);
    for (const worker of started) expect(await endsWithin(worker, 200)).toBe(false);
    await pool.close();
    for (const worker of started) expect(await endsWithin(worker, 5_000)).toBe(true);
  });
});
