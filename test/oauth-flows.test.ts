import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startServer, type RunningServer } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { CredentialsRejectedError } from '../src/connectors/contract/errors.js';
import { createTokenProvider } from '../src/modules/connections/oauth/token-provider.js';
import { capturingLogger } from './support/capturing-logger.js';
import { createTestDatabase, http, REDIS_URL, TEST_ENCRYPTION_KEY, type TestDatabase } from './support/harness.js';
import { TestOAuthProvider } from './support/oauth-provider.js';
import { api, eventually, FAST_WORKER, type Api } from './support/sync-helpers.js';

const OPERATOR_CLIENT = { id: 'operator-client', secret: 'operator-secret-value-1234' };
const OWN_CLIENT = { id: 'own-client', secret: 'own-secret-value-5678' };

/** The caller's page the browser lands on after a sign-in: it records the query it was sent. */
class RedirectReceiver {
  private server: Server | null = null;
  readonly visits: URLSearchParams[] = [];

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/connected`;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      this.visits.push(new URL(request.url ?? '/', 'http://receiver').searchParams);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('welcome back');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

describe('OAuth connections against a local server speaking RFC 6749 as the provider (servers deployment, API process)', () => {
  const provider = new TestOAuthProvider();
  const receiver = new RedirectReceiver();
  const logs = capturingLogger('debug');
  let database: TestDatabase;
  let dataDir: string;
  let running: RunningServer;
  let call: Api;
  let db: pg.Client;
  const collection = 'oauth-target';

  beforeAll(async () => {
    await provider.start();
    await receiver.start();
    provider.clients.set(OPERATOR_CLIENT.id, OPERATOR_CLIENT.secret);
    provider.clients.set(OWN_CLIENT.id, OWN_CLIENT.secret);
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'catchment-oauth-'));
    const clientsFile = path.join(dataDir, 'oauth-clients.json');
    writeFileSync(clientsFile, JSON.stringify({ stub: { client_id: OPERATOR_CLIENT.id, client_secret: OPERATOR_CLIENT.secret, token_url: provider.tokenUrl } }));
    const config = loadConfig(
      {
        ...FAST_WORKER,
        PORT: '0',
        CATCHMENT_DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        REDIS_URL,
        CATCHMENT_REDIS_PREFIX: `catchment-oauth-${Math.random().toString(36).slice(2, 10)}`,
        CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        CATCHMENT_BOOTSTRAP_API_KEY: `ck_test_oauth_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`,
        CATCHMENT_OAUTH_CLIENTS_FILE: clientsFile,
        CATCHMENT_LOG_LEVEL: 'debug',
      },
      '/nonexistent/.env',
    );
    // The API alone: sign-ins start syncs (jobs queued), which no test here needs run.
    running = await startServer(config, logs.logger, { api: true, worker: false });
    call = api(running.url, running.bootstrapApiKey!);
    expect((await call('POST', '/collections', { name: 'OAuth target', readable_id: collection })).status).toBe(200);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await running?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    await provider.stop();
    await receiver.stop();
  });

  const stubConfig = () => ({ entity_count: 5, oauth_authorize_url: provider.authorizeUrl, oauth_token_url: provider.tokenUrl });
  const createBrowserConnection = async (authentication: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const response = await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: collection,
      config: stubConfig(),
      redirect_url: receiver.url,
      authentication,
      ...extra,
    });
    expect(response.status).toBe(200);
    return response.body;
  };

  /** Opens a URL as a browser does, following every redirect; returns where it ended and what it got. */
  const browse = async (url: string) => {
    const response = await fetch(url, { redirect: 'follow' });
    return { url: response.url, status: response.status, text: await response.text() };
  };

  /** The callback URL the provider sends the browser to, without following it (to replay it). */
  const callbackOf = async (authUrl: string) => {
    const response = await fetch(authUrl, { redirect: 'manual' });
    expect(response.status).toBe(302);
    return response.headers.get('location')!;
  };

  const eventsOf = async (connectionId: string, type: string) =>
    (await db.query(`select id from webhook_messages where event_type = $1 and payload->>'source_connection_id' = $2`, [type, connectionId])).rowCount;

  test('oauth_browser with the operator app: pending_auth with an auth_url, the callback signs in, fires auth_completed, queues the first sync and redirects with the outcome', async () => {
    const created = await createBrowserConnection();
    expect(created).toMatchObject({ status: 'pending_auth', auth_method: 'oauth_browser', is_authenticated: false, auth: { method: 'oauth_browser', authenticated: false, redirect_url: receiver.url } });
    expect(Date.parse(created.auth.auth_url_expires) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(Date.parse(created.auth.auth_url_expires) - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    const authUrl = new URL(created.auth.auth_url);
    expect(`${authUrl.origin}${authUrl.pathname}`).toBe(provider.authorizeUrl);
    expect(Object.fromEntries(authUrl.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: OPERATOR_CLIENT.id,
      redirect_uri: `${running.url}/oauth/callback`,
      scope: 'read',
      code_challenge_method: 'S256',
    });
    expect(authUrl.searchParams.get('state')!.length).toBeGreaterThanOrEqual(32);
    expect(authUrl.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect((await call('GET', `/source-connections/${created.id}/jobs`)).body).toEqual([]);
    expect(await eventsOf(created.id, 'source_connection.auth_completed')).toBe(0);

    const landed = await browse(created.auth.auth_url);
    expect(landed.url.startsWith(receiver.url)).toBe(true);
    expect(Object.fromEntries(receiver.visits.at(-1)!)).toEqual({ status: 'success', source_connection_id: created.id });
    const exchange = provider.exchanges.at(-1)!;
    expect(exchange).toMatchObject({ clientId: OPERATOR_CLIENT.id, outcome: 'issued' });
    expect(exchange.codeVerifier).toMatch(/^[\w-]{43,128}$/);

    const connection = (await call('GET', `/source-connections/${created.id}`)).body;
    expect(connection).toMatchObject({ is_authenticated: true, auth: { method: 'oauth_browser', authenticated: true, auth_url: null, auth_url_expires: null } });
    expect(Date.parse(connection.auth.expires_at) - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(connection.auth.authenticated_at).not.toBeNull();
    expect(await eventsOf(created.id, 'source_connection.auth_completed')).toBe(1);
    const jobs = await eventually(() => call('GET', `/source-connections/${created.id}/jobs`), (response) => response.body.length === 1);
    expect(jobs.body[0].trigger).toBe('create');
  });

  test('a replayed callback (same code and state) is refused and leaves the connection as it was', async () => {
    const created = await createBrowserConnection({}, { sync_immediately: false });
    const callback = await callbackOf(created.auth.auth_url);
    expect((await browse(callback)).url.startsWith(receiver.url)).toBe(true);
    expect(receiver.visits.at(-1)!.get('status')).toBe('success');
    const before = (await call('GET', `/source-connections/${created.id}`)).body;
    const exchanges = provider.exchanges.length;

    await browse(callback);
    expect(Object.fromEntries(receiver.visits.at(-1)!)).toMatchObject({ status: 'error', error: 'already_used', source_connection_id: created.id });
    expect(provider.exchanges.length).toBe(exchanges); // the code was not even sent again
    const after = (await call('GET', `/source-connections/${created.id}`)).body;
    expect(after.auth.authenticated_at).toBe(before.auth.authenticated_at);
    expect(await eventsOf(created.id, 'source_connection.auth_completed')).toBe(1);
    // sync_immediately: false — signed in, nothing started.
    expect((await call('GET', `/source-connections/${created.id}/jobs`)).body).toEqual([]);
  });

  test('an unknown state gets an error page of the service (never a 500, no redirect), and changes nothing', async () => {
    const created = await createBrowserConnection();
    const callback = new URL(await callbackOf(created.auth.auth_url));
    callback.searchParams.set('state', 'forged-state-value-that-was-never-issued');
    const response = await fetch(callback, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await response.text()).toContain('not known');
    const noState = await fetch(`${running.url}/oauth/callback?code=x`, { redirect: 'manual' });
    expect(noState.status).toBe(400);
    expect((await call('GET', `/source-connections/${created.id}`)).body.is_authenticated).toBe(false);
  });

  test('an expired sign-in is refused at the callback with error=expired', async () => {
    const created = await createBrowserConnection();
    const callback = await callbackOf(created.auth.auth_url);
    await db.query(`update oauth_authorizations set expires_at = now() - interval '1 second' where source_connection_id = $1`, [created.id]);
    await browse(callback);
    expect(Object.fromEntries(receiver.visits.at(-1)!)).toMatchObject({ status: 'error', error: 'expired', source_connection_id: created.id });
    expect((await call('GET', `/source-connections/${created.id}`)).body).toMatchObject({ status: 'pending_auth', is_authenticated: false });
  });

  test('a provider that answers error=access_denied: the browser is sent back with the error, the connection stays pending', async () => {
    const created = await createBrowserConnection();
    provider.denyAccess = true;
    try {
      await browse(created.auth.auth_url);
    } finally {
      provider.denyAccess = false;
    }
    expect(Object.fromEntries(receiver.visits.at(-1)!)).toMatchObject({ status: 'error', error: 'access_denied', source_connection_id: created.id });
    expect((await call('GET', `/source-connections/${created.id}`)).body).toMatchObject({ status: 'pending_auth', is_authenticated: false });
  });

  test('oauth_byoc: the caller\'s own client signs in, its secret sealed and never returned; a new sign-in reuses it', async () => {
    const created = await createBrowserConnection({ client_id: OWN_CLIENT.id, client_secret: OWN_CLIENT.secret });
    expect(created.auth_method).toBe('oauth_byoc');
    expect(new URL(created.auth.auth_url).searchParams.get('client_id')).toBe(OWN_CLIENT.id);
    expect(JSON.stringify(created)).not.toContain(OWN_CLIENT.secret);
    await browse(created.auth.auth_url);
    expect(receiver.visits.at(-1)!.get('status')).toBe('success');
    expect(provider.exchanges.at(-1)).toMatchObject({ clientId: OWN_CLIENT.id, outcome: 'issued' });

    const again = await call('POST', `/source-connections/${created.id}/authorize`, { redirect_url: receiver.url, sync_immediately: false });
    expect(again.status).toBe(200);
    expect(new URL(again.body.auth.auth_url).searchParams.get('client_id')).toBe(OWN_CLIENT.id);
    const stored = await db.query(`select sealed_credentials, config::text from source_connections where id = $1`, [created.id]);
    expect(JSON.stringify(stored.rows)).not.toContain(OWN_CLIENT.secret);
    const pending = await db.query(`select * from oauth_authorizations where source_connection_id = $1`, [created.id]);
    expect(JSON.stringify(pending.rows)).not.toContain(OWN_CLIENT.secret);
    expect(JSON.stringify(pending.rows)).not.toContain(new URL(again.body.auth.auth_url).searchParams.get('state'));
  });

  test("the catalog says the redirect URI to register in one's own OAuth app (REST and GraphQL), the one sign-ins send the provider; null for sources without OAuth", async () => {
    const expected = `${running.url}/oauth/callback`;
    expect((await call('GET', '/sources/stub')).body.oauth_redirect_uri).toBe(expected);
    const listed = (await call('GET', '/sources')).body as { short_name: string; oauth_redirect_uri: string | null }[];
    expect(listed.find((source) => source.short_name === 'github')?.oauth_redirect_uri).toBe(expected);
    expect(listed.find((source) => source.short_name === 'rss')?.oauth_redirect_uri).toBeNull();
    const graphqlAnswer = await http(running.url, 'POST', '/graphql', { apiKey: running.bootstrapApiKey!, body: { query: '{ source(shortName: "stub") { oauthRedirectUri } }' } });
    expect(graphqlAnswer.body.data.source.oauthRedirectUri).toBe(expected);
    const created = await createBrowserConnection({ client_id: OWN_CLIENT.id, client_secret: OWN_CLIENT.secret }, { sync_immediately: false });
    expect(new URL(created.auth.auth_url).searchParams.get('redirect_uri')).toBe(expected);
  });

  test('without an operator app for the source, oauth_browser is a 422 saying BYOC is required', async () => {
    const apps = running.core.services.operatorApps;
    await apps.remove('stub');
    try {
      const refused = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, config: stubConfig(), authentication: {} });
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'authentication'], type: 'byoc_required' })]);
      expect((await call('GET', '/sources/stub')).body.requires_byoc).toBe(true);
    } finally {
      await apps.set('stub', { clientId: OPERATOR_CLIENT.id, clientSecret: OPERATOR_CLIENT.secret, tokenUrl: provider.tokenUrl });
    }
    expect((await call('GET', '/sources/stub')).body.requires_byoc).toBe(false);
  });

  test('oauth_token: a given token authenticates at once and is stored sealed as OAuth credentials', async () => {
    const accessToken = 'given-access-token-0123456789';
    const refreshToken = 'given-refresh-token-0123456789';
    const expiresAt = new Date(Date.now() + 30 * 60_000).toISOString();
    const created = await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: collection,
      config: stubConfig(),
      sync_immediately: false,
      authentication: { access_token: accessToken, refresh_token: refreshToken, expires_at: expiresAt, client_id: OWN_CLIENT.id, client_secret: OWN_CLIENT.secret },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ auth_method: 'oauth_token', is_authenticated: true, status: 'pending_sync', auth: { method: 'oauth_token', authenticated: true, expires_at: expiresAt, auth_url: null } });
    for (const secret of [accessToken, refreshToken, OWN_CLIENT.secret]) expect(JSON.stringify(created.body)).not.toContain(secret);
    const stored = (await db.query<{ sealed_credentials: string }>(`select sealed_credentials from source_connections where id = $1`, [created.body.id])).rows[0]!;
    expect(stored.sealed_credentials).not.toContain(accessToken);
    expect(JSON.parse(running.core.secretBox.open(stored.sealed_credentials))).toEqual({
      kind: 'oauth',
      accessToken,
      refreshToken,
      expiresAt,
      scope: null,
      client: { kind: 'connection', clientId: OWN_CLIENT.id, clientSecret: OWN_CLIENT.secret },
    });
    expect(await eventsOf(created.body.id, 'source_connection.auth_completed')).toBe(1);
  });

  const createTokenConnection = async (authentication: Record<string, unknown>, config: Record<string, unknown> = stubConfig()) => {
    const created = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, config, sync_immediately: false, authentication });
    expect(created.status).toBe(200);
    expect(created.body.auth_method).toBe('oauth_token');
    return created.body;
  };
  const storedCredentials = async (connectionId: string) => {
    const row = (await db.query<{ sealed_credentials: string }>(`select sealed_credentials from source_connections where id = $1`, [connectionId])).rows[0]!;
    return JSON.parse(running.core.secretBox.open(row.sealed_credentials));
  };

  test("oauth_token with a refresh token records the operator's app as its refresh client only when the app serves the connection's token endpoint", async () => {
    const given = { access_token: 'given-access-token-served', refresh_token: 'given-refresh-token-served' };
    const served = await createTokenConnection(given);
    expect((await storedCredentials(served.id)).client).toEqual({ kind: 'operator' });

    // A self-managed server of the user's: the operator's app is registered for the provider's endpoint only.
    const elsewhere = new TestOAuthProvider();
    await elsewhere.start();
    try {
      elsewhere.clients.set(OPERATOR_CLIENT.id, OPERATOR_CLIENT.secret);
      const expired = new Date(Date.now() - 60_000).toISOString();
      const unserved = await createTokenConnection({ ...given, expires_at: expired }, { ...stubConfig(), oauth_authorize_url: elsewhere.authorizeUrl, oauth_token_url: elsewhere.tokenUrl });
      expect((await storedCredentials(unserved.id)).client).toEqual({ kind: 'none' });
      // Its token expired: with no client to renew it, the sync's token request is refused as needing a sign-in, and nothing reaches the server.
      const { services, database: coreDatabase, secretBox } = running.core;
      const tokens = createTokenProvider({
        orm: coreDatabase.orm,
        secretBox,
        connectionId: unserved.id,
        connector: services.sources.connector('stub'),
        config: unserved.config,
        operatorApps: services.operatorApps,
        allowPrivateNetworks: true,
        logger: logs.logger,
      });
      await expect(tokens.accessToken()).rejects.toBeInstanceOf(CredentialsRejectedError);
      expect(elsewhere.exchanges).toEqual([]);
    } finally {
      await elsewhere.stop();
    }
  });

  test("an oauth_token connection signs in again through the browser with the operator's app and becomes an oauth_browser one", async () => {
    const created = await createTokenConnection({ access_token: 'given-access-token-reauth' });
    const fresh = await call('POST', `/source-connections/${created.id}/authorize`, { redirect_url: receiver.url, sync_immediately: false });
    expect(fresh.status).toBe(200);
    expect(new URL(fresh.body.auth.auth_url).searchParams.get('client_id')).toBe(OPERATOR_CLIENT.id);
    // Until the sign-in completes, the given token stays the connection's.
    expect(fresh.body).toMatchObject({ auth_method: 'oauth_token', is_authenticated: true });

    await browse(fresh.body.auth.auth_url);
    expect(Object.fromEntries(receiver.visits.at(-1)!)).toEqual({ status: 'success', source_connection_id: created.id });
    expect(provider.exchanges.at(-1)).toMatchObject({ clientId: OPERATOR_CLIENT.id, outcome: 'issued' });
    const signedIn = (await call('GET', `/source-connections/${created.id}`)).body;
    expect(signedIn).toMatchObject({ auth_method: 'oauth_browser', is_authenticated: true, auth: { method: 'oauth_browser', authenticated: true } });
    const stored = await storedCredentials(created.id);
    expect(stored).toMatchObject({ accessToken: provider.issuedTokens.at(-1), client: { kind: 'operator' } });
    expect(stored.refreshToken).toMatch(/^refresh-/);
  });

  test("an oauth_token connection given with its own client signs in again with that client and becomes an oauth_byoc one", async () => {
    const created = await createTokenConnection({ access_token: 'given-access-token-own', refresh_token: 'given-refresh-token-own', client_id: OWN_CLIENT.id, client_secret: OWN_CLIENT.secret });
    const fresh = await call('POST', `/source-connections/${created.id}/authorize`, { redirect_url: receiver.url, sync_immediately: false });
    expect(fresh.status).toBe(200);
    expect(new URL(fresh.body.auth.auth_url).searchParams.get('client_id')).toBe(OWN_CLIENT.id);
    expect(JSON.stringify(fresh.body)).not.toContain(OWN_CLIENT.secret);
    await browse(fresh.body.auth.auth_url);
    expect(receiver.visits.at(-1)!.get('status')).toBe('success');
    expect(provider.exchanges.at(-1)).toMatchObject({ clientId: OWN_CLIENT.id, outcome: 'issued' });
    expect((await call('GET', `/source-connections/${created.id}`)).body).toMatchObject({ auth_method: 'oauth_byoc', auth: { method: 'oauth_byoc', authenticated: true } });
    expect((await storedCredentials(created.id)).client).toEqual({ kind: 'connection', clientId: OWN_CLIENT.id, clientSecret: OWN_CLIENT.secret });
  });

  test("an oauth_token connection with no client of its own, at a server the operator's app does not serve, needs one to sign in again (422), and signs in with the one given", async () => {
    const elsewhere = new TestOAuthProvider();
    await elsewhere.start();
    try {
      elsewhere.clients.set(OWN_CLIENT.id, OWN_CLIENT.secret);
      const created = await createTokenConnection({ access_token: 'given-access-token-elsewhere' }, { ...stubConfig(), oauth_authorize_url: elsewhere.authorizeUrl, oauth_token_url: elsewhere.tokenUrl });
      const refused = await call('POST', `/source-connections/${created.id}/authorize`, { redirect_url: receiver.url });
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'client_id'], type: 'byoc_required' })]);
      expect((await call('GET', `/source-connections/${created.id}`)).body.auth_method).toBe('oauth_token');

      const withOwn = await call('POST', `/source-connections/${created.id}/authorize`, { redirect_url: receiver.url, sync_immediately: false, client_id: OWN_CLIENT.id, client_secret: OWN_CLIENT.secret });
      expect(withOwn.status).toBe(200);
      await browse(withOwn.body.auth.auth_url);
      expect(receiver.visits.at(-1)!.get('status')).toBe('success');
      expect(elsewhere.exchanges).toEqual([expect.objectContaining({ clientId: OWN_CLIENT.id, outcome: 'issued' })]);
      expect((await call('GET', `/source-connections/${created.id}`)).body.auth_method).toBe('oauth_byoc');
    } finally {
      await elsewhere.stop();
    }
  });

  test('a fresh auth_url for a connection that never finished: the earlier link stops working, the new one signs in; members are refused', async () => {
    const created = await createBrowserConnection({}, { sync_immediately: false });
    const oldCallback = await callbackOf(created.auth.auth_url);
    const organizationId = created.organization_id;
    const member = await running.core.services.auth.issueToken({ organizationId, email: 'member@example.com', role: 'member' });
    const asMember = await http(running.url, 'POST', `/source-connections/${created.id}/authorize`, { token: member.access_token, body: {} });
    expect(asMember.status).toBe(403);

    const fresh = await call('POST', `/source-connections/${created.id}/authorize`, { redirect_url: receiver.url });
    expect(fresh.status).toBe(200);
    expect(fresh.body.auth.auth_url).not.toBe(created.auth.auth_url);
    const oldPage = await fetch(oldCallback, { redirect: 'manual' });
    expect(oldPage.status).toBe(400);
    await browse(fresh.body.auth.auth_url);
    expect(Object.fromEntries(receiver.visits.at(-1)!)).toEqual({ status: 'success', source_connection_id: created.id });
    expect((await call('GET', `/source-connections/${created.id}`)).body.is_authenticated).toBe(true);

    // GraphQL runs the same operation.
    const graphqlAnswer = await http(running.url, 'POST', '/graphql', {
      apiKey: running.bootstrapApiKey!,
      body: { query: 'mutation ($id: ID!) { authorizeSourceConnection(id: $id, input: { syncImmediately: false }) { id auth { authUrl authUrlExpires } } }', variables: { id: created.id } },
    });
    expect(graphqlAnswer.body.data.authorizeSourceConnection.auth.authUrl).toContain(provider.authorizeUrl);

    const direct = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, config: stubConfig(), sync_immediately: false, authentication: { credentials: { token: 'pasted' } } });
    const notBrowser = await call('POST', `/source-connections/${direct.body.id}/authorize`, {});
    expect(notBrowser.status).toBe(422);
  });

  test('a config change that would send the tokens to another token endpoint is refused (credential-target binding); other changes pass', async () => {
    const created = await createBrowserConnection({}, { sync_immediately: false });
    await browse(created.auth.auth_url);
    const moved = await call('PATCH', `/source-connections/${created.id}`, { config: { ...stubConfig(), oauth_token_url: 'http://127.0.0.2:9/oauth/token' } });
    expect(moved.status).toBe(422);
    expect(moved.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'authentication', 'credentials'], type: 'credentials_required' })]);
    const kept = await call('PATCH', `/source-connections/${created.id}`, { config: { ...stubConfig(), entity_count: 7 } });
    expect(kept.status).toBe(200);
    expect(kept.body.config.entity_count).toBe(7);
  });

  test('organizations are isolated: another one cannot read, authorize or complete a connection it does not own', async () => {
    const created = await createBrowserConnection({}, { sync_immediately: false });
    const other = await running.core.services.organizations.createOrganization('Other org');
    const asOther = api(running.url, other.api_key);
    expect((await asOther('GET', `/source-connections/${created.id}`)).status).toBe(404);
    expect((await asOther('POST', `/source-connections/${created.id}/authorize`, {})).status).toBe(404);
    expect((await asOther('GET', '/source-connections')).body).toEqual([]);
    // The state completes its own connection only, whoever's credentials come with the browser.
    const callback = await callbackOf(created.auth.auth_url);
    await http(running.url, 'GET', new URL(callback).pathname + new URL(callback).search, { apiKey: other.api_key });
    expect((await call('GET', `/source-connections/${created.id}`)).body.is_authenticated).toBe(true);
    expect((await asOther('GET', '/source-connections')).body).toEqual([]);
  });

  test('tokens, client secrets, PKCE verifiers and states appear in no response and no log line', async () => {
    const created = await createBrowserConnection({ client_id: OWN_CLIENT.id, client_secret: OWN_CLIENT.secret }, { sync_immediately: false });
    const state = new URL(created.auth.auth_url).searchParams.get('state')!;
    await browse(created.auth.auth_url);
    const listed = await call('GET', '/source-connections');
    const fetched = await call('GET', `/source-connections/${created.id}`);
    const secrets = [OPERATOR_CLIENT.secret, OWN_CLIENT.secret, ...provider.issuedTokens, ...provider.exchanges.flatMap((exchange) => [exchange.code, exchange.codeVerifier ?? 'none'])];
    const answers = JSON.stringify([listed.body, fetched.body]);
    const logged = logs.raw.join('');
    expect(logged).toContain('OAuth sign-in completed');
    for (const secret of secrets) {
      expect(answers).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
    expect(logged).not.toContain(state);
  });
});
