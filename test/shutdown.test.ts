import { createHook } from 'node:async_hooks';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import { graphql, http, leftoverTestDatabases, startTestServer } from './support/harness.js';
import { eventually } from './support/sync-helpers.js';

test('shutting down under write load (servers deployment): no 500s, readiness fails first, every 200 was stored', async () => {
  const server = await startTestServer({ deployment: 'servers', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
  const headers = { 'x-api-key': server.apiKey, 'content-type': 'application/json' };
  const statuses: number[] = [];
  const created: string[] = [];
  let stopping = false;
  const writer = async (n: number) => {
    for (let i = 0; !stopping || i < 3; i++) {
      try {
        const readableId = `load-${n}-${i}`;
        const response = await fetch(`${server.url}/collections`, { method: 'POST', headers, body: JSON.stringify({ name: `Load ${n} ${i}`, readable_id: readableId }) });
        statuses.push(response.status);
        if (response.status === 200) created.push(readableId);
        await response.arrayBuffer();
      } catch {
        return; // refused once the server stopped listening
      }
    }
  };
  const writers = Array.from({ length: 8 }, (_, n) => writer(n));
  // Stop once the load is under way, not after a fixed time: under CI's parallel suites the first
  // answers took longer than 300 ms and the server stopped after only 7 of them.
  await eventually(async () => statuses.length, (count) => count >= 16);
  stopping = true;
  const stopped = server.running.stop();
  const ready = await fetch(`${server.url}/readyz`).then((r) => r.status).catch(() => 'refused');
  await Promise.all([stopped, ...writers]);
  expect(['refused', 503]).toContain(ready);
  expect(statuses.filter((status) => status >= 500)).toEqual([]);

  // Everything acknowledged is there when the deployment comes back.
  const again = await startTestServer({ deployment: 'servers', databaseUrl: server.databaseUrl, redisPrefix: server.redisPrefix });
  try {
    const list = await fetch(`${again.url}/collections?limit=1000`, { headers }).then((r) => r.json());
    const stored = new Set((list as { readable_id: string }[]).map((c) => c.readable_id));
    for (const id of created) expect(stored.has(id)).toBe(true);
  } finally {
    await again.stop();
    await server.discard();
  }
});

/**
 * Records the timers created from now on; `left()` lists (by creation stack) those still pending
 * that keep the process alive (unref'd timers do not).
 */
function trackTimers() {
  const live = new Map<number, { timer: NodeJS.Timeout; stack: string }>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type === 'Timeout') live.set(id, { timer: resource as NodeJS.Timeout, stack: new Error().stack!.split('\n').slice(2, 10).join('\n') });
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return {
    left(): string[] {
      hook.disable();
      // A timer that fired or was cleared is `_destroyed` at once; its destroy hook may come later.
      return [...live.values()].filter(({ timer }) => !(timer as unknown as { _destroyed: boolean })._destroyed && timer.hasRef()).map(({ stack }) => stack);
    },
  };
}
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('stop leaves nothing running', () => {
  for (const deployment of ['servers', 'embedded'] as const) {
    test(`${deployment}: after stop(), no timer of the server, its worker or its webhook delivery worker is left`, async () => {
      const timers = trackTimers();
      const server = await startTestServer({ deployment, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WORKER_TICK_SECONDS: '1' } });
      await new Promise((resolve) => setTimeout(resolve, 1500)); // a few polls and ticks
      await server.stop();
      await settle();
      expect(timers.left()).toEqual([]);
    });
  }

  test('a start that fails (port taken) stops what it started and drops its test database', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const databasesBefore = await leftoverTestDatabases();
      const timers = trackTimers();
      // The worker (and its delivery worker) starts before the HTTP server fails to listen.
      await expect(startTestServer({ deployment: 'servers', env: { PORT: String(port) } })).rejects.toThrow(/EADDRINUSE/);
      await settle();
      expect(timers.left()).toEqual([]);
      expect(await leftoverTestDatabases()).toEqual(databasesBefore);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test('stop hands in-flight webhook deliveries back at once; the next start delivers them', async () => {
    const env = { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true', CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };
    const server = await startTestServer({ deployment: 'servers', env });
    const receiver = await WebhookReceiver.start();
    try {
      const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
      const { access_token: token } = await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'admin@example.com', role: 'admin' });
      const subscribed = await http(server.url, 'POST', '/webhooks/subscriptions', { token, body: { url: receiver.url, event_types: ['collection.created'] } });
      expect(subscribed.status).toBe(200);
      receiver.behaviour = () => ({ status: 200, delayMs: 20_000 }); // far longer than a stop may take
      await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'In flight at stop' } });
      await eventually(async () => receiver.received.length, (count) => count >= 1);

      const started = Date.now();
      await server.running.stop();
      expect(Date.now() - started).toBeLessThan(5000);
      await settle();

      receiver.behaviour = () => ({ status: 200 });
      const again = await startTestServer({ deployment: 'servers', databaseUrl: server.databaseUrl, redisPrefix: server.redisPrefix, env });
      try {
        const [message] = (await http(again.url, 'GET', '/webhooks/messages?limit=1', { apiKey: server.apiKey })).body;
        // Handed back as due, not left under a 35 s lease: delivered as soon as a worker runs again.
        const attempts = await eventually(
          async () => (await http(again.url, 'GET', `/webhooks/messages/${message.id}?include_attempts=true`, { apiKey: server.apiKey })).body.delivery_attempts,
          (list: any[]) => list.some((attempt) => attempt.status === 'success'),
          10_000,
        );
        expect(attempts).toHaveLength(1); // the abandoned attempt was not recorded as a failure
        expect(receiver.received.map((delivery) => delivery.headers['webhook-id'])).toEqual([message.id, message.id]);
      } finally {
        await again.stop();
      }
    } finally {
      await receiver.close();
      await server.discard();
    }
  });
});
