/**
 * Start-up time and collections-list latency under light load, for the embedded deployment and,
 * when PostgreSQL and Redis answer (TEST_POSTGRES_URL / TEST_REDIS_URL or the local defaults), the
 * servers deployment. Prints figures and the servers/embedded ratios.
 *
 *   npm run bench:api [-- --requests 1000 --concurrency 4 --collections 100]
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { startTestServer, type Deployment } from '../test/support/harness.js';
import { percentile, timeConcurrently } from './stats.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '4' },
    collections: { type: 'string', default: '100' },
  },
});
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const collections = Number(values.collections);

async function measure(deployment: Deployment) {
  const started = performance.now();
  const server = await startTestServer({ deployment, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
  const startupMs = performance.now() - started;
  try {
    const headers = { 'x-api-key': server.apiKey, 'content-type': 'application/json' };
    for (let i = 0; i < collections; i++) {
      const response = await fetch(`${server.url}/collections`, { method: 'POST', headers, body: JSON.stringify({ name: `Bench collection ${i}` }) });
      if (response.status !== 200) throw new Error(`create failed: ${response.status}`);
    }
    const url = `${server.url}/collections?limit=100`;
    for (let i = 0; i < 20; i++) await (await fetch(url, { headers })).arrayBuffer(); // warm-up
    const { latencies, seconds } = await timeConcurrently(Array.from({ length: requests }), concurrency, async () => {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`list failed: ${response.status}`);
    });
    return {
      deployment,
      startupMs,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      throughput: latencies.length / seconds,
      rssMb: process.memoryUsage().rss / 2 ** 20,
    };
  } finally {
    await server.stop();
  }
}

const results = [await measure('embedded')];
try {
  results.push(await measure('servers'));
} catch (error) {
  console.log(`servers deployment skipped: ${(error as Error).message}`);
}

console.log(`\ncollections list (limit=100, ${collections} collections), ${requests} requests, concurrency ${concurrency}`);
console.log('deployment  start-up ms   p50 ms   p95 ms   p99 ms   req/s    rss MB');
for (const r of results) {
  console.log(
    `${r.deployment.padEnd(10)}  ${r.startupMs.toFixed(0).padStart(10)}  ${r.p50.toFixed(2).padStart(7)}  ${r.p95.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}  ${r.throughput.toFixed(0).padStart(6)}  ${r.rssMb.toFixed(0).padStart(8)}`,
  );
}
if (results.length === 2) {
  const [embedded, servers] = results as [(typeof results)[0], (typeof results)[0]];
  console.log(`ratios servers/embedded: start-up ${(servers.startupMs / embedded.startupMs).toFixed(2)}, p50 ${(servers.p50 / embedded.p50).toFixed(2)}, throughput ${(servers.throughput / embedded.throughput).toFixed(2)}`);
}
