/**
 * A local OAuth 2 provider for tests, speaking RFC 6749 as a real one does:
 * - the authorization endpoint (§4.1.1: `response_type=code`, a registered `client_id`, `redirect_uri`,
 *   `state`, `scope`; PKCE S256 per RFC 7636 §4.3) answers as if the user consented, or denied
 *   (§4.1.2.1 `error=access_denied`), by redirecting back with `code` and `state`;
 * - the token endpoint: the authorization code grant (§4.1.3, each code once, for the same client and
 *   redirect URI, PKCE verified per RFC 7636 §4.6), the refresh grant (§6), client authentication by
 *   HTTP Basic or in the body (§2.3.1), JSON answers (§5.1) and error answers (§5.2, 400
 *   `invalid_grant`, 401 `invalid_client`). Like GitHub's endpoint, it answers form-encoded unless
 *   asked for JSON (`Accept: application/json`), and takes a JSON body as Notion's does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeLoopback, listenOnLoopback } from '../../src/platform/http/test-loopback-server.js';

export interface RecordedTokenRequest {
  contentType: string;
  accept: string;
  authorization: string | null;
  parameters: Record<string, string>;
}

/** An authorization code grant the token endpoint got, and whether it issued tokens for it. */
export interface TokenExchange {
  clientId: string;
  code: string;
  codeVerifier: string | null;
  outcome: 'issued' | 'refused';
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
}

export class TestOAuthProvider {
  private server: Server | null = null;
  private listeningAt = '';
  /** Registered clients: id → secret (null for a public client). */
  readonly clients = new Map<string, string | null>();
  private readonly codes = new Map<string, IssuedCode>();
  /** Valid refresh tokens, by the client they were issued to. */
  private readonly refreshTokens = new Map<string, string>();
  /** Every authorization request's query, as received. */
  readonly authorizations: URLSearchParams[] = [];
  /** Every request to the token endpoint. */
  readonly requests: RecordedTokenRequest[] = [];
  /** The authorization code grants among them, with their outcome. */
  readonly exchanges: TokenExchange[] = [];
  /** The access tokens issued, to look for in responses and logs. */
  readonly issuedTokens: string[] = [];
  /** The user denies access at the next authorization requests. */
  denyAccess = false;
  /** Each refresh answers a new refresh token and revokes the used one (rotation). */
  rotateRefreshTokens = false;
  /** Seconds an access token lives (`expires_in`); null leaves it out. */
  expiresIn: number | null = 3600;
  /** Answers the next token requests with this status (and `Retry-After` when set) instead of handling them. */
  failNext: { status: number; count: number; retryAfter?: string } | null = null;
  /** Holds each token answer until this resolves (to let concurrent refreshes overlap). */
  answerGate: Promise<void> | null = null;
  /** Answers form-encoded whatever `Accept` says (what GitHub does when JSON is not asked for). */
  formAnswersOnly = false;
  /** Answers grant errors with status 200, as GitHub's token endpoint does (`bad_verification_code`, `bad_refresh_token`). */
  errorsWithStatus200 = false;

  get origin(): string {
    return this.listeningAt;
  }

  get authorizeUrl(): string {
    return `${this.origin}/oauth/authorize`;
  }

