import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { firstStreamResult } from '../support/graphql-stream.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 8: a lone surrogate (`\ud800`) in a collection name, or a NUL in a connection
 * name, description or webhook URL, was a 500 (PostgreSQL refuses both). Every string a client
 * sends is now checked once at the transport's door: REST answers 422 naming the field, GraphQL
 * BAD_USER_INPUT with its path, on any field, object keys included.
 */

const LONE_SURROGATE = 'Docs \ud800';
const NUL = 'Docs\u0000';

describe('issue 12-08: text with NUL or a lone surrogate is bad input, never a 500', () => {
  let server: TestServer;
  let connectionId: string;
  const call = (method: string, path: string, body?: unknown) => http(server.url, method, path, { apiKey: server.apiKey, body });
  const locs = (response: { body: { detail: { loc: unknown[] }[] } }) => response.body.detail.map((issue) => issue.loc);

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false } });
    expect((await call('POST', '/collections', { name: 'Docs', readable_id: 'docs' })).status).toBe(200);
    connectionId = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'docs', name: 'Wiki' })).body.id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('REST: the body, the query and the path, each refused with 422 at the field', async () => {
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['POST', '/collections', { name: LONE_SURROGATE }, ['body', 'name']],
      ['PATCH', '/collections/docs', { name: NUL }, ['body', 'name']],
      ['POST', '/source-connections', { short_name: 'push', readable_collection_id: 'docs', name: NUL }, ['body', 'name']],
      ['POST', '/source-connections', { short_name: 'push', readable_collection_id: 'docs', name: 'Ok', description: NUL }, ['body', 'description']],
      ['PATCH', `/source-connections/${connectionId}`, { description: `Fine\ud800` }, ['body', 'description']],
      ['POST', '/webhooks/subscriptions', { url: 'https://hooks.example.com/\u0000', event_types: ['sync.completed'] }, ['body', 'url']],
      ['POST', `/source-connections/${connectionId}/entities`, { entities: [{ id: 'a', text: 'fine', fields: { [`own${NUL}`]: 'x' } }] }, ['body', 'entities', 0, 'fields', `own${NUL}`]],
      ['POST', '/collections/docs/search/instant', { query: `what \ud800` }, ['body', 'query']],
      ['GET', '/collections?search=%00', undefined, ['query', 'search']],
      ['GET', '/collections/do%00cs', undefined, ['path', 'readable_id']],
    ];
    for (const [method, path, body, loc] of cases) {
      const response = await call(method, path, body);
      expect([method, path, response.status]).toEqual([method, path, 422]);
      expect(locs(response)).toContainEqual(loc);
    }
    const issue = (await call('POST', '/collections', { name: LONE_SURROGATE })).body.detail[0];
    expect(issue).toEqual({ loc: ['body', 'name'], msg: expect.stringMatching(/valid Unicode without NUL/), type: 'string_unicode' });
    // Nothing was stored on the way.
    expect((await call('GET', '/collections')).body.map((collection: { name: string }) => collection.name)).toEqual(['Docs']);
  });

  test('GraphQL: variables and literals, at any depth, are BAD_USER_INPUT with their path', async () => {
    const create = 'mutation ($input: CollectionCreateInput!) { createCollection(input: $input) { id } }';
    const variable = await graphql(server.url, create, { input: { name: LONE_SURROGATE } }, { apiKey: server.apiKey });
    expect(variable.status).toBe(400);
    expect(variable.body.errors).toEqual([
      { message: expect.stringMatching(/^input\.name: Text must be valid Unicode/), extensions: { code: 'BAD_USER_INPUT', detail: [{ loc: ['input', 'name'], msg: expect.any(String), type: 'string_unicode' }] } },
    ]);

    const literal = await graphql(server.url, 'mutation { createCollection(input: { name: "Docs\\u0000" }) { id } }', {}, { apiKey: server.apiKey });
    expect([literal.status, literal.body.errors![0]!.extensions!.detail[0].loc]).toEqual([400, ['input', 'name']]);

    const push = 'mutation ($id: ID!, $entities: [PushEntityInput!]) { pushEntities(sourceConnectionId: $id, entities: $entities) { id } }';
    const nested = await graphql(server.url, push, { id: connectionId, entities: [{ id: 'a', text: 'fine' }, { id: 'b', text: NUL }] }, { apiKey: server.apiKey });
    expect(nested.body.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', detail: [expect.objectContaining({ loc: ['entities', 1, 'text'] })] });

    const webhook = await graphql(server.url, 'mutation ($url: String!) { createWebhookSubscription(input: { url: $url, eventTypes: ["sync.completed"] }) { id } }', { url: 'https://hooks.example.com/\u0000' }, { apiKey: server.apiKey });
    expect(webhook.body.errors![0]!.extensions!.detail[0].loc).toEqual(['url']);
  });

  test('graphql-sse: the same refusal, as the stream\'s one result', async () => {
    const result = await firstStreamResult(server.url, server.apiKey, 'query ($q: String!) { collections(search: $q) { id } }', { q: NUL });
    expect(result.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', detail: [expect.objectContaining({ loc: ['q'] })] } })]);
  });
});
