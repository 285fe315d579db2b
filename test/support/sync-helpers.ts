import { http, type HttpResult } from './harness.js';

export type Api = (method: string, path: string, body?: unknown) => Promise<HttpResult<any>>;

export function api(baseUrl: string, apiKey: string): Api {
  return (method, path, body) => http(baseUrl, method, path, { apiKey, body });
}

/** Polls a job until it reaches one of `statuses`. */
/** Polls the connection's jobs every `pollMs` until the job reaches one of `statuses`. */
export async function waitForJob(call: Api, connectionId: string, jobId: string, statuses: string[], timeoutMs = 60_000, pollMs = 100): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const jobs = await call('GET', `/source-connections/${connectionId}/jobs`);
    const job = (jobs.body as any[]).find((j) => j.id === jobId);
    if (job && statuses.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Polls until `check` holds. */
export async function eventually<T>(probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const FAST_WORKER = {
  CATCHMENT_WORKER_TICK_SECONDS: '1',
  CATCHMENT_SYNC_HEARTBEAT_SECONDS: '1',
  CATCHMENT_RATE_LIMIT_REQUESTS: '0',
  // Small batches: progress (and cancellation points) every 20 entities.
  CATCHMENT_SYNC_BATCH_SIZE: '20',
  // Schedules every few seconds, so a test sees scheduled runs without waiting minutes.
  CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS: '1',
};
