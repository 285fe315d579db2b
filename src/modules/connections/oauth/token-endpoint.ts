/**
 * The client side of an OAuth 2 token endpoint (RFC 6749): the authorization code exchange (§4.1.3,
 * with the PKCE verifier of RFC 7636 §4.5) and the refresh (§6), through the sources' address guard.
 */
import { fetch } from 'undici';
import { readCappedBody } from '../../../platform/http/capped-body.js';
import { retryAfterMs } from '../../../platform/http/retry-after.js';
import { z } from 'zod';
import type { OAuth2Spec } from '../../../connectors/contract/auth.js';
import { TemporarilyUnavailableError } from '../../../connectors/contract/errors.js';
import { guardedSourceAgent, networkReason, refusalOf } from '../../../platform/http/guarded-agent.js';
import { USER_AGENT } from '../../../platform/http/web-client.js';

export interface TokenSet {
  accessToken: string;
  /** Null when the provider issues none; after a refresh without a new one, the refresh token that was used. */
  refreshToken: string | null;
  expiresAt: Date | null;
  scope: string | null;
}

export type TokenGrant =
  | { type: 'authorization_code'; code: string; redirectUri: string; codeVerifier?: string }
  | { type: 'refresh_token'; refreshToken: string };

export interface OAuthClient {
  clientId: string;
  /** Null for a public client (PKCE only): its id goes in the body. */
  clientSecret: string | null;
}

export interface TokenRequest<Config = unknown> {
  spec: OAuth2Spec<Config>;
  config: Config;
  client: OAuthClient;
  grant: TokenGrant;
  allowPrivateNetworks: boolean;
  signal?: AbortSignal;
}

/**
 * The token endpoint refused the grant or the client (`invalid_grant`, `invalid_client`…): asking
 * again will not help; the connection needs the user to sign in again. The message names the
 * provider's error code and description, never the code, tokens or client secret sent.
 */
export class TokenRequestRefusedError extends Error {
  override name = 'TokenRequestRefusedError';
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

const TIMEOUT_MS = 30_000;
/** Token answers are a few hundred bytes; anything far larger is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A successful answer (§5.1). GitHub's form-encoded answers carry every value as a string. */
const tokenAnswer = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).nullish(),
  expires_in: z.coerce.number().positive().nullish(),
  scope: z.string().nullish(),
});

/** An error answer (§5.2); GitHub sends it with status 200 (`bad_verification_code`, `bad_refresh_token`). */
const errorAnswer = z.object({ error: z.string().min(1), error_description: z.string().nullish() });

/** `application/x-www-form-urlencoded` encoding of one value (RFC 6749 §2.3.1 applies it to the Basic credentials). */
const formEncoded = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);

function grantParameters(grant: TokenGrant): Record<string, string> {
  if (grant.type === 'refresh_token') return { grant_type: 'refresh_token', refresh_token: grant.refreshToken };
  return {
    grant_type: 'authorization_code',
    code: grant.code,
    redirect_uri: grant.redirectUri,
    ...(grant.codeVerifier ? { code_verifier: grant.codeVerifier } : {}),
  };
}

function requestOf(spec: OAuth2Spec<unknown>, client: OAuthClient, grant: TokenGrant): { headers: Record<string, string>; body: string } {
  const parameters = grantParameters(grant);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
  if (spec.clientAuthentication === 'basic' && client.clientSecret !== null) {
    headers.authorization = `Basic ${Buffer.from(`${formEncoded(client.clientId)}:${formEncoded(client.clientSecret)}`).toString('base64')}`;
  } else {
    parameters.client_id = client.clientId;
    if (client.clientSecret !== null) parameters.client_secret = client.clientSecret;
  }
  if (spec.tokenRequestEncoding === 'json') {
    headers['content-type'] = 'application/json';
    return { headers, body: JSON.stringify(parameters) };
  }
  headers['content-type'] = 'application/x-www-form-urlencoded';
  return { headers, body: new URLSearchParams(parameters).toString() };
}

/** The answer as an object: JSON, or form-encoded (GitHub without `Accept`, some older providers). */
function parseAnswer(text: string, contentType: string): Record<string, unknown> | null {
  if (contentType.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The answer's text; an answer past MAX_ANSWER_BYTES reads as empty, which no check accepts. */
async function readCapped(response: Awaited<ReturnType<typeof fetch>>): Promise<string> {
  return (await readCappedBody(response, MAX_ANSWER_BYTES))?.toString('utf8') ?? '';
}

const retryAfterSeconds = (headers: { get(name: string): string | null }) => {
  const asked = retryAfterMs(headers);
  return asked === null ? null : Math.ceil(asked / 1000);
};

/** Exchanges a code or a refresh token for tokens at the connector's token endpoint. */
export async function requestTokens<Config>({ spec, config, client, grant, allowPrivateNetworks, signal }: TokenRequest<Config>): Promise<TokenSet> {
  const url = spec.tokenUrl(config);
  const { origin } = new URL(url);
  const { headers, body } = requestOf(spec as OAuth2Spec<unknown>, client, grant);
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  let response: Awaited<ReturnType<typeof fetch>>;
  let text: string;
  try {
    response = await fetch(url, { method: 'POST', headers, body, redirect: 'error', signal: signal ? AbortSignal.any([signal, timeout]) : timeout, dispatcher: guardedSourceAgent(allowPrivateNetworks) });
    text = await readCapped(response);
  } catch (error) {
    signal?.throwIfAborted();
    const refusal = refusalOf(error);
    // The address policy will not change by itself: the grant cannot be used from here.
    if (refusal) throw new TokenRequestRefusedError('refused_target', `The token endpoint at ${origin} may not be reached: ${refusal.message}`);
    throw new TemporarilyUnavailableError(`The token endpoint at ${origin} did not answer: ${networkReason(error)}`);
  }
  const answer = parseAnswer(text, response.headers.get('content-type') ?? '');
  const failure = errorAnswer.safeParse(answer);
  if (response.status === 429 || response.status >= 500) {
    throw new TemporarilyUnavailableError(`The token endpoint at ${origin} answered ${response.status}${failure.success ? ` (${failure.data.error})` : ''}`, retryAfterSeconds(response.headers));
  }
  if (failure.success || response.status >= 400) {
    const code = failure.success ? failure.data.error : response.status === 401 ? 'invalid_client' : `http_${response.status}`;
    const description = failure.success && failure.data.error_description ? `: ${failure.data.error_description.slice(0, 300)}` : '';
    throw new TokenRequestRefusedError(code, `The token endpoint at ${origin} refused the ${grant.type === 'refresh_token' ? 'refresh' : 'authorization code'} (${code}${description})`);
  }
  const tokens = tokenAnswer.safeParse(answer);
  if (!tokens.success) throw new TemporarilyUnavailableError(`The token endpoint at ${origin} answered ${response.status} without an access token`);
  const { access_token, refresh_token, expires_in, scope } = tokens.data;
  return {
    accessToken: access_token,
    // A provider that does not rotate its refresh tokens answers a refresh without one (§6): the old one stays valid.
    refreshToken: refresh_token ?? (grant.type === 'refresh_token' ? grant.refreshToken : null),
    expiresAt: expires_in ? new Date(Date.now() + expires_in * 1000) : null,
    scope: scope ?? null,
  };
}
