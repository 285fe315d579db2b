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

/**
 * Least time between two checkpoints a run stores. Each is a transaction of the connection's cursor
 * and the job's counts, and on the embedded database it runs on the thread the sync runs on: stored
 * at every 2,000-entity batch, the 56 of an unchanged re-sync of 111,000 entities were awaited ~1.7 s
 * of its ~3.4 s (bench:sync on a 2-core host running another benchmark: an indication, not a rate). A run stopped in between (its worker killed) reads again at
 * most this much of the source, whose entities it then skips by hash; a run that fails or stops on
 * its own stores the checkpoint it holds first (CheckpointWriter.flush).
 */
export const CHECKPOINT_MIN_INTERVAL_MS = 1000;

/**
 * Stores a run's due checkpoints (RunCheckpoints.committedThrough, with what goes with them) at most
 * once every `intervalMs`: the first at once, a later one due sooner held until the interval has
 * passed at a later call, and replaced meanwhile by any due after it (which covers more items).
 */
export class CheckpointWriter<Checkpoint> {
  private held: Checkpoint | undefined;
  private storedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: (checkpoint: Checkpoint) => Promise<void>,
    private readonly intervalMs = CHECKPOINT_MIN_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Called as batches commit: `due` (if any) is the checkpoint to store; it, or the one held, is stored once the interval allows. */
  async offer(due: Checkpoint | undefined): Promise<void> {
    if (due !== undefined) this.held = due;
    if (this.now() - this.storedAt < this.intervalMs) return;
    await this.flush();
  }

  /** Stores the checkpoint held, if any, whatever the interval: the run stops here. */
  async flush(): Promise<void> {
    const checkpoint = this.held;
    if (checkpoint === undefined) return;
    this.held = undefined;
    this.storedAt = this.now();
    await this.store(checkpoint);
  }
}
