import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestServer, type TestServer } from '../../../test/support/harness.js';
import { api, FAST_WORKER, waitForJob } from '../../../test/support/sync-helpers.js';
import { jobProgressTopic } from './sync.service.js';
import type { SyncJobView } from './sync-job.view.js';

let server: TestServer;

beforeAll(async () => {
  // Batches of 5: hundreds of commits in a few seconds, far more often than progress may be saved.
  server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_SYNC_BATCH_SIZE: '5' } });
});
afterAll(async () => {
  await server?.stop();
});

test('progress is saved and published at most every 100 ms however often batches commit, and the job ends with every count', async () => {
  const call = api(server.url, server.apiKey);
  await call('POST', '/collections', { name: 'Throttled', readable_id: 'throttled' });
  const config = { entity_count: 1500, hierarchy_depth: 0, size_mix: 'small' };
  const connection = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'throttled', authentication: { credentials: { token: 't' } }, config, sync_immediately: false })).body;
  const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
  const published: { at: number; status: string; entitiesInserted: number }[] = [];
  const stream = server.running.core.services.pubsub.subscribe<SyncJobView>(jobProgressTopic(job.id));
  const following = (async () => {
    for await (const view of stream) {
      published.push({ at: performance.now(), status: view.status, entitiesInserted: view.entitiesInserted });
      if (view.status === 'COMPLETED') return;
    }
  })();
  const done = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'], 120_000);
  await following;
  expect(done).toMatchObject({ status: 'COMPLETED', entities_inserted: 1500 });
  expect(published.at(-1)).toMatchObject({ status: 'COMPLETED', entitiesInserted: 1500 });

  const progress = published.filter((view) => view.status === 'RUNNING' && view.entitiesInserted > 0);
  const commits = 1500 / 5;
  expect(progress.length).toBeGreaterThan(1);
  // One save per 100 ms at most (each starts 100 ms after the one before; their publications follow their two statements).
  const spanMs = progress.at(-1)!.at - progress[0]!.at;
  expect(progress.length).toBeLessThanOrEqual(Math.floor(spanMs / 100) + 2);
  // Fewer than one a commit (the throttle at 0 published 301): a bound on the commits, not on the time, which a
  // loaded host stretches (a CI run of 55 s published 100 times, every 100 ms as it should).
  expect(progress.length).toBeLessThan(commits);
  // Counts only rise.
  expect(progress.every((view, i) => i === 0 || view.entitiesInserted >= progress[i - 1]!.entitiesInserted)).toBe(true);
});
