import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestServer, type TestServer } from './support/harness.js';

const APP = 'https://app.example.com';
let server: TestServer;
let closed: TestServer;
beforeAll(async () => {
  [server, closed] = await Promise.all([
    startTestServer({ deployment: 'embedded', env: { CATCHMENT_CORS_ORIGINS: `${APP}, http://localhost:5173` } }),
    startTestServer({ deployment: 'embedded' }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), closed?.stop()]);
});

function preflight(base: string, path: string, origin: string, method = 'POST', headers = 'x-api-key, content-type') {
  return fetch(base + path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers } });
}

describe('CORS', () => {
  test.each([
    ['REST', '/collections', 'GET'],
    ['REST search', '/collections/abc/search', 'POST'],
    ['GraphQL', '/graphql', 'POST'],
    ['GraphQL over SSE', '/graphql/stream', 'POST'],
    ['MCP', '/mcp', 'DELETE'],
  ])('a preflight on %s (%s) from a listed origin is answered before authentication', async (_name, path, method) => {
    const response = await preflight(server.url, path, APP, method, 'authorization, mcp-session-id, content-type');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('access-control-allow-methods')).toContain(method);
    const allowedHeaders = response.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const header of ['authorization', 'x-api-key', 'content-type', 'mcp-session-id', 'last-event-id']) expect(allowedHeaders).toContain(header);
    expect(response.headers.get('vary')).toMatch(/Origin/);
  });

  test('a preflight from an unlisted origin is refused and carries no allow header', async () => {
    const response = await preflight(server.url, '/collections', 'https://evil.example.net');
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(await response.json()).toEqual({ detail: 'Origin not allowed' });
  });

  test('actual cross-origin requests carry the allow and expose headers on REST, GraphQL, SSE and MCP', async () => {
    const headers = { Origin: 'http://localhost:5173', 'x-api-key': server.apiKey };
    const rest = await fetch(`${server.url}/collections`, { headers });
    expect(rest.status).toBe(200);
    expect(rest.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(rest.headers.get('access-control-expose-headers')).toContain('X-Request-Id');

    const graphql = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ collections { id } }' }) });
    expect(graphql.status).toBe(200);
    expect(graphql.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');

    const controller = new AbortController();
    const stream = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      signal: controller.signal,
      headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: '{ collections { id } }' }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(stream.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    controller.abort();

    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cors-test', version: '1' } } }),
    });
    expect(mcp.status).toBe(200);
    expect(mcp.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(mcp.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    await mcp.body?.cancel();

    const unlisted = await fetch(`${server.url}/collections`, { headers: { ...headers, Origin: 'https://evil.example.net' } });
    expect(unlisted.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('off by default: no CORS header and no preflight answer', async () => {
    const response = await preflight(closed.url, '/graphql', APP);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.status).not.toBe(204);
    const rest = await fetch(`${closed.url}/collections`, { headers: { Origin: APP, 'x-api-key': closed.apiKey } });
    expect(rest.headers.get('access-control-allow-origin')).toBeNull();
  });
});
