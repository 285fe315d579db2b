import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '../logger.js';

/**
 * Start-up against an external PostgreSQL. A server that accepts TCP but never answers (a stopped
 * VM behind a proxy, a firewall that drops packets) would otherwise hold the process forever without
 * a word, and one that is still starting (a compose stack) would fail it at once. Each attempt has
 * a timeout, failures are retried with growing pauses until the configured time is spent, and every
 * attempt is logged with the URL's password masked.
 */

/** Thrown when PostgreSQL cannot be reached in time, or refuses us for good (bad password, no such database). */
export class DatabaseUnreachableError extends Error {}

/** Longest wait for one attempt's handshake; also the pool's wait for a new connection later on. */
export const CONNECT_ATTEMPT_TIMEOUT_MS = 10_000;
/** A short budget still gets a few attempts: each may take at most this share of it (and at least a second). */
const ATTEMPTS_PER_BUDGET = 3;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 8_000;

/** SQLSTATE classes no retry can fix: invalid authorization (28…) and a database that does not exist. */
const permanent = (code: string | undefined) => code !== undefined && (code.startsWith('28') || code === '3D000');

/** The URL with its password masked, for logs and errors. */
export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = 'redacted';
  return parsed.toString();
}

export async function waitForDatabase(url: string, options: { timeoutMs: number; logger: Logger }): Promise<void> {
  const database = redactedUrl(url);
  const deadline = Date.now() + options.timeoutMs;
  const longestAttemptMs = Math.min(CONNECT_ATTEMPT_TIMEOUT_MS, Math.max(1000, options.timeoutMs / ATTEMPTS_PER_BUDGET));
  for (let attempt = 1; ; attempt++) {
    const attemptTimeoutMs = Math.max(1, Math.min(longestAttemptMs, deadline - Date.now()));
    options.logger.info({ database, attempt, timeoutMs: attemptTimeoutMs }, 'connecting to PostgreSQL');
    let failure: Error & { code?: string };
    try {
      await probe(url, attemptTimeoutMs);
      if (attempt > 1) options.logger.info({ database, attempt }, 'connected to PostgreSQL');
      return;
    } catch (error) {
      failure = error as Error & { code?: string };
    }
    if (permanent(failure.code)) {
      throw new DatabaseUnreachableError(`PostgreSQL at ${database} refused the connection: ${failure.message} (check DATABASE_URL)`);
    }
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) {
      throw new DatabaseUnreachableError(
        `PostgreSQL at ${database} could not be reached in ${options.timeoutMs / 1000} s (${attempt} attempt${attempt === 1 ? '' : 's'}, the last: ${failure.message}); ` +
          'check DATABASE_URL and that the server is up, or allow more time with CATCHMENT_DATABASE_CONNECT_TIMEOUT_SECONDS',
      );
    }
    const pauseMs = Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), LONGEST_PAUSE_MS, remainingMs);
    options.logger.warn({ database, attempt, error: failure.message, retryInMs: pauseMs }, 'PostgreSQL is not reachable yet');
    await sleep(pauseMs);
  }
}

/** One connection, handshake and authentication included, within `timeoutMs`. */
async function probe(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {}); // a late socket error of a failed attempt must not crash the process
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => {});
  }
}
