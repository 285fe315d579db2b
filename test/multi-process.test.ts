import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createClient } from 'graphql-sse';
import { http, startTestServer, type TestServer } from './support/harness.js';

/** Two API processes' worth of servers on one PostgreSQL database and one Redis. */
describe('several API servers on one database (servers deployment)', () => {
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    first = await startTestServer({ deployment: 'servers', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '12', CATCHMENT_RATE_LIMIT_WINDOW_SECONDS: '60' } });
    second = await startTestServer({ deployment: 'servers', databaseUrl: first.databaseUrl, redisPrefix: first.redisPrefix, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '12', CATCHMENT_RATE_LIMIT_WINDOW_SECONDS: '60' } });
  });
  afterAll(async () => {
    await second?.running.stop();
    await first?.stop();
  });

  test('what one server writes, the other reads; tokens issued by one verify on the other', async () => {
    const created = await http(first.url, 'POST', '/collections', { apiKey: first.apiKey, body: { name: 'Shared data', readable_id: 'shared-data' } });
    expect(created.status).toBe(200);
    const read = await http(second.url, 'GET', '/collections/shared-data', { apiKey: first.apiKey });
    expect(read.body).toEqual(created.body);
    const { access_token } = await first.running.core.services.auth.issueToken({ organizationId: created.body.organization_id, email: 'x@example.com', role: 'admin' });
    expect((await http(second.url, 'DELETE', '/collections/shared-data', { token: access_token })).status).toBe(200);
    expect((await http(first.url, 'GET', '/collections/shared-data', { apiKey: first.apiKey })).status).toBe(404);
  });

  test('a subscriber on one server sees the events of the other through Redis', async () => {
    const client = createClient({ url: `${second.url}/graphql/stream`, headers: { 'x-api-key': first.apiKey }, retryAttempts: 0 });
    const event = new Promise<any>((resolve, reject) => {
      const dispose = client.subscribe(
        { query: 'subscription { collectionEvents { type collection { readableId } } }' },
        { next: (value) => (dispose(), resolve(value)), error: reject, complete: () => {} },
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await http(first.url, 'POST', '/collections', { apiKey: first.apiKey, body: { name: 'Across servers', readable_id: 'across-servers' } });
    expect((await event).data.collectionEvents).toEqual({ type: 'CREATED', collection: { readableId: 'across-servers' } });
    client.dispose();
  });

  test('the rate limit is shared: 429 with Retry-After and RateLimit headers once the organization spends its budget on either server', async () => {
    const { api_key: key } = await first.running.core.services.organizations.createOrganization('Busy org');
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 14; i++) {
      last = await http(i % 2 ? first.url : second.url, 'GET', '/collections', { apiKey: key });
      statuses.push(last.status);
      if (i === 0) {
        expect(last.headers.get('ratelimit-limit')).toBe('12');
        expect(last.headers.get('ratelimit-remaining')).toBe('11');
        expect(Number(last.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([...Array(12).fill(200), 429, 429]);
    expect(last!.body).toEqual({ detail: expect.stringMatching(/rate limit/i) });
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.headers.get('ratelimit-remaining')).toBe('0');
    // GraphQL draws on the same budget.
    const gql = await http(first.url, 'POST', '/graphql', { apiKey: key, body: { query: '{ collections { id } }' } });
    expect(gql.status).toBe(429);
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another organization is unaffected.
    expect((await http(first.url, 'GET', '/collections', { apiKey: first.apiKey })).status).toBe(200);
  });

  test('requests refused as bad input (422) spend the budget too; search is not a limited family', async () => {
    const { api_key: key } = await first.running.core.services.organizations.createOrganization('Careless org');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await http(first.url, 'POST', '/collections', { apiKey: key, body: { name: 'x' } })).status);
    expect(statuses).toEqual(Array(12).fill(422));
    const refused = await http(second.url, 'POST', '/collections', { apiKey: key, body: { name: 'x' } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await http(first.url, 'POST', '/collections', { apiKey: key, body: { name: 'A valid name' } })).status).toBe(429);
    // Other families keep their own budget, and bad search input is a plain 422.
    expect((await http(first.url, 'GET', '/sources', { apiKey: key })).status).toBe(200);
    expect((await http(first.url, 'POST', '/collections/anything/search/instant', { apiKey: key, body: { query: 'q', limit: 0 } })).status).toBe(422);
  });
});
