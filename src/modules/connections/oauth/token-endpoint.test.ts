import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import type { OAuth2Spec } from '../../../connectors/contract/auth.js';
import { TemporarilyUnavailableError } from '../../../connectors/contract/errors.js';
import { requestTokens, type TokenRequest, TokenRequestRefusedError } from './token-endpoint.js';
import { TestOAuthProvider } from '../../../../test/support/oauth-provider.js';

const CLIENT_ID = 'catchment-client';
const CLIENT_SECRET = 'client-secret-with spaces&symbols=1';
const REDIRECT_URI = 'https://catchment.example/oauth/callback';

const specFor = (endpoint: TestOAuthProvider, overrides: Partial<OAuth2Spec<{ base: string }>> = {}): OAuth2Spec<{ base: string }> => ({
  authorizeUrl: ({ base }) => `${base}/authorize`,
  tokenUrl: () => endpoint.tokenUrl,
  scopes: ['read'],
  pkce: true,
  refresh: 'refresh',
  clientAuthentication: 'basic',
  ...overrides,
});

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('requestTokens against a local server speaking the OAuth 2 token endpoint protocol (RFC 6749)', () => {
  let endpoint: TestOAuthProvider;
  const request = (overrides: Partial<TokenRequest<{ base: string }>>): TokenRequest<{ base: string }> => ({
    spec: specFor(endpoint),
    config: { base: 'https://provider.example' },
    client: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    grant: { type: 'refresh_token', refreshToken: 'none' },
    allowPrivateNetworks: true,
    ...overrides,
  });

  beforeEach(async () => {
    endpoint = await new TestOAuthProvider().start();
    endpoint.clients.set(CLIENT_ID, CLIENT_SECRET);
  });
  afterEach(() => endpoint.stop());

  test('exchanges a code with its PKCE verifier, the client in HTTP Basic (form-encoded), asking for JSON', async () => {
    const verifier = 'verifier-0123456789-0123456789-0123456789-0123';
    const code = endpoint.issueCode(CLIENT_ID, REDIRECT_URI, verifier);
    const before = Date.now();
    const tokens = await requestTokens(request({ grant: { type: 'authorization_code', code, redirectUri: REDIRECT_URI, codeVerifier: verifier } }));
    expect(tokens.accessToken).toMatch(/^access-1-/);
    expect(tokens.refreshToken).toMatch(/^refresh-/);
    expect(tokens.scope).toBe('read');
    expect(tokens.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 3600_000);
    expect(tokens.expiresAt!.getTime()).toBeLessThan(before + 3660_000);
    const [sent] = endpoint.requests;
    expect(sent!.contentType).toBe('application/x-www-form-urlencoded');
    expect(sent!.accept).toBe('application/json');
    expect(sent!.parameters).toEqual({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
    // RFC 6749 §2.3.1: id and secret form-encoded, then Base64 (the server decoded them back to match).
    expect(sent!.authorization).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:client-secret-with+spaces%26symbols%3D1`).toString('base64')}`);
  });

  test('the client in the body and a JSON request body when the provider takes them (Notion-style)', async () => {
    const code = endpoint.issueCode(CLIENT_ID, REDIRECT_URI);
    await requestTokens(request({ spec: specFor(endpoint, { clientAuthentication: 'body', tokenRequestEncoding: 'json', pkce: false }), grant: { type: 'authorization_code', code, redirectUri: REDIRECT_URI } }));
    const [sent] = endpoint.requests;
    expect(sent!.contentType).toBe('application/json');
    expect(sent!.authorization).toBeNull();
    expect(sent!.parameters).toEqual({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
  });

  test('a form-encoded answer (GitHub when JSON is not asked for) is read as well', async () => {
    endpoint.formAnswersOnly = true;
    const code = endpoint.issueCode(CLIENT_ID, REDIRECT_URI);
    const tokens = await requestTokens(request({ grant: { type: 'authorization_code', code, redirectUri: REDIRECT_URI } }));
    expect(tokens.accessToken).toMatch(/^access-1-/);
    expect(tokens.expiresAt).toBeInstanceOf(Date);
    expect(tokens.refreshToken).toMatch(/^refresh-/);
    expect(tokens.scope).toBe('read');
  });

  test('a refresh answered without a refresh token keeps the one used (non-rotating); a rotating one replaces it', async () => {
    const refreshToken = endpoint.issueRefreshToken(CLIENT_ID);
    const kept = await requestTokens(request({ grant: { type: 'refresh_token', refreshToken } }));
    expect(endpoint.requests[0]!.parameters).toEqual({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(kept.refreshToken).toBe(refreshToken);
    endpoint.rotateRefreshTokens = true;
    const rotated = await requestTokens(request({ grant: { type: 'refresh_token', refreshToken } }));
    expect(rotated.refreshToken).not.toBe(refreshToken);
    expect(rotated.refreshToken).toMatch(/^refresh-/);
    // The used one is revoked: using it again is refused.
    const error = await refusal(requestTokens(request({ grant: { type: 'refresh_token', refreshToken } })));
    expect(error).toBeInstanceOf(TokenRequestRefusedError);
  });

  test('invalid_grant and invalid_client are refusals naming the provider error, never the secret or the grant', async () => {
    const refreshToken = 'refresh-that-was-revoked';
    const grantError = await refusal(requestTokens(request({ grant: { type: 'refresh_token', refreshToken } })));
    expect(grantError).toBeInstanceOf(TokenRequestRefusedError);
    expect((grantError as TokenRequestRefusedError).error).toBe('invalid_grant');
    expect(grantError.message).toContain('invalid_grant');
    const clientError = await refusal(requestTokens(request({ client: { clientId: CLIENT_ID, clientSecret: 'wrong-secret' }, grant: { type: 'refresh_token', refreshToken } })));
    expect((clientError as TokenRequestRefusedError).error).toBe('invalid_client');
    for (const error of [grantError, clientError]) {
      expect(error.message).not.toContain(refreshToken);
      expect(error.message).not.toContain('wrong-secret');
      expect(error.message).not.toContain(CLIENT_SECRET);
    }
  });

  test("an error answered with status 200 (GitHub's bad_verification_code style) is a refusal too", async () => {
    endpoint.errorsWithStatus200 = true;
    endpoint.formAnswersOnly = true;
    const error = await refusal(requestTokens(request({ grant: { type: 'authorization_code', code: 'never-issued', redirectUri: REDIRECT_URI } })));
    expect(error).toBeInstanceOf(TokenRequestRefusedError);
    expect((error as TokenRequestRefusedError).error).toBe('invalid_grant');
    expect(error.message).toContain('The code is invalid, was already used, or does not match');
  });

  test('5xx and 429 are temporary (with Retry-After), as is an endpoint that does not answer', async () => {
    endpoint.failNext = { status: 503, count: 1 };
    const unavailable = await refusal(requestTokens(request({ grant: { type: 'refresh_token', refreshToken: endpoint.issueRefreshToken(CLIENT_ID) } })));
    expect(unavailable).toBeInstanceOf(TemporarilyUnavailableError);
    endpoint.failNext = { status: 429, count: 1, retryAfter: '42' };
    const limited = await refusal(requestTokens(request({ grant: { type: 'refresh_token', refreshToken: endpoint.issueRefreshToken(CLIENT_ID) } })));
    expect(limited).toBeInstanceOf(TemporarilyUnavailableError);
    expect((limited as TemporarilyUnavailableError).retryAfterSeconds).toBe(42);
    const url = endpoint.tokenUrl;
    await endpoint.stop();
    const down = await refusal(requestTokens(request({ spec: specFor(endpoint, { tokenUrl: () => url }) })));
    expect(down).toBeInstanceOf(TemporarilyUnavailableError);
    expect(down.message).toContain('did not answer');
  });

  test('the address guard: a loopback token endpoint is refused unless private networks are allowed', async () => {
    const refreshToken = endpoint.issueRefreshToken(CLIENT_ID);
    const error = await refusal(requestTokens(request({ allowPrivateNetworks: false, grant: { type: 'refresh_token', refreshToken } })));
    expect(error).toBeInstanceOf(TokenRequestRefusedError);
    expect(error.message).toContain('private, loopback or link-local');
    expect(endpoint.requests).toHaveLength(0);
  });
});
