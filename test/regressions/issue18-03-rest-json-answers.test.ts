import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { http, startTestServer, type TestServer } from '../support/harness.js';
import { FAST_WORKER } from '../support/sync-helpers.js';

/**
 * Issue 18, finding 3: a REST search answered through express's res.json, which hashes every body for
 * an ETag (SHA-1, after copying it to a Buffer) that no POST can use: conditional requests are GET's
 * and HEAD's. POST answers are now written as they are; GET answers keep their ETag.
 */
describe('issue 18-03: REST answers of POST carry no ETag, GET answers keep theirs', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded', env: FAST_WORKER });
    await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Docs', readable_id: 'docs' } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('a POST search: JSON in UTF-8, its exact length, no ETag', async () => {
    const response = await fetch(`${server.url}/collections/docs/search/instant`, {
      method: 'POST',
      headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'café ünïcode', retrieval_strategy: 'hybrid' }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(response.headers.get('etag')).toBeNull();
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({ results: [] });
  });

  test('a POST creating a collection: the same, with a non-ASCII name counted in bytes', async () => {
    const response = await fetch(`${server.url}/collections`, {
      method: 'POST',
      headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Données ✓', readable_id: 'donnees' }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(response.headers.get('etag')).toBeNull();
    expect(JSON.parse(bytes.toString('utf8')).name).toBe('Données ✓');
  });

  test('a GET keeps its ETag (express\'s weak one, the same for the same body)', async () => {
    const get = () => fetch(`${server.url}/collections/docs`, { headers: { 'x-api-key': server.apiKey } });
    const [first, second] = [await get(), await get()];
    expect(first.status).toBe(200);
    expect(JSON.parse(await first.text()).readable_id).toBe('docs');
    expect(first.headers.get('etag')).toMatch(/^W\/"[0-9a-f]+-[\w+/=-]+"$/);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
  });
});
