/** What a run did with the source's items, as the job reports it. */
export interface SyncCounts {
  inserted: number;
  updated: number;
  deleted: number;
  skipped: number;
  failed: number;
  chunks: number;
}

export const NO_COUNTS: Readonly<SyncCounts> = { inserted: 0, updated: 0, deleted: 0, skipped: 0, failed: 0, chunks: 0 };

/** What one of the source's items came to; `superseded`: the same id came again later in its batch, which counts it once. */
export type ItemOutcome = 'inserted' | 'updated' | 'skipped' | 'deleted' | 'superseded';

/**
 * A batch's items' outcomes, in the source's order, so the counts are known at any item of the batch,
 * not only at its end: a checkpoint falls anywhere in a batch, and a job resumed from it continues
 * from the counts as of the checkpoint's item (the resumed source yields again what came after it).
 */
export class BatchOutcomes {
  private readonly outcomes: ItemOutcome[] = [];
  private readonly chunks: number[] = [];

  add(outcome: ItemOutcome, chunks = 0): void {
    this.outcomes.push(outcome);
    this.chunks.push(chunks);
  }

  /** Sets the outcome of the item at `index` (of this batch), once it is known. */
  set(index: number, outcome: ItemOutcome, chunks = 0): void {
    this.outcomes[index] = outcome;
    this.chunks[index] = chunks;
  }

  get size(): number {
    return this.outcomes.length;
  }

  /**
   * `before` plus the first `items` of the batch. The database says how many deletions removed a
   * stored entity (`deleted`, for the whole batch): a deletion of one it did not hold counts nothing,
   * so those of the first items count at most that many.
   */
  countsThrough(before: SyncCounts, items: number, deleted: number): SyncCounts {
    const counts = { ...before };
    let deletions = 0;
    for (let index = 0; index < items; index++) {
      const outcome = this.outcomes[index]!;
      if (outcome === 'deleted') deletions++;
      else if (outcome !== 'superseded') counts[outcome]++;
      counts.chunks += this.chunks[index]!;
    }
    counts.deleted += Math.min(deletions, deleted);
    return counts;
  }
}
