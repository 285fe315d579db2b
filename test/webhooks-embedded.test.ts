import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import { graphql, http, startTestServer, type TestServer } from './support/harness.js';
import { api, eventually } from './support/sync-helpers.js';

// Compressed schedule: 1 s timeout, retries after 200 ms and 200 ms (3 attempts).
process.env.CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE = '1000:200,200';

/**
 * Webhooks in the default deployment: one process, PGlite under the data directory (no
 * DATABASE_URL), no Redis. Development mode only (plain http to loopback receivers); private
 * targets are not allowed.
 */
let server: TestServer;
let apiKey: string;
let admin: string;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true' } });
  apiKey = server.apiKey;
  const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey })).body.data.viewer.organization.id;
  admin = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'admin@example.com', role: 'admin' })).access_token;
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await server?.stop();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
});

const receiver = async () => {
  const started = await WebhookReceiver.start();
  receivers.push(started);
  return started;
};
const asAdmin = (method: string, path: string, body?: unknown) => http(server.url, method, path, { token: admin, body });
const subscribe = async (url: string, eventTypes: string[]) => {
  const created = await asAdmin('POST', '/webhooks/subscriptions', { url, event_types: eventTypes });
  expect(created.status).toBe(200);
  const detail = await asAdmin('GET', `/webhooks/subscriptions/${created.body.id}?include_secret=true`);
  return { id: created.body.id as string, secret: detail.body.secret as string };
};
const attemptsOf = async (messageId: string, subscriptionId: string) =>
  (await api(server.url, apiKey)('GET', `/webhooks/messages/${messageId}?include_attempts=true`)).body.delivery_attempts.filter((a: any) => a.endpoint_id === subscriptionId);

test('embedded: development mode takes http to loopback receivers, never to public addresses', async () => {
  expect(server.running.core.database.kind).toBe('embedded');
  const target = await receiver();
  expect((await asAdmin('POST', '/webhooks/subscriptions', { url: target.url, event_types: ['collection.created'] })).status).toBe(200);
  const publicHttp = await asAdmin('POST', '/webhooks/subscriptions', { url: 'http://93.184.216.34/hook', event_types: ['collection.created'] });
  expect(publicHttp.status).toBe(422);
  expect(publicHttp.body.detail[0]).toMatchObject({ loc: ['body', 'url'], msg: expect.stringMatching(/public address/) });
  const privateHttps = await asAdmin('POST', '/webhooks/subscriptions', { url: 'https://10.1.2.3/hook', event_types: ['collection.created'] });
  expect(privateHttps.status).toBe(422);
  expect(privateHttps.body.detail[0].msg).toMatch(/private, loopback or link-local/);
});

test('embedded: signed deliveries, retries until failed, pause, resume with recover_since, recover, delete', async () => {
  const target = await receiver();
  const { id, secret } = await subscribe(target.url, ['collection.created', 'collection.updated']);
  const call = api(server.url, apiKey);

  // Delivered and verified by both libraries.
  const made = (await call('POST', '/collections', { name: 'Embedded webhooks' })).body;
  const [delivery] = await eventually(async () => target.received, (list) => list.length >= 1);
  const payload = new StandardWebhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as Record<string, unknown>;
  new SvixWebhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>);
  expect(payload).toMatchObject({ event_type: 'collection.created', collection_id: made.id });

  // A receiver that keeps failing: the schedule runs out (3 attempts), the delivery has failed.
  target.behaviour = () => ({ status: 500 });
  await call('PATCH', `/collections/${made.readable_id}`, { name: 'Embedded webhooks 2' });
  const [failing] = (await call('GET', '/webhooks/messages?event_types=collection.updated&limit=1')).body;
  await eventually(() => attemptsOf(failing.id, id), (list: any[]) => list.length === 3);
  expect((await attemptsOf(failing.id, id)).map((a: any) => [a.attempt_number, a.status, a.response_status_code])).toEqual([
    [1, 'failed', 500],
    [2, 'failed', 500],
    [3, 'failed', 500],
  ]);
  expect((await call('GET', `/webhooks/subscriptions/${id}`)).body.health_status).toBe('failing');

  // Paused: held, not sent.
  expect((await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: true })).body.disabled).toBe(true);
  target.behaviour = () => ({ status: 200 });
  const before = target.received.length;
  const held = (await call('POST', '/collections', { name: 'Made while paused' })).body;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(target.received.length).toBe(before);

  // Resumed with recover_since: the held message and the failed one both arrive.
  const resumed = await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: false, recover_since: failing.timestamp });
  expect(resumed.status).toBe(200);
  const arrived = () => target.received.slice(before).map((d) => JSON.parse(d.body));
  await eventually(async () => arrived(), (list) => list.some((p) => p.event_id === failing.id) && list.some((p) => p.collection_id === held.id));

  // Recover a window: everything in it was delivered, so nothing is sent again.
  const task = await asAdmin('POST', `/webhooks/subscriptions/${id}/recover`, { since: failing.timestamp });
  expect(task.status).toBe(200);
  expect(task.body).toMatchObject({ message_count: 0, status: 'completed' });

  // Deleted while a delivery is pending: it is cancelled.
  expect((await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: true })).status).toBe(200);
  await call('POST', '/collections', { name: 'Never sent' });
  expect((await asAdmin('DELETE', `/webhooks/subscriptions/${id}`)).status).toBe(200);
  const count = target.received.length;
  await new Promise((resolve) => setTimeout(resolve, 1200));
  expect(target.received.length).toBe(count);
});

test('embedded: a stop with a delivery in flight hands it back, and the next start on the data directory delivers it', async () => {
  const target = await receiver();
  const { id } = await subscribe(target.url, ['collection.created']);
  target.behaviour = () => ({ status: 200, delayMs: 20_000 });
  const made = (await api(server.url, apiKey)('POST', '/collections', { name: 'In flight at stop' })).body;
  await eventually(async () => target.received.length, (count) => count >= 1);
  const started = Date.now();
  await server.running.stop();
  expect(Date.now() - started).toBeLessThan(5000);

  target.behaviour = () => ({ status: 200 });
  server = await startTestServer({ deployment: 'embedded', dataDir: server.dataDir, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true' } });
  const [message] = (await api(server.url, apiKey)('GET', '/webhooks/messages?event_types=collection.created&limit=1')).body;
  expect(message.payload.collection_id).toBe(made.id);
  const attempts = await eventually(() => attemptsOf(message.id, id), (list: any[]) => list.some((a) => a.status === 'success'), 15_000);
  expect(attempts).toHaveLength(1);
  expect(target.received.filter((d) => d.headers['webhook-id'] === message.id)).toHaveLength(2);
});
