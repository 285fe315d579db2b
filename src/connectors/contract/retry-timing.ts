/**
 * When to send a connection's requests: pacing at the connector's declared rate, and how long to
 * wait before a retry (the server's own word first, else exponential backoff with jitter).
 */
import { retryAfterMs } from '../../platform/http/retry-after.js';
import type { RequestRate } from './source-http.js';

/**
 * Paces requests at `rate` with a burst allowance (the generic cell rate algorithm: a token bucket
 * kept as the time the next request is due). Waits are computed from the schedule it keeps, so a
 * sleep that returns early (a test's) still yields the waits a real clock would.
 */
export class RequestPacer {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  private due = 0;

  constructor(
    rate: RequestRate,
    private readonly now: () => number = Date.now,
  ) {
    this.intervalMs = 1000 / rate.requestsPerSecond;
    this.toleranceMs = (Math.max(1, rate.burst ?? 1) - 1) * this.intervalMs;
  }

  /** How long the next request must wait before it is sent; the slot is taken at once, so concurrent callers queue up. */
  take(): number {
    const now = this.now();
    this.due = Math.max(this.due, now);
    const wait = this.due - this.toleranceMs - now;
    this.due += this.intervalMs;
    return Math.max(0, wait);
  }
}

const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 30_000;

/** Exponential backoff with "equal jitter": half the step fixed, half random, so retrying clients spread out. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * The wait the server asks for, in milliseconds, or null: `Retry-After` (delay seconds or an HTTP
 * date, RFC 9110 §10.2.3), else `x-ratelimit-reset` (GitHub, GitLab: when the window resets, in
 * epoch seconds; epoch milliseconds and delta seconds are read too).
 */
export function serverWaitMs(headers: Headers, now: number = Date.now()): number | null {
  const asked = retryAfterMs(headers, now);
  if (asked !== null) return asked;
  const reset = Number(headers.get('x-ratelimit-reset') ?? Number.NaN);
  if (Number.isFinite(reset) && reset >= 0) {
    if (reset > 1e12) return Math.max(0, reset - now);
    if (reset > 1e9) return Math.max(0, reset * 1000 - now);
    return reset * 1000;
  }
  return null;
}

/** A rate-limit answer: 429, or 403 with a `Retry-After` or `x-ratelimit-remaining: 0` (GitHub's primary and secondary limits). */
export function isRateLimited(status: number, headers: Headers): boolean {
  if (status === 429) return true;
  return status === 403 && (headers.has('retry-after') || headers.get('x-ratelimit-remaining')?.trim() === '0');
}
