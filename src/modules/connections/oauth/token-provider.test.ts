import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/harness.js';
import { capturingLogger } from '../../../../test/support/capturing-logger.js';
import { waitFor } from '../../../../test/support/wait.js';
import { emptyConnector, rejection } from '../../../connectors/connector-testing.js';
import { CredentialsRejectedError } from '../../../connectors/contract/errors.js';
import { ormOptions } from '../../../platform/db/database.js';
import { SecretBox } from '../../../platform/secrets/secrets.js';
import { Collection } from '../../collections/collection.entity.js';
import { Organization } from '../../organizations/organization.entity.js';
import { SourceConnection } from '../source-connection.entity.js';
import type { OAuthClientReference, OAuthCredentials } from './stored-credentials.js';
import { TestOAuthProvider } from '../../../../test/support/oauth-provider.js';
import { createTokenProvider } from './token-provider.js';

const CLIENT_ID = 'operator-app';
const CLIENT_SECRET = 'operator-app-secret';

describe('OAuth token provider on PostgreSQL, against a local RFC 6749 token endpoint', () => {
  let database: TestDatabase;
  // Two ORMs with pools of their own: two processes sharing the database.
  let first: MikroORM;
  let second: MikroORM;
  let endpoint: TestOAuthProvider;
  let collectionId: string;
  const secretBox = new SecretBox(Buffer.alloc(32, 3));
  const capture = capturingLogger();
  const connector = () =>
    emptyConnector({
      shortName: 'scripted',
      description: 'A source signing in with OAuth against the local token endpoint',
      auth: { kind: 'oauth2', oauth: { authorizeUrl: () => 'http://127.0.0.1/authorize', tokenUrl: () => endpoint.tokenUrl, scopes: ['read'], pkce: true, refresh: 'rotating', clientAuthentication: 'basic' } },
    });
  /** The sources the operator's apps were looked up for, in order. */
  const lookups: string[] = [];
  const operatorApps = {
    clientFor: async (shortName: string) => {
      lookups.push(shortName);
      return shortName === 'scripted' ? { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET } : null;
    },
  };
  const providerOn = (orm: MikroORM, connectionId: string) =>
    createTokenProvider({ orm, secretBox, connectionId, connector: connector(), config: {}, operatorApps, allowPrivateNetworks: true, logger: capture.logger });

  /** A connection holding sealed OAuth tokens that expire at `expiresAt`. */
  async function connectionWith(credentials: Partial<OAuthCredentials> & { client?: OAuthClientReference }): Promise<string> {
    const em = first.em.fork();
    const stored: OAuthCredentials = { kind: 'oauth', accessToken: 'access-0', refreshToken: null, expiresAt: null, scope: 'read', client: { kind: 'operator' }, ...credentials };
    const row = em.create(SourceConnection, {
      organization: em.getReference(Organization, (await em.findOneOrFail(Collection, { id: collectionId }, { populate: ['organization'] })).organization.id),
      collection: collectionId,
      name: 'Scripted',
      shortName: 'scripted',
      config: {},
      authMethod: 'oauth_browser',
      authenticated: true,
      sealedCredentials: secretBox.seal(JSON.stringify(stored)),
    });
    await em.flush();
    return row.id;
  }

  async function storedOf(connectionId: string): Promise<OAuthCredentials> {
    const row = await first.em.fork().findOneOrFail(SourceConnection, { id: connectionId });
    return JSON.parse(secretBox.open(row.sealedCredentials!)) as OAuthCredentials;
  }

  const soon = () => new Date(Date.now() + 10_000).toISOString();
  const later = () => new Date(Date.now() + 3_600_000).toISOString();

  beforeAll(async () => {
    database = await createTestDatabase();
    first = await MikroORM.init(ormOptions(database.url, 4));
    second = await MikroORM.init(ormOptions(database.url, 4));
    await first.migrator.up();
    const em = first.em.fork();
    const organization = em.create(Organization, { name: 'Token tests' });
    const collection = em.create(Collection, { organization, name: 'Tokens', readableId: 'tokens', vectorSize: 4, embeddingModelName: 'test' });
    await em.flush();
    collectionId = collection.id;
    endpoint = await new TestOAuthProvider().start();
    endpoint.clients.set(CLIENT_ID, CLIENT_SECRET);
  });
  afterAll(async () => {
    await endpoint?.stop();
    await first?.close(true);
    await second?.close(true);
    await database?.drop();
  });
  beforeEach(() => {
    endpoint.requests.length = 0;
    endpoint.rotateRefreshTokens = true;
    endpoint.answerGate = null;
    lookups.length = 0;
  });

  test('a token valid for longer than a minute is used as stored, without asking the token endpoint', async () => {
    const id = await connectionWith({ accessToken: 'access-valid', refreshToken: endpoint.issueRefreshToken(CLIENT_ID), expiresAt: later() });
    expect(await providerOn(first, id).accessToken()).toBe('access-valid');
    expect(endpoint.requests).toHaveLength(0);
  });

  test('a token expiring within the minute is refreshed first with the operator app, and the rotated refresh token persisted', async () => {
    const refreshToken = endpoint.issueRefreshToken(CLIENT_ID);
    const id = await connectionWith({ accessToken: 'access-expiring', refreshToken, expiresAt: soon() });
    const token = await providerOn(first, id).accessToken();
    expect(token).not.toBe('access-expiring');
    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]!.parameters).toEqual({ grant_type: 'refresh_token', refresh_token: refreshToken });
    const stored = await storedOf(id);
    expect(stored.accessToken).toBe(token);
    expect(stored.refreshToken).not.toBe(refreshToken);
    expect(Date.parse(stored.expiresAt!)).toBeGreaterThan(Date.now() + 3_000_000);
    expect(stored.client).toEqual({ kind: 'operator' });
    expect(lookups).toEqual(['scripted']);
    // The rotated refresh token is the one that works now: another process refreshes with it.
    const again = providerOn(second, id);
    await again.refreshAfterRejection(token);
    expect(endpoint.requests[1]!.parameters.refresh_token).toBe(stored.refreshToken);
    expect((await storedOf(id)).accessToken).not.toBe(token);
  });

  test('with one database connection (embedded PGlite has one), an operator app read from the database does not wait behind the row lock of the refresh', async () => {
    const single = await MikroORM.init(ormOptions(database.url, 1));
    try {
      // OperatorOAuthApps reads its row through the ORM: here, a query on the one connection.
      const appsInDatabase = { clientFor: async (shortName: string) => ((await single.em.fork().getConnection().execute('select 1 as one')).length === 1 ? operatorApps.clientFor(shortName) : null) };
      const id = await connectionWith({ accessToken: 'access-expiring', refreshToken: endpoint.issueRefreshToken(CLIENT_ID), expiresAt: soon() });
      const provider = createTokenProvider({ orm: single, secretBox, connectionId: id, connector: connector(), config: {}, operatorApps: appsInDatabase, allowPrivateNetworks: true, logger: capture.logger });
      expect(await provider.refreshAfterRejection('access-expiring')).toBe((await storedOf(id)).accessToken);
      expect(endpoint.requests).toHaveLength(1);
    } finally {
      await single.close(true);
    }
  });

  test('two processes refreshing the same connection at once: the token endpoint is asked once, both use its token', async () => {
    const id = await connectionWith({ accessToken: 'access-expiring', refreshToken: endpoint.issueRefreshToken(CLIENT_ID), expiresAt: soon() });
    let release!: () => void;
    endpoint.answerGate = new Promise((resolve) => {
      release = resolve;
    });
    const one = providerOn(first, id).accessToken();
    await waitFor(() => endpoint.requests.length === 1);
    const other = providerOn(second, id).accessToken();
    // Let the first answer only once the second process waits for the row lock.
    await waitForLockWait();
    release();
    const [a, b] = await Promise.all([one, other]);
    expect(a).toBe(b);
    expect(endpoint.requests).toHaveLength(1);
    expect((await storedOf(id)).accessToken).toBe(a);
  });

  test('a rejected token is refreshed once; a rejection of a token already replaced uses the replacement', async () => {
    const id = await connectionWith({ accessToken: 'access-refused', refreshToken: endpoint.issueRefreshToken(CLIENT_ID), expiresAt: later() });
    const provider = providerOn(first, id);
    const renewed = await provider.refreshAfterRejection('access-refused');
    expect(renewed).not.toBe('access-refused');
    // Another request of the run (or another process) saw the old token refused too: no second refresh.
    expect(await providerOn(second, id).refreshAfterRejection('access-refused')).toBe(renewed);
    expect(endpoint.requests).toHaveLength(1);
  });

  test('a refused refresh, a missing refresh token or a client-less token is CredentialsRejectedError, without secrets in it', async () => {
    const revoked = endpoint.issueRefreshToken(CLIENT_ID);
    endpoint.revokeRefreshToken(revoked);
    const refusedId = await connectionWith({ accessToken: 'access-old', refreshToken: revoked, expiresAt: soon() });
    const refused = await rejection(providerOn(first, refusedId).accessToken());
    expect(refused).toBeInstanceOf(CredentialsRejectedError);
    expect(refused.message).toContain('invalid_grant');
    expect(refused.message).not.toContain(revoked);
    expect(refused.message).not.toContain(CLIENT_SECRET);
    // The stored tokens are left as they were.
    expect((await storedOf(refusedId)).refreshToken).toBe(revoked);

    const noRefresh = await connectionWith({ accessToken: 'access-only', refreshToken: null, expiresAt: null });
    expect(await providerOn(first, noRefresh).accessToken()).toBe('access-only');
    expect(await rejection(providerOn(first, noRefresh).refreshAfterRejection('access-only'))).toBeInstanceOf(CredentialsRejectedError);

    const noClient = await connectionWith({ accessToken: 'access-given', refreshToken: 'refresh-given', expiresAt: soon(), client: { kind: 'none' } });
    expect(await rejection(providerOn(first, noClient).accessToken())).toBeInstanceOf(CredentialsRejectedError);
    expect(endpoint.requests).toHaveLength(1);
    expect(capture.raw.join('')).not.toContain(revoked);
  });

  test("a connection's own client (oauth_byoc) refreshes with its id and secret, without looking up the operator's app", async () => {
    endpoint.clients.set('byoc-client', 'byoc-secret');
    const id = await connectionWith({ refreshToken: endpoint.issueRefreshToken('byoc-client'), expiresAt: soon(), client: { kind: 'connection', clientId: 'byoc-client', clientSecret: 'byoc-secret' } });
    await providerOn(first, id).accessToken();
    expect(endpoint.requests[0]!.authorization).toBe(`Basic ${Buffer.from('byoc-client:byoc-secret').toString('base64')}`);
    expect((await storedOf(id)).client).toEqual({ kind: 'connection', clientId: 'byoc-client', clientSecret: 'byoc-secret' });
    expect(lookups).toEqual([]);
  });

  /** Until a backend of the test database waits for a row lock (the second process's SELECT … FOR UPDATE). */
  async function waitForLockWait(): Promise<void> {
    const connection = first.em.getConnection();
    let waiting = false;
    const deadline = Date.now() + 10_000;
    while (!waiting && Date.now() < deadline) {
      const rows = await connection.execute<{ count: string }[]>("select count(*) as count from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
      waiting = Number(rows[0]!.count) > 0;
      if (!waiting) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(waiting).toBe(true);
  }
});
