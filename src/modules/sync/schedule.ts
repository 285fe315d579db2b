import { Cron } from 'croner';

/**
 * A cron expression in UTC. `utcOffset: 0` rather than `timezone: 'UTC'`: the same times, without
 * croner converting every candidate through Intl (ten times faster, which matters when checking a
 * schedule's runs). Throws on a bad expression.
 */
function utcCron(cron: string): Cron {
  return new Cron(cron, { paused: true, utcOffset: 0 });
}

/** Next time a cron expression (UTC) fires after `after`; null when it never will. Throws on a bad expression. */
export function nextRun(cron: string, after: Date): Date | null {
  return utcCron(cron).nextRun(after);
}

/**
 * The run after the one due at `dueAt`, at least `minIntervalSeconds` after it and after `now`. Schedules
 * are checked against the minimum when saved, but one saved before the rule (or under a lower minimum)
 * would otherwise still fire every few seconds; for any schedule that honours the minimum this is
 * simply its next run.
 */
export function nextScheduledRun(cron: string, dueAt: Date, now: Date, minIntervalSeconds: number): Date | null {
  const earliest = Math.max(now.getTime(), dueAt.getTime() + minIntervalSeconds * 1000 - 1);
  return nextRun(cron, new Date(earliest));
}

/**
 * Runs looked at to find a schedule's shortest interval. The shortest gap of a cron expression shows
 * within two turns of its fastest-changing field (60 seconds, 60 minutes or 24 hours, and the wrap
 * into the next minute, hour or day), so about 122 runs; 500 leave room for day and month rules.
 */
const INTERVAL_WINDOW_RUNS = 500;

/** The shortest time in seconds between two consecutive runs after `after`; null when it runs at most once. */
export function shortestInterval(cron: string, after: Date): number | null {
  const runs = utcCron(cron).nextRuns(INTERVAL_WINDOW_RUNS, after);
  let shortest: number | null = null;
  for (let index = 1; index < runs.length; index++) {
    const gap = (runs[index]!.getTime() - runs[index - 1]!.getTime()) / 1000;
    if (shortest === null || gap < shortest) shortest = gap;
  }
  return shortest;
}

/**
 * Why a connection may not have this schedule, or null when it may: the expression must parse, run
 * at least once, and leave at least `minIntervalSeconds` between runs (a sync every second would run
 * forever and crowd out every other job).
 */
export function scheduleProblem(cron: string, minIntervalSeconds: number, now = new Date()): string | null {
  let first: Date | null;
  try {
    first = nextRun(cron, now);
  } catch (error) {
    return `Invalid cron expression: ${(error as Error).message}`;
  }
  if (!first) return 'Invalid cron expression: it never runs';
  const shortest = shortestInterval(cron, now);
  if (shortest !== null && shortest < minIntervalSeconds) {
    return `Cron expression runs every ${shortest} second${shortest === 1 ? '' : 's'} at times; schedules must leave at least ${minIntervalSeconds} seconds between runs`;
  }
  return null;
}
