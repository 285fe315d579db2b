import { Cron } from 'croner';

/** Next time a cron expression (UTC) fires after `after`; null when it never will. Throws on a bad expression. */
export function nextRun(cron: string, after: Date): Date | null {
  return new Cron(cron, { paused: true, timezone: 'UTC' }).nextRun(after);
}
