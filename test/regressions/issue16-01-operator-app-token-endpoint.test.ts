import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CredentialsRejectedError } from '../../src/connectors/contract/errors.js';
import { createTokenProvider } from '../../src/modules/connections/oauth/token-provider.js';
import { createLogger } from '../../src/platform/logger.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';
import { TestOAuthProvider } from '../support/oauth-provider.js';

/**
 * Another party's token endpoint, as an attacker would run it: its authorization endpoint sends the
 * browser straight back with a code (RFC 6749 §4.1.2), and its token endpoint (§4.1.3) records every
 * request it gets, client authentication included, and answers with a token.
 */
class RecordingTokenEndpoint {
  private server: Server | null = null;
  /** Each token request: its Authorization header and body, as received. */
  readonly requests: string[] = [];

  get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer(async (request: IncomingMessage, response) => {
      const url = new URL(request.url ?? '/', this.origin);
      if (url.pathname === '/oauth/authorize') {
        const back = new URL(url.searchParams.get('redirect_uri')!);
        back.searchParams.set('code', 'code-from-elsewhere');
        back.searchParams.set('state', url.searchParams.get('state')!);
        response.writeHead(302, { location: back.toString() }).end();
        return;
      }
      let body = '';
      for await (const chunk of request) body += chunk;
      this.requests.push(`${request.headers.authorization ?? ''} ${body}`);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'elsewhere-token', token_type: 'bearer', expires_in: 3600 }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Whether any request it got carried `secret` (in the body, or in HTTP Basic credentials). */
  received(secret: string): boolean {
    return this.requests.some((request) => request.includes(secret) || request.includes(Buffer.from(`${OPERATOR.id}:${secret}`).toString('base64')));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const OPERATOR = { id: 'operator-client', secret: 'operator-secret-0f1e2d3c4b5a' };
const OWN = { id: 'own-client', secret: 'own-secret-9a8b7c6d5e4f' };

/**
 * Issue 16, finding 1: a source's token endpoint comes from its connection's config (a self-managed
 * GitLab's base URL, GitHub Enterprise, the stub's `oauth_token_url`), which any member writes when
 * creating a connection. The operator's OAuth app was used for whatever endpoint a connection named,
 * so a member could have the operator's client secret sent to a server of their own: by signing in
 * through a connection pointing there, by pointing a pending sign-in there before its callback, or by
 * giving an expired token with a refresh token. A caller's own (BYOC) client secret left in a pending
 * sign-in likewise went along with a config an admin pointed elsewhere. Now the operator's app serves
 * the token endpoint it was registered for (the source's default, or `--token-url`), a sign-in's code
 * and client go only to the endpoint it was made for, and a BYOC secret is reused only there.
 */
describe("issue 16-01: OAuth client secrets go only to the token endpoint they were registered for (against local servers speaking RFC 6749)", () => {
  const provider = new TestOAuthProvider();
  const elsewhere = new RecordingTokenEndpoint();
  let server: TestServer;
  let member: string;
  let admin: string;
  const collection = 'issue16-01';

  beforeAll(async () => {
    await provider.start();
    await elsewhere.start();
    provider.clients.set(OPERATOR.id, OPERATOR.secret);
    provider.clients.set(OWN.id, OWN.secret);
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await server.running.core.services.operatorApps.set('stub', { clientId: OPERATOR.id, clientSecret: OPERATOR.secret, tokenUrl: provider.tokenUrl });
    const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    const issue = (role: string) => server.running.core.services.auth.issueToken({ organizationId: orgId, email: `${role}@example.com`, role }).then((t) => t.access_token);
    [member, admin] = await Promise.all([issue('member'), issue('admin')]);
    expect((await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Issue 16-01', readable_id: collection } })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await provider.stop();
    await elsewhere.stop();
  });

  const legitimate = () => ({ entity_count: 2, oauth_authorize_url: provider.authorizeUrl, oauth_token_url: provider.tokenUrl });
  const redirected = () => ({ entity_count: 2, oauth_authorize_url: `${elsewhere.origin}/oauth/authorize`, oauth_token_url: `${elsewhere.origin}/oauth/token` });
  const create = (token: string, config: Record<string, unknown>, authentication: Record<string, unknown>) =>
    http(server.url, 'POST', '/source-connections', { token, body: { short_name: 'stub', readable_collection_id: collection, config, authentication, sync_immediately: false } });
  /** Follows a sign-in link as a browser does; the service's own page ends it (no redirect_url). */
  const signIn = async (authUrl: string) => {
    const response = await fetch(authUrl, { redirect: 'follow' });
    return { status: response.status, page: await response.text() };
  };

  test('a member cannot sign in with the operator app through a connection naming another token endpoint', async () => {
    const created = await create(member, redirected(), {});
    expect(created.status).toBe(422);
    expect(created.body.detail[0]).toMatchObject({ loc: ['body', 'authentication'], type: 'byoc_required' });
    expect(created.body.detail[0].msg).toContain(`${elsewhere.origin}/oauth/token`);
    expect(elsewhere.received(OPERATOR.secret)).toBe(false);

    // The endpoint the app was registered for still signs in with it.
    const allowed = await create(member, legitimate(), {});
    expect(allowed.status).toBe(200);
    expect(new URL(allowed.body.auth.auth_url).searchParams.get('client_id')).toBe(OPERATOR.id);
    expect((await signIn(allowed.body.auth.auth_url)).status).toBe(200);
    expect(provider.exchanges.at(-1)).toMatchObject({ clientId: OPERATOR.id, outcome: 'issued' });
    expect((await http(server.url, 'GET', `/source-connections/${allowed.body.id}`, { token: member })).body.auth.authenticated).toBe(true);
  });

  test('a pending sign-in whose config is pointed elsewhere before its callback sends the code and secret nowhere', async () => {
    const created = await create(member, legitimate(), {});
    expect(created.status).toBe(200);
    const moved = await http(server.url, 'PATCH', `/source-connections/${created.body.id}`, { token: admin, body: { config: redirected() } });
    expect(moved.status).toBe(200);
    const before = provider.exchanges.length;
    const landed = await signIn(created.body.auth.auth_url);
    expect(landed.status).toBe(400);
    expect(landed.page).toContain('settings changed');
    expect(elsewhere.received(OPERATOR.secret)).toBe(false);
    expect(provider.exchanges.length).toBe(before);
    expect((await http(server.url, 'GET', `/source-connections/${created.body.id}`, { token: admin })).body.auth.authenticated).toBe(false);
  });

  test("a caller's own client secret kept by a pending sign-in is not reused for a token endpoint the config was moved to", async () => {
    const created = await create(member, legitimate(), { client_id: OWN.id, client_secret: OWN.secret });
    expect(created.status).toBe(200);
    expect((await http(server.url, 'PATCH', `/source-connections/${created.body.id}`, { token: admin, body: { config: redirected() } })).status).toBe(200);
    const again = await http(server.url, 'POST', `/source-connections/${created.body.id}/authorize`, { token: admin, body: {} });
    expect(again.status).toBe(422);
    expect(again.body.detail[0]).toMatchObject({ loc: ['body', 'client_id'], type: 'byoc_required' });
    expect(elsewhere.received(OWN.secret)).toBe(false);
    // Given again by whoever moves it, the client signs in there: they proved they hold it.
    const given = await http(server.url, 'POST', `/source-connections/${created.body.id}/authorize`, { token: admin, body: { client_id: 'their-client', client_secret: 'their-secret' } });
    expect(given.status).toBe(200);
    expect(new URL(given.body.auth.auth_url).origin).toBe(elsewhere.origin);
  });

  test('an expired token given with a refresh token is not refreshed with the operator app at another token endpoint', async () => {
    const created = await create(member, redirected(), { access_token: 'expired-access-token', refresh_token: 'some-refresh-token', expires_at: new Date(Date.now() - 60_000).toISOString() });
    expect(created.status).toBe(200);
    const { core } = server.running;
    const tokens = createTokenProvider({
      orm: core.database.orm,
      secretBox: core.secretBox,
      connectionId: created.body.id,
      connector: core.services.sources.connector('stub'),
      config: redirected(),
      operatorApps: core.services.operatorApps,
      allowPrivateNetworks: true,
      logger: createLogger('silent'),
    });
    await expect(tokens.accessToken()).rejects.toBeInstanceOf(CredentialsRejectedError);
    expect(elsewhere.received(OPERATOR.secret)).toBe(false);
  });

  test("the operator's listing names the endpoint each app serves: the registered one, else the source's default", async () => {
    const apps = server.running.core.services.operatorApps;
    await apps.set('github', { clientId: 'gh-client', clientSecret: 'gh-secret' });
    const listed = await apps.list();
    expect(listed.find((app) => app.short_name === 'stub')?.token_url).toBe(provider.tokenUrl);
    expect(listed.find((app) => app.short_name === 'github')?.token_url).toBe('https://github.com/login/oauth/access_token');
    expect(JSON.stringify(listed)).not.toContain('gh-secret');
    await expect(apps.set('stub', { clientId: OPERATOR.id, clientSecret: OPERATOR.secret, tokenUrl: 'javascript:alert(1)' })).rejects.toMatchObject({ issues: [{ loc: ['token_url'], type: 'url_parsing' }] });
  });
});
