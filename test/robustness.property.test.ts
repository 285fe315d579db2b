import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { http, startTestServer, type TestServer } from './support/harness.js';

/**
 * Random bodies and query strings thrown at the REST paths: never a 500, always the contract's
 * error shapes. Runs on the embedded deployment, with a small body limit to reach 413 too.
 */
describe('REST robustness (property-based)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_MAX_BODY_BYTES: '4096', CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  function expectContractShape(status: number, body: any) {
    expect(status).toBeLessThan(500);
    if (status === 200) return;
    expect([401, 404, 405, 409, 413, 422]).toContain(status);
    if (status === 422) {
      expect(Array.isArray(body.detail)).toBe(true);
      expect(body.detail.length).toBeGreaterThan(0);
      for (const item of body.detail) {
        expect(Array.isArray(item.loc)).toBe(true);
        expect(['body', 'query', 'path']).toContain(item.loc[0]);
        for (const part of item.loc) expect(['string', 'number']).toContain(typeof part);
        expect(typeof item.msg).toBe('string');
        expect(typeof item.type).toBe('string');
      }
    } else {
      expect(typeof body.detail).toBe('string');
    }
  }

  const jsonValue = fc.jsonValue({ maxDepth: 4 });
  const collectionish = fc.record(
    {
      name: fc.oneof(fc.string({ maxLength: 80 }), jsonValue),
      readable_id: fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/), jsonValue),
      sync_config: fc.oneof(
        jsonValue,
        fc.record(
          {
            destinations: fc.oneof(jsonValue, fc.record({ skip_vector_db: jsonValue, target_destinations: fc.oneof(jsonValue, fc.array(fc.uuid())) }, { requiredKeys: [] })),
            behavior: fc.oneof(jsonValue, fc.record({ skip_guardrails: jsonValue, replay_from_arf: fc.boolean() }, { requiredKeys: [] })),
          },
          { requiredKeys: [] },
        ),
      ),
      extra: jsonValue,
    },
    { requiredKeys: [] },
  );

  test('random JSON bodies on create and patch', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(collectionish, jsonValue), fc.constantFrom('POST /collections', 'PATCH /collections/some-id'), async (body, route) => {
        const [method, path] = route.split(' ') as [string, string];
        const response = await http(server.url, method, path, { apiKey: server.apiKey, body });
        expectContractShape(response.status, response.body);
      }),
      { numRuns: 150 },
    );
  });

  test('random raw bodies (malformed JSON, wrong content types, oversized)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 200 }), fc.string({ minLength: 5000, maxLength: 6000 })),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json'),
        async (rawBody, contentType) => {
          const response = await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, rawBody, headers: { 'content-type': contentType } });
          expectContractShape(response.status, response.body);
          if (rawBody.length > 4096 && contentType.includes('json')) expect(response.status).toBe(413);
        },
      ),
      { numRuns: 80 },
    );
  });

  test('random query strings and paths on the collection routes', async () => {
    const queryValue = fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String), fc.double().map(String), fc.constant(''));
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom('skip', 'limit', 'search', 'other', 'skip[]', 'limit[a]'), queryValue, { maxKeys: 4 }),
        fc.oneof(fc.constant('/collections'), fc.string({ maxLength: 30 }).map((id) => `/collections/${encodeURIComponent(id)}`)),
        fc.constantFrom('GET', 'DELETE', 'PUT', 'PATCH'),
        async (query, path, method) => {
          const search = new URLSearchParams(query).toString();
          const response = await http(server.url, method, `${path}${search ? `?${search}` : ''}`, { apiKey: server.apiKey, body: method === 'PATCH' ? {} : undefined });
          expectContractShape(response.status, response.body);
        },
      ),
      { numRuns: 150 },
    );
  });

  test('fixed edge cases: unknown path 404, unknown method 405 with Allow, malformed JSON 422, oversized 413', async () => {
    const unknown = await http(server.url, 'GET', '/nothing-here', { apiKey: server.apiKey });
    expect(unknown).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    const wrongMethod = await http(server.url, 'PUT', '/collections', { apiKey: server.apiKey, body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toMatch(/GET/);
    expect(wrongMethod.headers.get('allow')).toMatch(/POST/);
    const malformed = await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, rawBody: '{"name": ' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    const oversized = await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'x'.repeat(10_000) } });
    expect(oversized).toMatchObject({ status: 413, body: { detail: expect.any(String) } });
    // Integers beyond GraphQL's 32-bit Int, broken percent-encoding, bodies in an unknown encoding.
    expect((await http(server.url, 'GET', '/collections?skip=2147483648', { apiKey: server.apiKey })).status).toBe(422);
    expect((await http(server.url, 'POST', '/collections/x/search/instant', { apiKey: server.apiKey, body: { query: 'q', offset: 3000000000 } })).status).toBe(422);
    expect((await http(server.url, 'GET', '/collections/%E0%A4%A', { apiKey: server.apiKey })).status).toBe(404);
    const gzip = await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, rawBody: 'not gzip', headers: { 'content-encoding': 'gzip' } });
    expect(gzip.status).toBeGreaterThanOrEqual(400);
    expect(gzip.status).toBeLessThan(500);
    // Only the distinct-connections mode of GraphQL over SSE: no reserved streams.
    const reserve = await http(server.url, 'PUT', '/graphql/stream', { apiKey: server.apiKey });
    expect(reserve.status).toBe(405);
    // Nothing above created anything by accident.
    const list = await http(server.url, 'GET', '/collections?limit=1000', { apiKey: server.apiKey });
    for (const collection of list.body) expect(collection.name.length).toBeGreaterThanOrEqual(4);
  });
});
