import type { z } from 'zod';
import type { GitHubApi } from './github-api.js';
import type { Mark } from './schemas.js';

/**
 * Reading listings ordered by `updated_at` from a mark on (see markSchema): what is read once is not
 * read again, and a run stopped half-way continues from the last mark it saved.
 */

const time = (iso: string) => Date.parse(iso);

/** Whether an item comes after the mark: updated later, or at the mark's time and not read yet. */
export function isAfter(mark: Mark | null, id: string, updatedAt: string): boolean {
  if (!mark) return true;
  const difference = time(updatedAt) - time(mark.at);
  return difference > 0 || (difference === 0 && !mark.ids.includes(id));
}

/** The mark once the item (in ascending update order) is read. */
export function advance(mark: Mark | null, id: string, updatedAt: string): Mark {
  if (mark && time(updatedAt) === time(mark.at)) return { at: mark.at, ids: mark.ids.includes(id) ? mark.ids : [...mark.ids, id] };
  if (mark && time(updatedAt) < time(mark.at)) return mark;
  return { at: updatedAt, ids: [id] };
}

/**
 * The items of a list endpoint that takes `since` and `sort=updated&direction=asc` (issues, issue
 * comments, review comments), in pages of items after `mark()`. Each page is asked for with `since`
 * at the current mark rather than by page number: an item updated during the run moves to the end
 * of the listing, which would shift a later item onto a page already read. Only a full page of
 * items already read (more than a page updated in the same second) follows the Link header instead.
 */
export async function* updatedSince<T extends { id: number; updated_at: string }>(
  api: GitHubApi,
  path: string,
  item: z.ZodType<T>,
  mark: () => Mark | null,
  query: Record<string, string> = {},
): AsyncGenerator<T[]> {
  let linked: string | null = null;
  for (;;) {
    const current = mark();
    const { items, next }: { items: T[]; next: string | null } = await api.page(linked ?? path, item, linked ? undefined : { ...query, sort: 'updated', direction: 'asc', since: current?.at });
    const fresh: T[] = items.filter((entry) => isAfter(current, String(entry.id), entry.updated_at));
    if (fresh.length) yield fresh;
    if (!next) return;
    linked = fresh.length ? null : next;
  }
}
