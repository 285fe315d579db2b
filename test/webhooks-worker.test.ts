import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import { graphql, http, REDIS_URL, startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/process.js';
import { api, eventually } from './support/sync-helpers.js';

/** Webhook workers as separate processes on the servers deployment: crashes and delivery-time SSRF. */
let server: TestServer;
let receiver: WebhookReceiver;
let admin: string;
const workers: ServerProcess[] = [];

beforeAll(async () => {
  server = await startTestServer({
    deployment: 'servers',
    roles: { api: true, worker: false },
    env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true', CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  receiver = await WebhookReceiver.start();
  const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
  admin = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'admin@example.com', role: 'admin' })).access_token;
});
afterAll(async () => {
  for (const worker of workers) await worker.stop('SIGKILL');
  await receiver?.close();
  await server?.stop();
});

function worker(allowPrivateTargets: boolean, extra: Record<string, string> = {}): Promise<ServerProcess> {
  return startServerProcess(
    {
      DATABASE_URL: server.databaseUrl!,
      REDIS_URL,
      CATCHMENT_REDIS_PREFIX: server.redisPrefix,
      CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      CATCHMENT_DATA_DIR: server.dataDir,
      CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true',
      CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: String(allowPrivateTargets),
      // 2 s timeout (so a claim lapses 7 s after a crash), quick retries.
      CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE: '2000:300,300,300,300,300',
      ...extra,
    },
    60_000,
    'worker',
  ).then((started) => {
    workers.push(started);
    return started;
  });
}

test('a worker SIGKILLed with deliveries in flight and pending, then restarted: every message is delivered at least once, none lost', async () => {
  const created = await http(server.url, 'POST', '/webhooks/subscriptions', { token: admin, body: { url: receiver.url, event_types: ['collection.created'] } });
  const secret = (await http(server.url, 'GET', `/webhooks/subscriptions/${created.body.id}?include_secret=true`, { apiKey: server.apiKey })).body.secret;
  // Slow answers keep many deliveries in flight when the worker dies.
  receiver.behaviour = () => ({ status: 200, delayMs: 400 });
  const call = api(server.url, server.apiKey);

  // Debug logging: what the workers print must never hold the secret.
  const first = await worker(true, { CATCHMENT_LOG_LEVEL: 'debug' });
  for (let i = 0; i < 40; i++) await call('POST', '/collections', { name: `Crash webhook ${i}` });
  await eventually(async () => receiver.received.length, (count) => count >= 3);
  expect(await first.stop('SIGKILL')).toBe(null);
  const receivedAtCrash = receiver.ids().size;

  // Events recorded while no worker runs wait in the outbox.
  for (let i = 40; i < 50; i++) await call('POST', '/collections', { name: `Crash webhook ${i}` });
  const messages = (await call('GET', '/webhooks/messages?event_types=collection.created&limit=1000')).body;
  expect(messages).toHaveLength(50);
  expect(receivedAtCrash).toBeLessThan(50);

  // A subscription made now gets the events from now on, not the backlog the restarted worker finds.
  const late = await WebhookReceiver.start('/late');
  const lateSubscription = await http(server.url, 'POST', '/webhooks/subscriptions', { token: admin, body: { url: late.url, event_types: ['collection.created'] } });
  await new Promise((resolve) => setTimeout(resolve, 5));
  const after = (await call('POST', '/collections', { name: 'After the late subscription' })).body;

  receiver.behaviour = () => ({ status: 200 });
  const second = await worker(true, { CATCHMENT_LOG_LEVEL: 'debug' });
  const expected = new Set<string>(messages.map((m: any) => m.id));
  await eventually(async () => receiver.ids(), (ids) => [...expected].every((id) => ids.has(id)), 40_000);
  for (const delivery of receiver.received) new StandardWebhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  await eventually(async () => late.received.length, (count) => count >= 1);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(late.received.map((delivery) => JSON.parse(delivery.body).collection_id)).toEqual([after.id]);
  await late.close();
  await http(server.url, 'DELETE', `/webhooks/subscriptions/${lateSubscription.body.id}`, { token: admin });
  // Each message has a successful attempt on record.
  for (const message of messages.slice(0, 5)) {
    const attempts = (await call('GET', `/webhooks/messages/${message.id}?include_attempts=true`)).body.delivery_attempts;
    expect(attempts.some((a: any) => a.status === 'success')).toBe(true);
  }
  expect(await second.stop('SIGTERM')).toBe(0);
  expect(second.output()).toMatch(/"level":20,.*"msg":"webhook attempt"/); // attempts were logged at debug level
  for (const process of [first, second]) expect(process.output()).not.toContain(secret.slice('whsec_'.length));
  await http(server.url, 'DELETE', `/webhooks/subscriptions/${created.body.id}`, { token: admin });
});

test('delivery-time SSRF: a worker that does not allow private targets refuses a loopback URL and records why', async () => {
  const created = await http(server.url, 'POST', '/webhooks/subscriptions', {
    token: admin,
    body: { url: receiver.url.replace('http://127.0.0.1', 'https://localhost'), event_types: ['collection.updated'] },
  });
  expect(created.status).toBe(200); // this API process allows private targets; the worker does not (nor development mode)
  await worker(false, { CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'false' });
  const call = api(server.url, server.apiKey);
  const made = (await call('POST', '/collections', { name: 'SSRF at delivery' })).body;
  await call('PATCH', `/collections/${made.readable_id}`, { name: 'SSRF at delivery 2' });
  const [message] = (await call('GET', '/webhooks/messages?event_types=collection.updated&limit=1')).body;
  const attempts = await eventually(
    async () => (await call('GET', `/webhooks/messages/${message.id}?include_attempts=true`)).body.delivery_attempts,
    (list: any[]) => list.length >= 1,
  );
  expect(attempts[0]).toMatchObject({ status: 'failed', response_status_code: null, response: expect.stringMatching(/^Refused: .*private, loopback or link-local/) });
  expect(receiver.ids().has(message.id)).toBe(false);
});
