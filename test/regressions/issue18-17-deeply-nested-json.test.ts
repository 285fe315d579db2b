import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { http, startTestServer, type TestServer } from '../support/harness.js';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../../src/shared/json-depth.js';

/**
 * Issue 18, finding 17 (found while measuring the embedded database's limits): a body or GraphQL
 * variables nesting arrays 100,000 levels deep answered 500 on REST (`POST /collections`) and on
 * GraphQL: the text checks at the transports' doors walk a value by recursion and overflowed the
 * stack. A JSON body nested deeper than MAX_JSON_DEPTH is now refused before anything walks it (422
 * on REST, 400 on GraphQL, as a body that does not parse), and values that come another way (GraphQL
 * variables in a GET's query string) are walked to that depth only, the rest one BAD_USER_INPUT.
 */
describe('issue 18-17: deeply nested JSON is bad input, never a 500', () => {
  let server: TestServer;
  const call = (method: string, path: string, rawBody?: string) => http(server.url, method, path, { apiKey: server.apiKey, rawBody });
  /** JSON text of arrays nested `depth` levels (JSON.stringify of such a value would overflow here too). */
  const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('REST: a body 100,000 levels deep is 422 at the body; one within the limit reaches the usual validation', async () => {
    const deep = await call('POST', '/collections', `{"name":"Docs","metadata":${arrays(100_000)}}`);
    expect(deep.status).toBe(422);
    expect(deep.body).toEqual({ detail: [{ loc: ['body'], msg: TOO_DEEP_MESSAGE, type: 'value_error' }] });
    // At the limit (the body's object is one level): past the door, refused for the unknown field alone.
    const atLimit = await call('POST', '/collections', `{"name":"Docs","metadata":${arrays(MAX_JSON_DEPTH - 1)}}`);
    expect(atLimit.status).toBe(422);
    expect(JSON.stringify(atLimit.body)).not.toContain(TOO_DEEP_MESSAGE);
    const overLimit = await call('POST', '/collections', `{"name":"Docs","metadata":${arrays(MAX_JSON_DEPTH)}}`);
    expect(overLimit.body.detail[0].msg).toBe(TOO_DEEP_MESSAGE);
    expect((await call('GET', '/collections')).body).toEqual([]);
  });

  test('GraphQL: deep variables in a POST are 400; in a GET query string, BAD_USER_INPUT at the place past the limit', async () => {
    const post = await http(server.url, 'POST', '/graphql', {
      apiKey: server.apiKey,
      rawBody: `{"query":"query ($x: JSON) { collections(limit: 1) { id } }","variables":{"x":${arrays(100_000)}}}`,
    });
    expect(post.status).toBe(400);
    expect(post.body.errors).toEqual([{ message: TOO_DEEP_MESSAGE, extensions: { code: 'BAD_REQUEST' } }]);

    const query = encodeURIComponent('query ($input: InstantSearchInput!) { searchInstant(input: $input, readableId: "docs") { __typename } }');
    const variables = encodeURIComponent(`{"input":${arrays(1000)}}`);
    const get = await http(server.url, 'GET', `/graphql?query=${query}&variables=${variables}`, { apiKey: server.apiKey, headers: { 'apollo-require-preflight': 'true' } });
    expect(get.status).toBe(400);
    expect(get.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(get.body.errors[0].extensions.detail).toEqual([{ loc: ['input', ...Array(MAX_JSON_DEPTH - 1).fill(0)], msg: TOO_DEEP_MESSAGE, type: 'value_error' }]);
  });
});
