import { afterEach, describe, expect, test } from '@jest/globals';
import { waitFor } from '../../../test/support/wait.js';
import { BeeJobQueue } from './bee-queue.js';
import { InProcessQueue, type JobQueue } from './queue.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
let opened: JobQueue[] = [];
afterEach(async () => {
  await Promise.all(opened.map((queue) => queue.close()));
  opened = [];
});

/** Producer and worker sides; for Redis they are separate connections, as in separate processes. */
describe.each<[string, () => { producer: JobQueue; worker: JobQueue }]>([
  [
    'in-process',
    () => {
      const queue = new InProcessQueue();
      opened.push(queue);
      return { producer: queue, worker: queue };
    },
  ],
  [
    'bee-queue on Redis',
    () => {
      const prefix = `catchment-test-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const producer = new BeeJobQueue(REDIS_URL, { prefix });
      const worker = new BeeJobQueue(REDIS_URL, { prefix });
      opened.push(producer, worker);
      return { producer, worker };
    },
  ],
])('%s job queue', (_name, open) => {
  test('runs every job once, with at most `concurrency` at a time', async () => {
    const { producer, worker } = open();
    const done: number[] = [];
    let running = 0;
    let peak = 0;
    worker.process<{ n: number }>('work', 2, async ({ n }) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 30));
      running--;
      done.push(n);
    });
    for (let n = 0; n < 8; n++) await producer.add('work', { n });
    await waitFor(() => done.length === 8);
    expect([...done].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(2);
  });

  test('jobs added before a worker exists wait for it; delayed jobs wait their delay', async () => {
    const { producer, worker } = open();
    const seen: { label: string; at: number }[] = [];
    const start = Date.now();
    await producer.add('later', { label: 'delayed' }, { delayMs: 600 });
    await producer.add('later', { label: 'now' });
    worker.process<{ label: string }>('later', 1, async ({ label }) => {
      seen.push({ label, at: Date.now() - start });
    });
    await waitFor(() => seen.length === 2);
    expect(seen.map((s) => s.label)).toEqual(['now', 'delayed']);
    expect(seen[1]!.at).toBeGreaterThanOrEqual(550);
  });

  test('a job id already queued is not added twice', async () => {
    const { producer, worker } = open();
    const seen: string[] = [];
    await producer.add('dedupe', { v: 'first' }, { id: 'same-id' });
    await producer.add('dedupe', { v: 'second' }, { id: 'same-id' });
    worker.process<{ v: string }>('dedupe', 1, async ({ v }) => {
      seen.push(v);
    });
    await waitFor(() => seen.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual(['first']);
  });

  test('a failing job is retried up to its retry count', async () => {
    const { producer, worker } = open();
    let attempts = 0;
    worker.process('flaky', 1, async () => {
      attempts++;
      if (attempts < 3) throw new Error('not yet');
    });
    await producer.add('flaky', {}, { retries: 3, backoffMs: 20 });
    await waitFor(() => attempts === 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(attempts).toBe(3);
  });
});
