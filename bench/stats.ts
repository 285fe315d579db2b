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
