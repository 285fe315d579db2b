import { performance } from 'node:perf_hooks';

/** The `p`th percentile (0–100) of ascending values, nearest rank; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** nDCG@10 of a ranking (ids, best first) against graded relevance (id → gain; exponential gain, log2 discount). */
export function ndcgAt10(ranked: string[], relevant: Map<string, number>): number {
  const dcg = ranked.slice(0, 10).reduce((sum, id, i) => sum + ((2 ** (relevant.get(id) ?? 0) - 1) / Math.log2(i + 2)), 0);
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, 10).reduce((sum, gain, i) => sum + ((2 ** gain - 1) / Math.log2(i + 2)), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

/**
 * Runs `run` once per item, `concurrency` at a time (each client takes the next item until none is
 * left), timing each call; the latencies in ms ascending, and the wall time in seconds.
 */
export async function timeConcurrently<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const t0 = performance.now();
        await run(item);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
}
