import { createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import { capturingLogger } from '../../../test/support/capturing-logger.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/harness.js';
import { Collection } from '../../modules/collections/collection.entity.js';
import type { OAuthCredentials } from '../../modules/connections/oauth/stored-credentials.js';
import { requestTokens, type TokenSet } from '../../modules/connections/oauth/token-endpoint.js';
import { createTokenProvider } from '../../modules/connections/oauth/token-provider.js';
import { SourceConnection } from '../../modules/connections/source-connection.entity.js';
import { Organization } from '../../modules/organizations/organization.entity.js';
import { ormOptions } from '../../platform/db/database.js';
import { SecretBox } from '../../platform/secrets/secrets.js';
import { collectRun, parsedConfig, rejection } from '../connector-testing.js';
import { CredentialsRejectedError } from '../contract/errors.js';
import { createSourceHttpClient } from '../contract/http-client.js';
import connector from './index.js';
import { TestGitLabServer } from './test-gitlab-server.js';

const REDIRECT_URI = 'https://catchment.example/oauth/callback';

/**
 * The gitlab source signed in with OAuth, its tokens sealed in a connection row on PostgreSQL and
 * renewed by the platform's token provider at a local server speaking GitLab's API and token endpoint.
 */
describe("gitlab with OAuth tokens on PostgreSQL, against a local server speaking GitLab's REST API and token endpoint", () => {
  let database: TestDatabase;
  let orm: MikroORM;
  let server: TestGitLabServer;
  let app: { clientId: string; clientSecret: string };
  let collectionId: string;
  const secretBox = new SecretBox(Buffer.alloc(32, 5));
  const capture = capturingLogger();

  beforeAll(async () => {
    database = await createTestDatabase();
    orm = await MikroORM.init(ormOptions(database.url, 2));
    await orm.migrator.up();
    const em = orm.em.fork();
    const organization = em.create(Organization, { name: 'GitLab OAuth' });
    const collection = em.create(Collection, { organization, name: 'Code', readableId: 'code', vectorSize: 4, embeddingModelName: 'test' });
    await em.flush();
    collectionId = collection.id;
  });
  afterAll(async () => {
    await orm?.close(true);
    await database?.drop();
  });
  beforeEach(async () => {
    server = await new TestGitLabServer().start();
    const project = server.addProject({ path: 'tools', namespace: 'acme' });
    server.addIssuable(project, 'issues', { title: 'Add a linter' });
    app = server.oauth.registerApp(REDIRECT_URI);
  });
  afterEach(async () => {
    await server.stop();
  });

  const config = () => parsedConfig(connector, { base_url: server.url, projects: ['acme/tools'], include_files: false });
  const operatorApps = { clientFor: async (shortName: string) => (shortName === 'gitlab' ? { clientId: app.clientId, clientSecret: app.clientSecret } : null) };

  /** Tokens as the browser sign-in gets them: the user approves, the code is exchanged with its PKCE verifier. */
  async function signIn(): Promise<TokenSet> {
    if (connector.auth.kind !== 'oauth2') throw new Error('gitlab signs in with OAuth');
    const verifier = randomBytes(32).toString('base64url');
    const code = server.oauth.approve(app.clientId, REDIRECT_URI, createHash('sha256').update(verifier).digest('base64url'));
    return requestTokens({ spec: connector.auth.oauth, config: config(), client: app, grant: { type: 'authorization_code', code, redirectUri: REDIRECT_URI, codeVerifier: verifier }, allowPrivateNetworks: true });
  }

  async function connectionWith(credentials: OAuthCredentials): Promise<string> {
    const em = orm.em.fork();
    const collection = await em.findOneOrFail(Collection, { id: collectionId }, { populate: ['organization'] });
    const row = em.create(SourceConnection, {
      organization: collection.organization,
      collection,
      name: 'GitLab',
      shortName: 'gitlab',
      config: config(),
      authMethod: 'oauth_browser',
      authenticated: true,
      sealedCredentials: secretBox.seal(JSON.stringify(credentials)),
    });
    await em.flush();
    return row.id;
  }

  const storedOf = async (id: string) => JSON.parse(secretBox.open((await orm.em.fork().findOneOrFail(SourceConnection, { id })).sealedCredentials!)) as OAuthCredentials;

  function runWith(connectionId: string) {
    const parsed = config();
    const tokens = createTokenProvider({ orm, secretBox, connectionId, connector, config: parsed, operatorApps, allowPrivateNetworks: true, logger: capture.logger });
    const http = createSourceHttpClient({ connector, config: parsed, credentials: null, tokens, allowPrivateNetworks: true, signal: new AbortController().signal, logger: capture.logger, sleep: async () => {} });
    return collectRun(connector, { config: parsed, credentials: null, tokens, http });
  }

  it('refreshes a token about to expire before the first request, sends the new one as a Bearer token, and persists the rotated refresh token sealed', async () => {
    const signedIn = await signIn();
    const id = await connectionWith({ kind: 'oauth', accessToken: signedIn.accessToken, refreshToken: signedIn.refreshToken, expiresAt: new Date(Date.now() + 20_000).toISOString(), scope: signedIn.scope, client: { kind: 'operator' } });

    const result = await runWith(id);

    expect(result.ids).toEqual([`issue:${[...server.projects.keys()][0]}:1`, `project:${[...server.projects.keys()][0]}`]);
    const stored = await storedOf(id);
    expect(stored.accessToken).not.toBe(signedIn.accessToken);
    expect(stored.refreshToken).not.toBe(signedIn.refreshToken);
    expect(Date.parse(stored.expiresAt!)).toBeGreaterThan(Date.now() + 7000_000);
    expect(server.requestsTo(/^\/oauth\/token$/)).toHaveLength(2); // the sign-in, then one refresh
    const api = server.requests.filter((request) => request.path.startsWith('/api/v4/'));
    expect(api.every((request) => request.authorization === `Bearer ${stored.accessToken}` && request.status === 200)).toBe(true);
    // GitLab rotated the refresh token: the old one is refused from now on.
    if (connector.auth.kind !== 'oauth2') throw new Error('gitlab signs in with OAuth');
    await expect(requestTokens({ spec: connector.auth.oauth, config: config(), client: app, grant: { type: 'refresh_token', refreshToken: signedIn.refreshToken! }, allowPrivateNetworks: true })).rejects.toThrow(/invalid_grant/);
    for (const secret of [signedIn.accessToken, signedIn.refreshToken!, stored.accessToken, stored.refreshToken!, app.clientSecret]) expect(capture.raw.join('')).not.toContain(secret);
  });

  it('a refused refresh (a refresh token already rotated away) fails the run with CredentialsRejectedError, naming no token', async () => {
    const signedIn = await signIn();
    // Another client of the same grant refreshed: the stored tokens are both dead.
    if (connector.auth.kind !== 'oauth2') throw new Error('gitlab signs in with OAuth');
    await requestTokens({ spec: connector.auth.oauth, config: config(), client: app, grant: { type: 'refresh_token', refreshToken: signedIn.refreshToken! }, allowPrivateNetworks: true });
    const id = await connectionWith({ kind: 'oauth', accessToken: signedIn.accessToken, refreshToken: signedIn.refreshToken, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), scope: null, client: { kind: 'operator' } });

    const failure = await rejection(runWith(id));

    expect(failure).toBeInstanceOf(CredentialsRejectedError);
    expect(server.requests.filter((request) => request.path.startsWith('/api/v4/')).map((request) => request.status)).toEqual([401]);
    for (const secret of [signedIn.accessToken, signedIn.refreshToken!, app.clientSecret]) {
      expect(`${failure.message} ${failure.stack}`).not.toContain(secret);
      expect(capture.raw.join('')).not.toContain(secret);
    }
    expect((await storedOf(id)).refreshToken).toBe(signedIn.refreshToken);
  });
});
