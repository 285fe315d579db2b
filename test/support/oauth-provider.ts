/**
 * A local OAuth 2 provider for tests of browser sign-ins, speaking RFC 6749 as a real one does: the
 * authorization endpoint (§4.1.1: `response_type=code`, a registered `client_id`, `redirect_uri`,
 * `state`, `scope`; PKCE S256 per RFC 7636 §4.3) answers as if the user consented, or denied
 * (§4.1.2.1 `error=access_denied`), by redirecting back with `code` and `state`; the token endpoint
 * (§4.1.3, client authentication by HTTP Basic per §2.3.1) exchanges each code once, for the same
 * client and redirect URI, checking the PKCE verifier, and answers as §5.1 / §5.2 say.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeLoopback, listenOnLoopback } from '../../src/platform/http/test-loopback-server.js';

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
}

export interface TokenExchange {
  clientId: string;
  code: string;
  codeVerifier: string | null;
  outcome: 'issued' | 'refused';
}

export class TestOAuthProvider {
  private server: Server | null = null;
  private listeningAt = '';
  /** Registered clients: id → secret. */
  readonly clients = new Map<string, string>();
  private readonly codes = new Map<string, IssuedCode>();
  /** Every authorization request's query, as received. */
  readonly authorizations: URLSearchParams[] = [];
  readonly exchanges: TokenExchange[] = [];
  /** The access tokens issued, to look for in responses and logs. */
  readonly issuedTokens: string[] = [];
  /** The user denies access at the next authorization requests. */
  denyAccess = false;

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
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const answer = (status: number, body: Record<string, string | number>) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    };
    const clientId = this.authenticate(request.headers.authorization);
    if (!clientId) return answer(401, { error: 'invalid_client' });
    const code = form.get('code') ?? '';
    const issued = this.codes.get(code);
    this.codes.delete(code); // a code is used once (§4.1.2)
    const verifier = form.get('code_verifier');
    const verified = issued?.codeChallenge ? verifier !== null && createHash('sha256').update(verifier).digest('base64url') === issued.codeChallenge : true;
    const valid = form.get('grant_type') === 'authorization_code' && issued?.clientId === clientId && issued.redirectUri === form.get('redirect_uri') && verified;
    this.exchanges.push({ clientId, code, codeVerifier: verifier, outcome: valid ? 'issued' : 'refused' });
    if (!valid) return answer(400, { error: 'invalid_grant', error_description: 'The code is invalid, was already used, or does not match' });
    const accessToken = `access-${randomBytes(12).toString('hex')}`;
    this.issuedTokens.push(accessToken);
    answer(200, { access_token: accessToken, token_type: 'bearer', expires_in: 3600, refresh_token: `refresh-${randomBytes(12).toString('hex')}`, scope: 'read' });
  }

  /** The client of an HTTP Basic `Authorization` (§2.3.1: id and secret form-encoded), when registered with that secret. */
  private authenticate(authorization: string | undefined): string | null {
    if (!authorization?.startsWith('Basic ')) return null;
    const [id, secret] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part.replaceAll('+', ' ')));
    return id !== undefined && this.clients.get(id) === secret ? id : null;
  }
}
