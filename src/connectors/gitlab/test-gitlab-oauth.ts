import { createHash, randomBytes } from 'node:crypto';

/**
 * Test helper: GitLab's OAuth 2 provider as doc/api/oauth2.md (gitlabhq/gitlabhq) describes it — Doorkeeper
 * behind `POST /oauth/token`, with a form body (client_id and client_secret in the body),
 * `authorization_code` (with `redirect_uri` and the PKCE `code_verifier`, S256) and `refresh_token` grants
 * answering `access_token`, `token_type`, `expires_in` (7200), `refresh_token`, `scope`, `created_at`; a
 * refresh invalidates the previous access and refresh tokens (rotation). Refusals are
 * `{"error":"invalid_grant"|"invalid_client"|…, "error_description":…}` (400 / 401).
 */

interface PendingCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
}

type TokenAnswer = [status: number, body: Record<string, unknown>];

export class FakeGitLabOAuth {
  /** OAuth applications: client id → secret and registered redirect URI. */
  readonly apps = new Map<string, { secret: string; redirectUri: string }>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly refreshTokens = new Map<string, { clientId: string; accessToken: string }>();

  /** `accessTokens`: the API server's accepted tokens, which this provider issues and revokes. */
  constructor(private readonly accessTokens: Map<string, { expiresAt: number | null }>) {}

  /** Registers an OAuth application and returns its client id and secret. */
  registerApp(redirectUri: string): { clientId: string; clientSecret: string } {
    const clientId = randomBytes(16).toString('hex');
    const clientSecret = `gloas-${randomBytes(16).toString('hex')}`;
    this.apps.set(clientId, { secret: clientSecret, redirectUri });
    return { clientId, clientSecret };
  }

  /**
   * What the authorize page hands the redirect URI once the user approves: a single-use code bound to
   * the client, the redirect URI and the PKCE challenge (S256) of the authorization request.
   */
  approve(clientId: string, redirectUri: string, codeChallenge: string | null = null): string {
    const code = randomBytes(16).toString('hex');
    this.codes.set(code, { clientId, redirectUri, codeChallenge });
    return code;
  }

  /** The answer (status, JSON body) to a `POST /oauth/token` with this content type and body. */
  token(contentType: string, body: string): TokenAnswer {
    const form = new URLSearchParams(body);
    if (!contentType.startsWith('application/x-www-form-urlencoded')) return [400, { error: 'invalid_request', error_description: 'The request is missing a required parameter.' }];
    const clientId = form.get('client_id') ?? '';
    const app = this.apps.get(clientId);
    // Doorkeeper takes the client from the body (or HTTP Basic); a confidential app must give its secret.
    if (!app || form.get('client_secret') !== app.secret) {
      return [401, { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.' }];
    }
    const invalidGrant: TokenAnswer = [400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.' }];
    if (form.get('grant_type') === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      if (!code || code.clientId !== clientId || code.redirectUri !== form.get('redirect_uri')) return invalidGrant;
      if (code.codeChallenge !== null) {
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== code.codeChallenge) return invalidGrant;
      }
      this.codes.delete(form.get('code')!);
      return [200, this.issueTokens(clientId)];
    }
    if (form.get('grant_type') === 'refresh_token') {
      const refreshToken = form.get('refresh_token') ?? '';
      const known = this.refreshTokens.get(refreshToken);
      if (!known || known.clientId !== clientId) return invalidGrant;
      // Rotation: the refresh token and the access token it came with stop working.
      this.refreshTokens.delete(refreshToken);
      this.accessTokens.delete(known.accessToken);
      return [200, this.issueTokens(clientId)];
    }
    return [400, { error: 'unsupported_grant_type', error_description: 'The authorization grant type is not supported by the authorization server.' }];
  }

  private issueTokens(clientId: string) {
    const accessToken = randomBytes(32).toString('hex');
    const refreshToken = randomBytes(32).toString('hex');
    this.accessTokens.set(accessToken, { expiresAt: Date.now() + 7200_000 });
    this.refreshTokens.set(refreshToken, { clientId, accessToken });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 7200, refresh_token: refreshToken, scope: 'read_api read_repository', created_at: Math.floor(Date.now() / 1000) };
  }
}
