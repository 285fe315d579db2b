import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import { graphql, http, startTestServer, type TestServer } from './support/harness.js';
import { api, eventually, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

const TOKEN = 'metrics-scraper-token-0123456789';
let server: TestServer;
let disabled: TestServer;
let call: Api;
let root: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'catchment-metrics-'));
  writeFileSync(path.join(root, 'llamas.md'), '# Llamas\nLlamas live in the Andes.');
  writeFileSync(path.join(root, 'walrus.txt'), 'The walrus toolkit is installed first.');
  [server, disabled, receiver] = await Promise.all([
    startTestServer({
      deployment: 'embedded',
      env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root, CATCHMENT_METRICS_TOKEN: TOKEN, CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true', CATCHMENT_RATE_LIMIT_REQUESTS: '0' },
    }),
    startTestServer({ deployment: 'embedded', env: { CATCHMENT_METRICS_ENABLED: 'false' } }),
    WebhookReceiver.start(),
  ]);
  call = api(server.url, server.apiKey);
});
afterAll(async () => {
  await receiver?.close();
  await Promise.all([server?.stop(), disabled?.stop()]);
  rmSync(root, { recursive: true, force: true });
});

/** Scrapes /metrics and returns the value of one sample, e.g. `name{label="x"}`; 0 when absent. */
async function scrape(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2] ? match[2].split(',') : [];
    if (wanted.every((label) => present.includes(label))) return Number(match[3]);
  }
  return 0;
}

describe('Prometheus metrics', () => {
  test('/metrics needs the configured token, and is absent when disabled', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0000000000000' } })).status).toBe(401);
    expect((await fetch(`${disabled.url}/metrics`)).status).toBe(404);
    const text = await scrape();
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  test('HTTP requests are counted by route template and status, with latency histograms', async () => {
    await call('GET', '/collections');
    await call('GET', '/collections/no-such-collection');
    await call('GET', '/collections/another-missing-one');
    await graphql(server.url, '{ collections { id } }', {}, { apiKey: server.apiKey });
    const text = await scrape();
    expect(sample(text, 'catchment_http_requests_total', { method: 'GET', route: '/collections', status: '200' })).toBeGreaterThanOrEqual(1);
    // Both missing ids fall under one template: ids never become label values.
    expect(sample(text, 'catchment_http_requests_total', { method: 'GET', route: '/collections/{readable_id}', status: '404' })).toBe(2);
    expect(text).not.toContain('no-such-collection');
    expect(sample(text, 'catchment_http_requests_total', { method: 'POST', route: '/graphql', status: '200' })).toBe(1);
    expect(sample(text, 'catchment_http_request_duration_seconds_count', { method: 'GET', route: '/collections', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'catchment_http_request_duration_seconds_bucket', { method: 'POST', route: '/graphql', status: '200', le: '+Inf' })).toBe(1);
  });

  test('a sync, a search and a webhook delivery show in their metrics', async () => {
    await call('POST', '/collections', { name: 'Metrics', readable_id: 'metrics-docs' });
    const connection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'metrics-docs', config: { path: root } })).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    expect((await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'])).status).toBe('COMPLETED');

    const text = await scrape();
    expect(sample(text, 'catchment_sync_jobs_total', { status: 'COMPLETED' })).toBe(1);
    expect(sample(text, 'catchment_sync_entities_total', { outcome: 'inserted' })).toBe(2);
    expect(sample(text, 'catchment_sync_chunks_total')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'catchment_sync_job_duration_seconds_count', { status: 'COMPLETED' })).toBe(1);
    expect(sample(text, 'catchment_sync_job_wait_seconds_count')).toBe(1);
    expect(sample(text, 'catchment_sync_jobs_pending')).toBe(0);
    expect(sample(text, 'catchment_sync_jobs_running')).toBe(0);
    expect(text).toMatch(/^catchment_sync_oldest_pending_seconds 0$/m);
    expect(sample(text, 'catchment_embedded_texts_total')).toBeGreaterThanOrEqual(2);

    expect((await call('POST', '/collections/metrics-docs/search/instant', { query: 'llamas' })).status).toBe(200);
    expect((await call('POST', '/collections/metrics-docs/search/classic', { query: 'walrus toolkit' })).status).toBe(200);
    expect((await call('POST', '/collections/no-such-collection/search/instant', { query: 'llamas' })).status).toBe(404);
    const searched = await scrape();
    expect(sample(searched, 'catchment_search_duration_seconds_count', { tier: 'instant', outcome: 'ok' })).toBe(1);
    expect(sample(searched, 'catchment_search_duration_seconds_count', { tier: 'classic', outcome: 'ok' })).toBe(1);
    expect(sample(searched, 'catchment_search_duration_seconds_count', { tier: 'instant', outcome: 'error' })).toBe(1);

    const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data!.viewer.organization.id;
    const admin = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'admin@example.com', role: 'admin' })).access_token;
    expect((await http(server.url, 'POST', '/webhooks/subscriptions', { token: admin, body: { url: receiver.url, event_types: ['collection.created'] } })).status).toBe(200);
    await call('POST', '/collections', { name: 'Announced' });
    const delivered = await eventually(scrape, (current) => sample(current, 'catchment_webhook_deliveries_total', { outcome: 'success' }) === 1);
    expect(sample(delivered, 'catchment_webhook_delivery_duration_seconds_count', { outcome: 'success' })).toBe(1);
    expect(receiver.received).toHaveLength(1);
  });

  test('a worker-only process serves its metrics and liveness on CATCHMENT_WORKER_METRICS_PORT, nothing else', async () => {
    const worker = await startTestServer({ deployment: 'embedded', roles: { api: false, worker: true }, env: { CATCHMENT_WORKER_METRICS_PORT: '0', CATCHMENT_METRICS_TOKEN: TOKEN } });
    try {
      expect(worker.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${worker.url}/metrics`)).status).toBe(401);
      const scraped = await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(scraped.status).toBe(200);
      const text = await scraped.text();
      expect(text).toMatch(/^catchment_sync_jobs_pending 0$/m);
      expect(text).toMatch(/^# TYPE catchment_webhook_deliveries_total counter$/m);
      expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${worker.url}/collections`, { headers: { 'x-api-key': worker.apiKey } })).status).toBe(404);
    } finally {
      await worker.stop();
    }
    // Unset: a worker serves no HTTP at all.
    const silent = await startTestServer({ deployment: 'embedded', roles: { api: false, worker: true } });
    expect(silent.url).toBe('');
    await silent.stop();
  });
});
