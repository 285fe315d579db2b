import type { SkippedItem } from '../../connectors/connector.js';

/** How many skipped items a job lists by path or id; all of them are counted by reason. */
export const SKIPPED_ITEMS_LISTED = 1000;

/** What a job stored about the items its source left out (`sync_jobs.skipped`). */
export interface SkippedRecord {
  count: number;
  byReason: Record<string, number>;
  /** The first SKIPPED_ITEMS_LISTED, in the order the source reported them. */
  items: SkippedItem[];
}

export const NOTHING_SKIPPED: SkippedRecord = { count: 0, byReason: {}, items: [] };

/** A job's skips as the source reports them (SyncContext.reportSkipped): counted by reason, the first ones listed. */
export class SkipTally {
  private record: SkippedRecord = { count: 0, byReason: {}, items: [] };
  /** Whether something was reported since the record was last taken (so progress saves it only then). */
  private changed = false;

  add(item: SkippedItem): void {
    const { record } = this;
    record.count += 1;
    record.byReason[item.reason] = (record.byReason[item.reason] ?? 0) + 1;
    if (record.items.length < SKIPPED_ITEMS_LISTED) {
      record.items.push({ entityId: item.entityId, reason: item.reason, ...(item.detail ? { detail: item.detail } : {}) });
    }
    this.changed = true;
  }

  /** Continues from `record` (a job's skips as of the checkpoint its run resumes from) instead of what was reported so far. */
  continueFrom(record: SkippedRecord): void {
    this.record = { count: record.count, byReason: { ...record.byReason }, items: [...record.items] };
    this.changed = true;
  }

  get count(): number {
    return this.record.count;
  }

  /** The record to store, or undefined when nothing was reported since the last call. */
  takeChanged(): SkippedRecord | undefined {
    if (!this.changed) return undefined;
    this.changed = false;
    return this.snapshot();
  }

  snapshot(): SkippedRecord {
    return { count: this.record.count, byReason: { ...this.record.byReason }, items: [...this.record.items] };
  }
}

/** One page of a stored record's listed items, with the counts by reason (most frequent first). */
export function skippedPage(record: SkippedRecord | null, limit: number, offset: number) {
  const stored = record ?? NOTHING_SKIPPED;
  return {
    count: stored.count,
    listed: stored.items.length,
    byReason: Object.entries(stored.byReason)
      .map(([reason, count]) => ({ reason, count }))
      .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
    items: stored.items.slice(offset, offset + limit).map((item) => ({ entityId: item.entityId, reason: item.reason, detail: item.detail ?? null })),
  };
}
