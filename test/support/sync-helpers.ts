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

/** Creates a `stub` connection of the collection with this config; its first sync starts at once. The connection's id and that job's. */
export async function connectStub(call: Api, readableCollectionId: string, config: Record<string, unknown>): Promise<{ connectionId: string; jobId: string }> {
  const created = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: readableCollectionId, authentication: { credentials: { token: 't' } }, config });
  if (created.status !== 200) throw new Error(`creating a stub connection answered ${created.status}: ${JSON.stringify(created.body)}`);
  const [job] = (await call('GET', `/source-connections/${created.body.id}/jobs`)).body;
  return { connectionId: created.body.id, jobId: job.id };
}

/** `connectStub`, then waits for that first sync to complete (throws if it ends otherwise). */
export async function syncStub(call: Api, readableCollectionId: string, config: Record<string, unknown>, timeoutMs = 60_000): Promise<{ connectionId: string; jobId: string }> {
  const ids = await connectStub(call, readableCollectionId, config);
  const job = await waitForJob(call, ids.connectionId, ids.jobId, ['COMPLETED', 'FAILED', 'CANCELLED'], timeoutMs);
  if (job.status !== 'COMPLETED') throw new Error(`the stub sync ended ${job.status}: ${job.error}`);
  return ids;
}

/** Creates a collection named after its readable id; its id. */
export async function createCollection(call: Api, readableId: string): Promise<string> {
  const created = await call('POST', '/collections', { name: readableId, readable_id: readableId });
  if (created.status !== 200) throw new Error(`creating collection ${readableId} answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body.id;
}
