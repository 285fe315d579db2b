import { expect, test } from '@jest/globals';
import { startTestServer } from './support/harness.js';

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
  await new Promise((resolve) => setTimeout(resolve, 300));
  stopping = true;
  const stopped = server.running.stop();
  const ready = await fetch(`${server.url}/readyz`).then((r) => r.status).catch(() => 'refused');
  await Promise.all([stopped, ...writers]);
  expect(['refused', 503]).toContain(ready);
  expect(statuses.length).toBeGreaterThan(8);
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
