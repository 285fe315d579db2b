import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { http, startTestServer, type TestServer } from '../support/harness.js';
import { MAX_DOCUMENT_NESTING } from '../../src/graphql/document-nesting.js';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../../src/shared/json-depth.js';

/**
 * Issue 18, finding 17 (found while measuring the embedded database's limits): a body or GraphQL
 * variables nesting arrays 100,000 levels deep answered 500 on REST (`POST /collections`) and on
 * GraphQL: the text checks at the transports' doors walk a value by recursion and overflowed the
 * stack. A JSON body nested deeper than MAX_JSON_DEPTH is now refused before anything walks it (422
 * on REST, 400 on GraphQL, as a body that does not parse), and values that come another way (GraphQL
 * variables in a GET's query string) are walked to that depth only, the rest one BAD_USER_INPUT.
 *
 * The same for a GraphQL document's own nesting (a literal or a selection ~1,500+ levels deep): it
 * was a 400 that said "Maximum call stack size exceeded" (graphql-js parses by recursion), and with
 * a server's stack above the parse, a depth that parsed alone could still overflow there. A document
 * nesting more than MAX_DOCUMENT_NESTING is refused before it is parsed, as a parse failure.
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

  test('GraphQL: a document nesting deeper than MAX_DOCUMENT_NESTING is a parse failure on /graphql (POST, GET) and /graphql/stream; at the limit it parses', async () => {
    const NESTING_MESSAGE = `Syntax Error: the document nests braces, brackets and parentheses more than ${MAX_DOCUMENT_NESTING} levels deep`;
    /** `query {` and `collections(` are two levels: the argument's literal takes the rest of `nesting`. */
    const document = (nesting: number) => `query { collections(limit: ${'{a:'.repeat(nesting - 2)}1${'}'.repeat(nesting - 2)}) { id } }`;
    const post = (path: string, query: string, headers?: Record<string, string>) => http(server.url, 'POST', path, { apiKey: server.apiKey, body: { query }, headers });
    const refused = { errors: [{ message: NESTING_MESSAGE, extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] };
    for (const nesting of [MAX_DOCUMENT_NESTING + 1, 100_000]) {
      const response = await post('/graphql', document(nesting));
      expect([response.status, response.body]).toEqual([400, refused]);
    }
    // Selections count too; brackets inside strings and comments do not.
    const selections = await post('/graphql', `query { ${'... on Query { '.repeat(3000)} __typename ${'}'.repeat(3000)} }`);
    expect([selections.status, selections.body]).toEqual([400, refused]);
    const quoted = await post('/graphql', `query { # ${'{'.repeat(1000)}\n collections(limit: 1) { name(x: "${'[('.repeat(600)}") } }`);
    expect([quoted.status, quoted.body.errors[0].extensions.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']); // parsed: `name` takes no argument
    const getQuery = (query: string) => http(server.url, 'GET', `/graphql?${query}`, { apiKey: server.apiKey, headers: { 'apollo-require-preflight': 'true' } });
    const deepInUrl = encodeURIComponent(document(MAX_DOCUMENT_NESTING + 1));
    // Read as Apollo reads the URL: a malformed escape elsewhere in the value, or 1,000 parameters before it
    // (where Express's query parser gives up), does not hide the document from the check.
    const dummies = Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join('&');
    for (const query of [`query=${deepInUrl}`, `query=%23%20%ZZ%0A${deepInUrl}`, `${dummies}&query=${deepInUrl}`]) {
      const get = await getQuery(query);
      expect([get.status, get.body]).toEqual([400, refused]);
    }
    const stream = await post('/graphql/stream', document(MAX_DOCUMENT_NESTING + 1), { accept: 'text/event-stream' });
    expect([stream.status, stream.body]).toEqual([400, refused]);
    // At the limit the document parses, with the server's stack above the parse, and is refused for what it says.
    const atLimit = await post('/graphql', document(MAX_DOCUMENT_NESTING));
    expect(atLimit.status).toBe(400);
    expect(atLimit.body.errors[0].message).toMatch(/^Int cannot represent non-integer value/);
    const deepSelection = await post('/graphql', `query { ${'... on Query { '.repeat(MAX_DOCUMENT_NESTING - 1)} __typename ${'}'.repeat(MAX_DOCUMENT_NESTING - 1)} }`);
    expect(deepSelection.body).toEqual({ data: { __typename: 'Query' } });
  });
});
