import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { TestOAuthProvider } from './support/oauth-provider.js';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import { graphql, http, startTestServer, type TestServer } from './support/harness.js';
import { api, eventually, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/**
 * A connection's runtime through the whole service (embedded deployment, its worker): a failed run
 * resumes from its last checkpoint, a source unavailable for now is run again later, and a refused
 * token refresh asks the user to sign in again (needs_reauth and a signed webhook).
 */
let server: TestServer;
let call: Api;
let collection: string;
let endpoint: TestOAuthProvider;
let receiver: WebhookReceiver;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true' } });
  call = api(server.url, server.apiKey);
  collection = (await call('POST', '/collections', { name: 'OAuth runtime' })).body.readable_id;
  endpoint = await new TestOAuthProvider().start();
  receiver = await WebhookReceiver.start();
  const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
  admin = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'admin@example.com', role: 'admin' })).access_token;
});
afterAll(async () => {
  await receiver?.close();
  await endpoint?.stop();
  await server?.stop();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
});

const firstJob = async (connectionId: string) => (await call('GET', `/source-connections/${connectionId}/jobs`)).body[0];

test('a run that fails half-way resumes from its last committed checkpoint: nothing before it is read again', async () => {
  // 250 entities; the stub checkpoints every 100 and fails at entity 230: the checkpoint at 200 is stored.
  const created = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, authentication: { credentials: { token: 'fine' } }, config: { entity_count: 250, hierarchy_depth: 0, fail_after: 230 } });
  expect(created.status).toBe(200);
  const failed = await waitForJob(call, created.body.id, (await firstJob(created.body.id)).id, ['FAILED', 'COMPLETED']);
  // What the pipeline committed before the failure: whole batches, past the checkpoint at 200.
  expect(failed.status).toBe('FAILED');
  const committed: number = failed.entities_inserted;
  expect(committed).toBeGreaterThanOrEqual(200);
  expect(committed).toBeLessThanOrEqual(230);

  expect((await call('PATCH', `/source-connections/${created.body.id}`, { config: { entity_count: 250, hierarchy_depth: 0, fail_after: null } })).status).toBe(200);
  const rerun = await call('POST', `/source-connections/${created.body.id}/run`);
  expect(rerun.status).toBe(200);
  const resumed = await waitForJob(call, created.body.id, rerun.body.id, ['FAILED', 'COMPLETED']);
  // Resumed at 200: what was committed after it is met again unchanged, the rest is new; 0–199 are not read
  // (a run from the start would count them as skipped too).
  expect(resumed).toMatchObject({ status: 'COMPLETED', entities_inserted: 250 - committed, entities_updated: 0, entities_skipped: committed - 200, entities_deleted: 0 });

  // Completed: the next run continues from the finished run's cursor, with nothing new.
  const next = await call('POST', `/source-connections/${created.body.id}/run`);
  expect(await waitForJob(call, created.body.id, next.body.id, ['FAILED', 'COMPLETED'])).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_skipped: 0 });
});

test('a token endpoint unavailable for now (503, Retry-After: 120) fails the job and makes the connection due again in 120 s', async () => {
  endpoint.clients.set('runtime-client', 'runtime-secret');
  endpoint.failNext = { status: 503, count: 1, retryAfter: '120' };
  const created = await call('POST', '/source-connections', {
    short_name: 'stub',
    readable_collection_id: collection,
    config: { entity_count: 5, oauth_token_url: endpoint.tokenUrl },
    authentication: { access_token: 'access-expiring', refresh_token: endpoint.issueRefreshToken('runtime-client'), expires_at: new Date(Date.now() + 20_000).toISOString(), client_id: 'runtime-client', client_secret: 'runtime-secret' },
  });
  expect(created.status).toBe(200);
  const failedAt = Date.now();
  const failed = await waitForJob(call, created.body.id, (await firstJob(created.body.id)).id, ['FAILED', 'COMPLETED']);
  expect(failed.status).toBe('FAILED');
  expect(failed.error).toContain('answered 503');
  const connection = (await call('GET', `/source-connections/${created.body.id}`)).body;
  expect(connection.status).toBe('error');
  const due = Date.parse(connection.schedule.next_run);
  expect(due).toBeGreaterThan(failedAt + 90_000);
  expect(due).toBeLessThanOrEqual(Date.now() + 120_000);
});

test('a refused refresh: the job fails, the connection needs re-authentication, and source_connection.auth_expired is delivered signed', async () => {
  const subscribed = await http(server.url, 'POST', '/webhooks/subscriptions', { token: admin, body: { url: receiver.url, event_types: ['source_connection.auth_expired'] } });
  expect(subscribed.status).toBe(200);
  const secret = (await http(server.url, 'GET', `/webhooks/subscriptions/${subscribed.body.id}?include_secret=true`, { token: admin })).body.secret as string;
  endpoint.clients.set('runtime-client', 'runtime-secret');
  const created = await call('POST', '/source-connections', {
    short_name: 'stub',
    readable_collection_id: collection,
    config: { entity_count: 5, oauth_token_url: endpoint.tokenUrl },
    // A refresh token the provider no longer knows (revoked): the refresh is refused with invalid_grant.
    authentication: { access_token: 'access-expiring', refresh_token: 'refresh-revoked', expires_at: new Date(Date.now() + 20_000).toISOString(), client_id: 'runtime-client', client_secret: 'runtime-secret' },
  });
  expect(created.status).toBe(200);
  const failed = await waitForJob(call, created.body.id, (await firstJob(created.body.id)).id, ['FAILED', 'COMPLETED']);
  expect(failed.status).toBe('FAILED');
  expect(failed.error).toContain('invalid_grant');
  expect(failed.error).not.toContain('refresh-revoked');
  expect((await call('GET', `/source-connections/${created.body.id}`)).body.status).toBe('needs_reauth');
  const [delivery] = await eventually(async () => receiver.received, (list) => list.length >= 1);
  const payload = new StandardWebhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as Record<string, unknown>;
  expect(payload).toMatchObject({ event_type: 'source_connection.auth_expired', source_connection_id: created.body.id, collection_readable_id: collection, source_type: 'stub' });
});
