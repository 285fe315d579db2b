/**
 * When deliveries are attempted: the first at once, then after each failure the next delay, until
 * the schedule runs out and the delivery has failed. 8 attempts over about 27.5 hours.
 */
export const RETRY_DELAYS_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];

/** The spec's delivery timeout. */
export const DELIVERY_TIMEOUT_SECONDS = 30;

export interface DeliverySchedule {
  /** Delay before each attempt after the first (index 0 follows the first failure). */
  retryDelaysMs: number[];
  timeoutMs: number;
}

export const DEFAULT_SCHEDULE: DeliverySchedule = {
  retryDelaysMs: RETRY_DELAYS_SECONDS.slice(1).map((seconds) => seconds * 1000),
  timeoutMs: DELIVERY_TIMEOUT_SECONDS * 1000,
};

/**
 * Test and benchmark hook, not an operator setting: `CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE` as
 * `<timeout ms>:<retry delay ms>,<retry delay ms>,…` compresses the schedule so suites run in seconds.
 */
export const SCHEDULE_OVERRIDE_ENV = 'CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE';

export function deliverySchedule(env: NodeJS.ProcessEnv = process.env): DeliverySchedule {
  const raw = env[SCHEDULE_OVERRIDE_ENV];
  if (!raw) return DEFAULT_SCHEDULE;
  const match = /^(\d+):(\d+(?:,\d+)*)?$/.exec(raw.trim());
  if (!match) throw new Error(`${SCHEDULE_OVERRIDE_ENV} must look like "<timeout ms>:<delay ms>,<delay ms>", got "${raw}"`);
  return { timeoutMs: Number(match[1]), retryDelaysMs: match[2] ? match[2].split(',').map(Number) : [] };
}

/** Delay before the next attempt after `attemptsMade` failed attempts, or null when none is left. */
export function nextRetryDelayMs(schedule: DeliverySchedule, attemptsMade: number): number | null {
  return schedule.retryDelaysMs[attemptsMade - 1] ?? null;
}
