import { describe, expect, test } from '@jest/globals';
import { Metrics } from './metrics.js';

describe('Metrics', () => {
  test('the backlog gauges read NaN while the database does not answer, and the scrape still succeeds', async () => {
    let reads = 0;
    const metrics = new Metrics(async () => {
      reads++;
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^catchment_sync_jobs_pending Nan$/m);
    expect(text).toMatch(/^catchment_webhook_deliveries_pending Nan$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    // One read per scrape feeds the four gauges.
    expect(reads).toBe(1);
  });

  test('the backlog gauges show what the database answers', async () => {
    const metrics = new Metrics(async () => ({ syncJobsPending: 3, syncJobsRunning: 1, oldestPendingSyncJobSeconds: 42, webhookDeliveriesPending: 0 }));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^catchment_sync_jobs_pending 3$/m);
    expect(text).toMatch(/^catchment_sync_oldest_pending_seconds 42$/m);
  });
});
