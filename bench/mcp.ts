/**
 * The MCP search tool over Streamable HTTP against the same REST search, on the same data: p50 and
 * p95 of each, sequential calls interleaved (so both see the same server state), and their ratio
 * (target: MCP p50 at most 1.3 × REST's). Embedded deployment, built-in embedder, `stub` entities.
 *
 *   npm run bench:mcp [-- --entities 5000 --requests 300 --strategy hybrid]
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer } from '../test/support/harness.js';
import { api, createCollection, syncStub } from '../test/support/sync-helpers.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    entities: { type: 'string', default: '5000' },
    requests: { type: 'string', default: '300' },
    strategy: { type: 'string', default: 'hybrid' },
  },
});
const entities = Number(values.entities);
const requests = Number(values.requests);
const strategy = values.strategy!;

const QUERIES = ['document data folder', 'revision notes', 'size class report', 'entity index', 'stub content summary', 'quarterly numbers', 'folder overview', 'archive'];

const server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WORKER_TICK_SECONDS: '1' } });
const mcp = new Client({ name: 'bench-mcp', version: '1.0.0' });
try {
  const call = api(server.url, server.apiKey);
  const collectionId = await createCollection(call, 'bench');
  await syncStub(call, 'bench', { entity_count: entities, seed: 3, size_mix: 'small', hierarchy_depth: 2, code_files: false, delay_ms: 0, revision: 0 }, 30 * 60_000);
  // The index optimize the sync's end leaves running after COMPLETED: measured after it, as before it moved there.
  await (await server.running.core.vectors()).settled(collectionId);

  await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { requestInit: { headers: { 'x-api-key': server.apiKey } } }));
  const headers = { 'x-api-key': server.apiKey, 'content-type': 'application/json' };
  const viaRest = async (query: string) => {
    const response = await fetch(`${server.url}/collections/bench/search/instant`, { method: 'POST', headers, body: JSON.stringify({ query, retrieval_strategy: strategy, limit: 10 }) });
    const body = (await response.json()) as { results: unknown[] };
    if (response.status !== 200) throw new Error(`REST search: ${response.status}`);
    return body.results.length;
  };
  const viaMcp = async (query: string) => {
    const result = (await mcp.callTool({ name: 'search', arguments: { collection: 'bench', query, retrieval_strategy: strategy, limit: 10 } })) as CallToolResult;
    if (result.isError) throw new Error(`MCP search: ${JSON.stringify(result.content)}`);
    return (result.structuredContent as { results: unknown[] }).results.length;
  };
  for (let i = 0; i < 30; i++) {
    await viaRest(QUERIES[i % QUERIES.length]!);
    await viaMcp(QUERIES[i % QUERIES.length]!);
  }
  const rest: number[] = [];
  const tool: number[] = [];
  for (let i = 0; i < requests; i++) {
    const query = `${QUERIES[i % QUERIES.length]} ${i}`;
    // Alternating which goes first keeps any warm-cache advantage from favouring one side.
    const order = i % 2 === 0 ? [viaRest, viaMcp] : [viaMcp, viaRest];
    for (const run of order) {
      const t0 = performance.now();
      const count = await run(query);
      (run === viaRest ? rest : tool).push(performance.now() - t0);
      if (count === 0) throw new Error(`no results for "${query}"`);
    }
  }
  rest.sort((a, b) => a - b);
  tool.sort((a, b) => a - b);
  console.log(`\ninstant ${strategy} search, limit 10, over ${entities} stub entities; ${requests} sequential requests each, interleaved`);
  console.log('transport              p50 ms   p95 ms');
  console.log(`REST /search/instant ${percentile(rest, 50).toFixed(2).padStart(8)} ${percentile(rest, 95).toFixed(2).padStart(8)}`);
  console.log(`MCP search tool      ${percentile(tool, 50).toFixed(2).padStart(8)} ${percentile(tool, 95).toFixed(2).padStart(8)}`);
  console.log(`MCP / REST p50 ratio: ${(percentile(tool, 50) / percentile(rest, 50)).toFixed(2)} (target ≤ 1.3)`);
} finally {
  await mcp.close().catch(() => undefined);
  await server.stop();
}
