import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { graphql, http, startTestServer, type TestServer } from './support/harness.js';

/** Auth and organization isolation, on the servers deployment (PostgreSQL + Redis). */
describe('authentication, roles and organization isolation', () => {
  let server: TestServer;
  let orgA: { id: string; key: string };
  let orgB: { id: string; key: string };

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'servers' });
    const organizations = server.running.core.services.organizations;
    const a = await organizations.createOrganization('Org A');
    const b = await organizations.createOrganization('Org B');
    orgA = { id: a.organization.id, key: a.api_key };
    orgB = { id: b.organization.id, key: b.api_key };
  });
  afterAll(async () => {
    await server?.stop();
  });

  const token = (organizationId: string, role: string, email = `${role}@example.com`, ttlSeconds?: number) =>
    server.running.core.services.auth.issueToken({ organizationId, email, role, ttlSeconds }).then((t) => t.access_token);

  test('no credentials → 401 with detail on every REST operation; unknown paths stay 404', async () => {
    for (const [method, path] of [['GET', '/collections'], ['POST', '/collections'], ['GET', '/collections/x'], ['PATCH', '/collections/x'], ['DELETE', '/collections/x']]) {
      const response = await http(server.url, method!, path!, { body: method === 'GET' || method === 'DELETE' ? undefined : { name: 'Some name' } });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ detail: expect.any(String) });
    }
    expect((await http(server.url, 'GET', '/no-such-path')).status).toBe(404);
  });

  test('a wrong API key, a revoked key, a forged or expired token → 401', async () => {
    expect((await http(server.url, 'GET', '/collections', { apiKey: 'ck_wrong' })).status).toBe(401);
    const organizations = server.running.core.services.organizations;
    const extra = await organizations.createApiKey(orgA.id);
    expect((await http(server.url, 'GET', '/collections', { apiKey: extra.api_key })).status).toBe(200);
    await organizations.revokeApiKey(extra.id);
    const revoked = await http(server.url, 'GET', '/collections', { apiKey: extra.api_key });
    expect(revoked.status).toBe(401);
    expect(revoked.body.detail).toMatch(/revoked|invalid/i);

    const good = await token(orgA.id, 'admin');
    const [header, payload] = good.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 'owner' })).toString('base64url');
    expect((await http(server.url, 'GET', '/collections', { token: `${header}.${forgedPayload}.${good.split('.')[2]}` })).status).toBe(401);
    expect((await http(server.url, 'GET', '/collections', { token: 'not.a.jwt' })).status).toBe(401);
    expect((await http(server.url, 'GET', '/collections', { headers: { authorization: 'Basic abc' } })).status).toBe(401);

    const shortLived = await token(orgA.id, 'member', 'brief@example.com', 1);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const expired = await http(server.url, 'GET', '/collections', { token: shortLived });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toMatch(/expired/i);
  });

  test('a bearer token works alone and with its organization\'s key, not with another organization\'s key', async () => {
    const member = await token(orgA.id, 'member');
    expect((await http(server.url, 'GET', '/collections', { token: member })).status).toBe(200);
    expect((await http(server.url, 'GET', '/collections', { token: member, apiKey: orgA.key })).status).toBe(200);
    expect((await http(server.url, 'GET', '/collections', { token: member, apiKey: orgB.key })).status).toBe(401);
  });

  test('members create and rename; deleting needs admin or owner (403 otherwise); emails are recorded', async () => {
    const member = await token(orgA.id, 'member', 'mia@example.com');
    const admin = await token(orgA.id, 'admin', 'ada@example.com');
    const created = await http(server.url, 'POST', '/collections', { token: member, body: { name: 'Member made' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ created_by_email: 'mia@example.com', modified_by_email: 'mia@example.com' });
    const renamed = await http(server.url, 'PATCH', `/collections/${created.body.readable_id}`, { token: admin, body: { name: 'Admin renamed' } });
    expect(renamed.body).toMatchObject({ created_by_email: 'mia@example.com', modified_by_email: 'ada@example.com' });
    const refused = await http(server.url, 'DELETE', `/collections/${created.body.readable_id}`, { token: member });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: expect.stringMatching(/admin/) });
    expect((await http(server.url, 'GET', `/collections/${created.body.readable_id}`, { token: member })).status).toBe(200);
    expect((await http(server.url, 'DELETE', `/collections/${created.body.readable_id}`, { token: admin })).status).toBe(200);
  });

  test('another organization\'s collection is a 404 on every path, over REST and GraphQL, and never listed', async () => {
    const created = await http(server.url, 'POST', '/collections', { apiKey: orgA.key, body: { name: 'Secret of A', readable_id: 'secret-of-a' } });
    expect(created.status).toBe(200);

    for (const [method, body] of [['GET'], ['PATCH', { name: 'Taken over' }], ['DELETE']] as const) {
      const response = await http(server.url, method, '/collections/secret-of-a', { apiKey: orgB.key, body });
      expect(response.status).toBe(404);
    }
    const listB = await http(server.url, 'GET', '/collections?limit=1000', { apiKey: orgB.key });
    expect(listB.body.map((c: { readable_id: string }) => c.readable_id)).not.toContain('secret-of-a');
    expect((await http(server.url, 'GET', '/collections?search=secret', { apiKey: orgB.key })).body).toEqual([]);

    // The same readable_id is free in organization B: ids are unique per organization.
    const own = await http(server.url, 'POST', '/collections', { apiKey: orgB.key, body: { name: 'B has one too', readable_id: 'secret-of-a' } });
    expect(own.status).toBe(200);
    expect(own.body.organization_id).toBe(orgB.id);

    const viaGraphql = await graphql(server.url, '{ collection(readableId: "secret-of-a") { name organizationId } }', {}, { apiKey: orgB.key });
    expect(viaGraphql.body.data).toEqual({ collection: { name: 'B has one too', organizationId: orgB.id } });
    const deleteViaGraphql = await graphql(server.url, 'mutation { deleteCollection(readableId: "secret-of-a") { id } }', {}, { token: await token(orgB.id, 'owner') });
    expect(deleteViaGraphql.body.data?.deleteCollection.id).toBe(own.body.id);

    const aStill = await http(server.url, 'GET', '/collections/secret-of-a', { apiKey: orgA.key });
    expect(aStill.status).toBe(200);
    expect(aStill.body.name).toBe('Secret of A');
    const updateAcross = await graphql(server.url, 'mutation { updateCollection(readableId: "secret-of-a", input: {name: "Hijacked"}) { id } }', {}, { apiKey: orgB.key });
    expect(updateAcross.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  test('GraphQL: introspection needs no key, operations do (401), and a member deleting gets 403', async () => {
    const introspection = await graphql(server.url, '{ __schema { queryType { name } } }');
    expect(introspection.status).toBe(200);
    const anonymous = await graphql(server.url, '{ collections { id } }');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const viewer = await graphql(server.url, '{ viewer { kind role email organization { id name } } }', {}, { token: await token(orgA.id, 'member', 'mo@example.com') });
    expect(viewer.body.data).toEqual({ viewer: { kind: 'user', role: 'member', email: 'mo@example.com', organization: { id: orgA.id, name: 'Org A' } } });
    const forbidden = await graphql(server.url, 'mutation { deleteCollection(readableId: "whatever") { id } }', {}, { token: await token(orgA.id, 'member') });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
