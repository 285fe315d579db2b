import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { http, startTestServer, type TestServer } from './support/harness.js';

describe('HTTP surface: health, documents, request ids', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('/healthz and /readyz answer without credentials', async () => {
    expect(await http(server.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await http(server.url, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  test('/openapi.json serves the OpenAPI 3.1 document; /docs and the playground are HTML', async () => {
    const document = await http(server.url, 'GET', '/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(document.body.paths)).toEqual(expect.arrayContaining(['/collections', '/collections/{readable_id}']));
    const docs = await fetch(`${server.url}/docs`, { headers: { accept: 'text/html' } });
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    const playground = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(playground.status).toBe(200);
    expect(await playground.text()).toMatch(/graphiql/i);
  });

  test('every response carries a request id, echoing a sane incoming one', async () => {
    const generated = await http(server.url, 'GET', '/collections', { apiKey: server.apiKey });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await http(server.url, 'GET', '/collections', { apiKey: server.apiKey, headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await http(server.url, 'GET', '/collections', { apiKey: server.apiKey, headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });
});
