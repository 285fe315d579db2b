import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { firstStreamResult } from '../support/graphql-stream.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 6: 1,000 `searchInstant` aliases ran in one request (3.1 s), and searches drew
 * on no budget. Searches now draw once each (per search field executed, on every transport) on a
 * search family of their own (CATCHMENT_SEARCH_RATE_LIMIT_REQUESTS), and GraphQL operations are
 * refused before they run when too costly or too deep (QUERY_TOO_COMPLEX, HTTP 400).
 */

const SEARCH_BUDGET = 5;
const SEARCH = 'searchInstant(readableId: "docs", input: { query: "budget" }) { results { entityId name } }';

describe('issue 12-06: search is metered and GraphQL operations have a cost limit', () => {
  let server: TestServer;

  /** A fresh organization (a full budget of its own) with an empty collection `docs`. */
  async function organization(name: string): Promise<string> {
    const { api_key: apiKey } = await server.running.core.services.organizations.createOrganization(name);
    expect((await http(server.url, 'POST', '/collections', { apiKey, body: { name: 'Docs', readable_id: 'docs' } })).status).toBe(200);
    return apiKey;
  }

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_SEARCH_RATE_LIMIT_REQUESTS: String(SEARCH_BUDGET) } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('REST: every search path draws on the search budget; past it, 429 with Retry-After, while other families keep theirs', async () => {
    const apiKey = await organization('REST searcher');
    const searches: [string, string, unknown?][] = [
      ['POST', '/collections/docs/search/instant', { query: 'budget' }],
      ['POST', '/collections/docs/search/classic', { query: 'budget' }],
      ['POST', '/collections/docs/search/agentic', { query: 'budget' }],
      ['GET', '/collections/docs/search?query=budget'],
      ['POST', '/collections/docs/search/instant', { query: '' }], // refused input spends too
    ];
    for (const [index, [method, path, body]] of searches.entries()) {
      const response = await http(server.url, method, path, { apiKey, body });
      expect([path, response.headers.get('ratelimit-limit'), response.headers.get('ratelimit-remaining')]).toEqual([path, String(SEARCH_BUDGET), String(SEARCH_BUDGET - index - 1)]);
    }
    for (const [method, path, body] of [...searches.slice(0, 4), ['POST', '/collections/docs/search/agentic/stream', { query: 'budget' }]] as const) {
      const refused = await http(server.url, method, path, { apiKey, body });
      expect([path, refused.status, refused.body.detail]).toEqual([path, 429, expect.stringMatching(/Rate limit exceeded/)]);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const other = await http(server.url, 'GET', '/collections', { apiKey });
    expect(other.status).toBe(200);
    expect(Number(other.headers.get('ratelimit-limit'))).toBeGreaterThan(SEARCH_BUDGET);
  });

  test('GraphQL: each aliased search draws once; a request refused by the limit is a 429 with Retry-After', async () => {
    const apiKey = await organization('GraphQL searcher');
    const aliases = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `s${i}: ${SEARCH}`).join(' ')} }`;
    const three = await graphql(server.url, aliases(3), {}, { apiKey });
    expect([three.status, three.body.errors, Object.keys(three.body.data ?? {})]).toEqual([200, undefined, ['s0', 's1', 's2']]);
    expect(three.headers.get('ratelimit-remaining')).toBe(String(SEARCH_BUDGET - 3));

    // One left, three asked: the search fields are non-null, so a refused one voids the response.
    const over = await graphql(server.url, aliases(3), {}, { apiKey });
    expect([over.status, over.body.data]).toEqual([429, null]);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.body.errors![0]!.extensions).toEqual({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    const rest = await http(server.url, 'POST', '/collections/docs/search/instant', { apiKey, body: { query: 'budget' } });
    expect(rest.status).toBe(429); // the budget is spent, whichever transport asks
  });

  test('GraphQL: 1,000 aliased searches are refused before any runs (QUERY_TOO_COMPLEX, 400), on both endpoints', async () => {
    const apiKey = await organization('Alias flooder');
    const query = `{ ${Array.from({ length: 1000 }, (_, i) => `s${i}: ${SEARCH}`).join('\n')} }`;
    const started = Date.now();
    const refused = await graphql(server.url, query, {}, { apiKey });
    expect(Date.now() - started).toBeLessThan(2500); // parsing 100 kB of GraphQL, on a busy test machine: the search is not run (below)
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors).toEqual([{ message: expect.stringMatching(/^Query too complex: it would resolve 301,000 fields, over the limit of 50,000/), extensions: { code: 'QUERY_TOO_COMPLEX' } }]);

    const streamed = await firstStreamResult(server.url, apiKey, query);
    expect(streamed.errors).toEqual([expect.objectContaining({ extensions: { code: 'QUERY_TOO_COMPLEX' } })]);

    // Nothing ran: the organization's whole search budget is left.
    const search = await http(server.url, 'POST', '/collections/docs/search/instant', { apiKey, body: { query: 'budget' } });
    expect([search.status, search.headers.get('ratelimit-remaining')]).toEqual([200, String(SEARCH_BUDGET - 1)]);
  });

  test('GraphQL: list sizes count (a literal limit or a variable), and so does depth', async () => {
    const apiKey = await organization('Deep diver');
    const wide = '{ a: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } b: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } c: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } d: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } e: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } f: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } g: collections(limit: 1000) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } }';
    expect((await graphql(server.url, wide, {}, { apiKey })).body.errors![0]!.extensions!.code).toBe('QUERY_TOO_COMPLEX');
    const paged = 'query ($n: Int!) { collections(limit: $n) { id name readableId status vectorSize embeddingModelName createdAt modifiedAt } }';
    expect((await graphql(server.url, paged, { n: 1000 }, { apiKey })).body).toEqual({ data: { collections: [expect.objectContaining({ readableId: 'docs' })] } });
    // Type references are the only deep paths of this schema (GraphQL's own rule bounds the others).
    const nested = (levels: number) => `{ __type(name: "Query") { ${'ofType { '.repeat(levels)}name${' }'.repeat(levels)} } }`;
    expect((await graphql(server.url, nested(10), {}, { apiKey })).body.errors).toBeUndefined();
    const deep = await graphql(server.url, nested(25), {}, { apiKey });
    expect([deep.status, deep.body.errors![0]!.message]).toEqual([400, expect.stringMatching(/more than 20 levels deep/)]);
  });
});
