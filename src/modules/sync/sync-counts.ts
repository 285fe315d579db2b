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

/**
 * What one of the source's items came to. `superseded`: the same id came again later in its batch,
 * which counts it once; `absent`: a deletion of an id the connection did not hold (or one the batch
 * deleted already), which counts nothing.
 */
export type ItemOutcome = 'inserted' | 'updated' | 'skipped' | 'deleted' | 'superseded' | 'absent';

/**
 * A batch's items' outcomes, in the source's order, so the counts are known at any item of the batch,
 * not only at its end: a checkpoint falls anywhere in a batch, and a job resumed from it continues
 * from the counts as of the checkpoint's item (the resumed source yields again what came after it).
 */
export class BatchOutcomes {
  private readonly outcomes: ItemOutcome[] = [];
  private readonly chunks: number[] = [];
  /** The id each deletion item names, by its index. */
  private readonly deletionIds = new Map<number, string>();

  add(outcome: ItemOutcome, chunks = 0): void {
    this.outcomes.push(outcome);
    this.chunks.push(chunks);
  }

  /** Adds a deletion of `entityId`: `deleted` until `settleDeletions` says whether it removed a stored entity. */
  addDeletion(entityId: string): void {
    this.deletionIds.set(this.outcomes.length, entityId);
    this.add('deleted');
  }

  /** Sets the outcome of the item at `index` (of this batch), once it is known. */
  set(index: number, outcome: ItemOutcome, chunks = 0): void {
    this.outcomes[index] = outcome;
    this.chunks[index] = chunks;
  }

  /** Marks `superseded` each deletion of an id the batch also yields (the entity wins). */
  supersedeDeletions(yielded: ReadonlyMap<string, unknown>): void {
    for (const [index, entityId] of this.deletionIds) if (yielded.has(entityId)) this.outcomes[index] = 'superseded';
  }

  /**
   * Given the ids the database removed, each deletion item counts where it came: the first of an id
   * removed is `deleted`, any other (an id not stored, or deleted again) `absent`.
   */
  settleDeletions(removed: ReadonlySet<string>): void {
    const counted = new Set<string>();
    for (const [index, entityId] of this.deletionIds) {
      if (this.outcomes[index] !== 'deleted') continue; // superseded by an entity of the batch
      if (removed.has(entityId) && !counted.has(entityId)) counted.add(entityId);
      else this.outcomes[index] = 'absent';
    }
  }

  get size(): number {
    return this.outcomes.length;
  }

  /** `before` plus the first `items` of the batch. */
  countsThrough(before: SyncCounts, items: number): SyncCounts {
    const counts = { ...before };
    for (let index = 0; index < items; index++) {
      const outcome = this.outcomes[index]!;
      if (outcome !== 'superseded' && outcome !== 'absent') counts[outcome]++;
      counts.chunks += this.chunks[index]!;
    }
    return counts;
  }
}
