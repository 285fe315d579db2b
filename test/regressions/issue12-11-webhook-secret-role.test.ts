import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 11: a member could read a subscription's signing secret (`include_secret=true`)
 * and forge deliveries. The secret is for admins and owners (API keys act as admin); a member who
 * asks for it gets 403, as for every operation above a caller's role, and still reads the rest.
 */
describe('issue 12-11: webhook signing secrets are for admins and owners', () => {
  const secret = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
  let server: TestServer;
  let tokens: Record<'member' | 'admin' | 'owner', string>;
  let id: string;

  beforeAll(async () => {
    server = await startTestServer({
      deployment: 'servers',
      roles: { api: true, worker: false },
      env: { CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true', CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', CATCHMENT_RATE_LIMIT_REQUESTS: '0' },
    });
    const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    const issue = (role: string) => server.running.core.services.auth.issueToken({ organizationId: orgId, email: `${role}@example.com`, role }).then((t) => t.access_token);
    const [member, admin, owner] = await Promise.all([issue('member'), issue('admin'), issue('owner')]);
    tokens = { member, admin, owner };
    const created = await http(server.url, 'POST', '/webhooks/subscriptions', { token: admin, body: { url: 'http://127.0.0.1:9/hook', event_types: ['collection.created'], secret } });
    expect(created.status).toBe(200);
    id = created.body.id;
  }, 60_000);
  afterAll(() => server?.stop());

  const detail = (query: string, auth: { apiKey?: string; token?: string }) => http(server.url, 'GET', `/webhooks/subscriptions/${id}${query}`, auth);
  const SUBSCRIPTION = 'query ($id: ID!, $include: Boolean!) { webhookSubscription(id: $id, includeSecret: $include) { id secret } }';

  test('a member asking for the secret gets 403 over REST and FORBIDDEN over GraphQL; without it, the subscription reads as before', async () => {
    const refused = await detail('?include_secret=true', { token: tokens.member });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: expect.stringMatching(/signing secret .* needs the admin role/) });
    expect(JSON.stringify(refused.body)).not.toContain(secret);

    const gql = await graphql(server.url, SUBSCRIPTION, { id, include: true }, { token: tokens.member });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(JSON.stringify(gql.body)).not.toContain(secret);

    const plain = await detail('', { token: tokens.member });
    expect(plain.status).toBe(200);
    expect(plain.body.id).toBe(id);
    expect(plain.body).not.toHaveProperty('secret');
    expect((await graphql(server.url, SUBSCRIPTION, { id, include: false }, { token: tokens.member })).body.data).toEqual({ webhookSubscription: { id, secret: null } });
  });

  test('admins, owners and API keys read the secret', async () => {
    for (const auth of [{ token: tokens.admin }, { token: tokens.owner }, { apiKey: server.apiKey }]) {
      const read = await detail('?include_secret=true', auth);
      expect(read.status).toBe(200);
      expect(read.body.secret).toBe(secret);
    }
    expect((await graphql(server.url, SUBSCRIPTION, { id, include: true }, { apiKey: server.apiKey })).body.data).toEqual({ webhookSubscription: { id, secret } });
  });
});
