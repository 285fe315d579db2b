/**
 * A run's checkpoints (SyncContext.checkpoint) and when they may be stored: a checkpoint covers the
 * items the source yielded before it, so it is stored only once the pipeline committed them all.
 */
export class RunCheckpoints {
  /** Items the source has yielded so far. */
  private yielded = 0;
  /** Checkpoints not stored yet, each with the number of items yielded before it, in order. */
  private pending: { after: number; cursor: unknown }[] = [];

  /** SyncContext.checkpoint: remembers `cursor` as of the items yielded until now. */
  readonly checkpoint = (cursor: unknown): void => {
    this.pending.push({ after: this.yielded, cursor });
  };

  /** The source's items, counted as they pass to the pipeline. */
  async *count<Item>(items: AsyncIterable<Item>): AsyncGenerator<Item> {
    for await (const item of items) {
      this.yielded++;
      yield item;
    }
  }

  /**
   * The latest checkpoint that `committed` items cover (the pipeline committed the first `committed`
   * items of the run), with the number of items yielded before it, or undefined when none is due; it
   * and those before it are then done.
   */
  committedThrough(committed: number): { after: number; cursor: unknown } | undefined {
    let due: { after: number; cursor: unknown } | undefined;
    while (this.pending.length > 0 && this.pending[0]!.after <= committed) due = this.pending.shift()!;
    return due;
  }
}