  get tokenUrl(): string {
    return `${this.origin}/oauth/token`;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => void this.handle(request, response));
    this.listeningAt = await listenOnLoopback(this.server);
    return this;
  }

  async stop(): Promise<void> {
    await closeLoopback(this.server);
  }

  /** What the authorization endpoint would have redirected back with. */
  issueCode(clientId: string, redirectUri: string, codeVerifier?: string): string {
    const code = `code-${randomBytes(12).toString('hex')}`;
    const codeChallenge = codeVerifier ? createHash('sha256').update(codeVerifier).digest('base64url') : null;
    this.codes.set(code, { clientId, redirectUri, codeChallenge });
    return code;
  }

  /** A refresh token this endpoint accepts, as if issued earlier. */
  issueRefreshToken(clientId: string, token = `refresh-${randomBytes(8).toString('hex')}`): string {
    this.refreshTokens.set(token, clientId);
    return token;
  }

  revokeRefreshToken(token: string): void {
    this.refreshTokens.delete(token);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.origin);
    if (request.method === 'GET' && url.pathname === '/oauth/authorize') return this.authorize(url.searchParams, response);
    if (request.method === 'POST' && url.pathname === '/oauth/token') return this.token(request, response);
    response.writeHead(404).end();
  }

  private authorize(query: URLSearchParams, response: ServerResponse): void {
    this.authorizations.push(query);
    const clientId = query.get('client_id') ?? '';
    const redirectUri = query.get('redirect_uri');
    // §4.1.2.1: an unknown client or a bad redirect URI is told to the user, never redirected to.
    if (!this.clients.has(clientId) || !redirectUri) {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('invalid client or redirect_uri');
      return;
    }
    const back = new URL(redirectUri);
    const state = query.get('state');
    if (state) back.searchParams.set('state', state);
    const challenge = query.get('code_challenge');
    if (query.get('response_type') !== 'code' || (challenge && query.get('code_challenge_method') !== 'S256')) {
      back.searchParams.set('error', 'invalid_request');
    } else if (this.denyAccess) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user denied the request');
    } else {
      const code = `code-${randomBytes(12).toString('hex')}`;
      this.codes.set(code, { clientId, redirectUri, codeChallenge: challenge });
      back.searchParams.set('code', code);
    }
    response.writeHead(302, { location: back.toString() }).end();
  }

  private async token(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const contentType = request.headers['content-type'] ?? '';
    const parameters: Record<string, string> = contentType.includes('application/json') ? (JSON.parse(text) as Record<string, string>) : Object.fromEntries(new URLSearchParams(text));
    const accept = request.headers.accept ?? '';
    this.requests.push({ contentType, accept, authorization: request.headers.authorization ?? null, parameters });
    if (this.answerGate) await this.answerGate;
    const answer = (status: number, body: Record<string, string | number>, headers: Record<string, string> = {}) => {
      const json = accept.includes('application/json') && !this.formAnswersOnly;
      if (this.errorsWithStatus200 && status === 400) status = 200;
      response.writeHead(status, { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', 'cache-control': 'no-store', ...headers });
      response.end(json ? JSON.stringify(body) : new URLSearchParams(Object.entries(body).map(([key, value]) => [key, String(value)])).toString());
    };
    if (this.failNext && this.failNext.count > 0) {
      this.failNext.count--;
      return answer(this.failNext.status, { error: 'temporarily_unavailable' }, this.failNext.retryAfter ? { 'retry-after': this.failNext.retryAfter } : {});
    }
    const client = this.authenticate(request.headers.authorization ?? null, parameters);
    if (!client) return answer(401, { error: 'invalid_client', error_description: 'Client authentication failed' }, { 'www-authenticate': 'Basic realm="token"' });
    if (parameters.grant_type === 'authorization_code') {
      const code = parameters.code ?? '';
      const issued = this.codes.get(code);
      this.codes.delete(code); // single use (§4.1.2)
      const verifier = parameters.code_verifier ?? null;
      const challenge = verifier ? createHash('sha256').update(verifier).digest('base64url') : null;
      const refusal = !issued || issued.clientId !== client || issued.redirectUri !== parameters.redirect_uri ? 'The code is invalid, was already used, or does not match' : issued.codeChallenge !== challenge ? 'PKCE verification failed' : null;
      this.exchanges.push({ clientId: client, code, codeVerifier: verifier, outcome: refusal ? 'refused' : 'issued' });
      if (refusal) return answer(400, { error: 'invalid_grant', error_description: refusal });
      return answer(200, this.tokensFor(client, true));
    }
    if (parameters.grant_type === 'refresh_token') {
      const owner = this.refreshTokens.get(parameters.refresh_token ?? '');
      if (owner !== client) return answer(400, { error: 'invalid_grant', error_description: 'The refresh token is invalid, expired or revoked' });
      if (this.rotateRefreshTokens) this.refreshTokens.delete(parameters.refresh_token!);
      return answer(200, this.tokensFor(client, this.rotateRefreshTokens));
    }
    return answer(400, { error: 'unsupported_grant_type' });
  }

  /** The client id when the request authenticates a registered client (HTTP Basic with id and secret form-encoded, or both in the body). */
  private authenticate(authorization: string | null, parameters: Record<string, string>): string | null {
    let id = parameters.client_id;
    let secret: string | null = parameters.client_secret ?? null;
    if (authorization?.startsWith('Basic ')) {
      const [encodedId, encodedSecret] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':') as [string, string];
      id = decodeURIComponent(encodedId.replaceAll('+', ' '));
      secret = decodeURIComponent(encodedSecret.replaceAll('+', ' '));
    }
    if (id === undefined || !this.clients.has(id)) return null;
    return this.clients.get(id) === secret ? id : null;
  }

  private tokensFor(client: string, withRefreshToken: boolean): Record<string, string | number> {
    const accessToken = `access-${this.issuedTokens.length + 1}-${randomBytes(6).toString('hex')}`;
    this.issuedTokens.push(accessToken);
    return {
      access_token: accessToken,
      token_type: 'bearer',
      scope: 'read',
      ...(this.expiresIn !== null ? { expires_in: this.expiresIn } : {}),
      ...(withRefreshToken ? { refresh_token: this.issueRefreshToken(client) } : {}),
    };
  }
}
