/**
 * Test helper: Linear's Relay connections for the fake server (./test-linear-server.ts), as
 * linear.app/developers/pagination and /filtering describe them: `first` ≤ 250 (default 50), `after`
 * an opaque cursor, `orderBy: createdAt | updatedAt`, `includeArchived` default false, `filter` with
 * DateComparator. The documentation does not say the direction; this server lists newest first.
 */

/** What a listed node has that paging, ordering and filtering read. */
interface RelayNode {
  id: string;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
}

const encodeCursor = (sortValue: string, id: string) => Buffer.from(JSON.stringify([sortValue, id])).toString('base64url');

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  includeArchived?: boolean | null;
  orderBy?: 'createdAt' | 'updatedAt' | null;
  filter?: Filter | null;
}
interface DateComparator {
  eq?: string;
  neq?: string;
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
}
interface Filter {
  updatedAt?: DateComparator;
  issue?: { null?: boolean; updatedAt?: DateComparator };
}

export function dateHolds(value: string, comparator: DateComparator | undefined): boolean {
  if (!comparator) return true;
  const time = Date.parse(value);
  const at = (bound: string) => Date.parse(bound);
  return (
    (comparator.eq === undefined || time === at(comparator.eq)) &&
    (comparator.neq === undefined || time !== at(comparator.neq)) &&
    (comparator.gt === undefined || time > at(comparator.gt)) &&
    (comparator.gte === undefined || time >= at(comparator.gte)) &&
    (comparator.lt === undefined || time < at(comparator.lt)) &&
    (comparator.lte === undefined || time <= at(comparator.lte))
  );
}

export class UserInputError extends Error {}

/** One page of `records` as a Relay connection of `view`s, newest first by `orderBy`; `keep` narrows the records further. */
export function relayConnection<T extends RelayNode, View>(records: Iterable<T>, args: ConnectionArgs, view: (record: T) => View, keep: (record: T) => boolean = () => true) {
  const first = args.first ?? 50;
  if (first < 0 || first > 250) throw new UserInputError('first must be between 0 and 250');
  const orderBy = args.orderBy ?? 'createdAt';
  const sorted = [...records]
    .filter((record) => (args.includeArchived || record.archivedAt === null) && dateHolds(record.updatedAt, args.filter?.updatedAt) && keep(record))
    .sort((a, b) => b[orderBy].localeCompare(a[orderBy]) || b.id.localeCompare(a.id));
  let start = 0;
  if (args.after) {
    let position: [string, string];
    try {
      position = JSON.parse(Buffer.from(args.after, 'base64url').toString('utf8')) as [string, string];
    } catch {
      throw new UserInputError('Invalid cursor');
    }
    // Newest first: continue with what sorts after the cursor's position.
    start = sorted.findIndex((record) => record[orderBy] < position[0] || (record[orderBy] === position[0] && record.id < position[1]));
    if (start < 0) start = sorted.length;
  }
  const page = sorted.slice(start, start + first);
  const last = page.at(-1);
  return {
    nodes: page.map(view),
    pageInfo: {
      hasNextPage: start + first < sorted.length,
      hasPreviousPage: start > 0,
      startCursor: page[0] ? encodeCursor(page[0][orderBy], page[0].id) : null,
      endCursor: last ? encodeCursor(last[orderBy], last.id) : null,
    },
  };
}
