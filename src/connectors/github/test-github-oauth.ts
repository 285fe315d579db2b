import { createHash } from 'node:crypto';

/**
 * The fake GitHub's OAuth token endpoint, POST /login/oauth/access_token, as "Authorizing OAuth
 * apps" and "Troubleshooting OAuth app access token request errors" (docs.github.com) describe it:
 * client_id and client_secret in the form; the authorization_code grant (redirect_uri, and the PKCE
 * code_verifier of an S256 code_challenge) and the refresh_token grant of expiring user tokens; the
 * answer form-encoded unless the client accepts JSON; errors (incorrect_client_credentials,
 * bad_verification_code, redirect_uri_mismatch, bad_refresh_token) with status 200.
 */
export class TestGitHubOAuth {
  /** OAuth apps: client id → client secret. */
  readonly apps = new Map<string, string>();
  /** Authorization codes given out by the (absent) authorize page, as its redirect would carry them. */
  readonly codes = new Map<string, { clientId: string; redirectUri: string; codeChallenge?: string }>();
  /** Refresh tokens issued → client id. */
  readonly refreshTokens = new Map<string, string>();
  private issued = 0;

  /** The answer's body and type for a token request; `grantAccess` registers a new access token with the API. */
  answer(body: string, accept: string, grantAccess: (token: string) => void): { body: string; contentType: string } {
    const fields = this.fields(new URLSearchParams(body), grantAccess);
    if (accept.includes('application/json')) return { body: JSON.stringify(fields), contentType: 'application/json; charset=utf-8' };
    return { body: new URLSearchParams(Object.entries(fields).map(([key, value]) => [key, String(value)])).toString(), contentType: 'application/x-www-form-urlencoded; charset=utf-8' };
  }

  private fields(form: URLSearchParams, grantAccess: (token: string) => void): Record<string, string | number> {
    const refuse = (error: string, description: string) => ({ error, error_description: description, error_uri: `https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#${error}` });
    const clientId = form.get('client_id') ?? '';
    if (!this.apps.has(clientId) || this.apps.get(clientId) !== form.get('client_secret')) return refuse('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
    const accessToken = () => {
      const token = `gho_${++this.issued}${createHash('sha1').update(String(this.issued)).digest('hex').slice(0, 20)}`;
      grantAccess(token);
      return token;
    };
    if (form.get('grant_type') === 'refresh_token') {
      const refreshToken = form.get('refresh_token') ?? '';
      if (this.refreshTokens.get(refreshToken) !== clientId) return refuse('bad_refresh_token', 'The refresh token passed is incorrect or expired.');
      this.refreshTokens.delete(refreshToken);
      const rotated = `ghr_${++this.issued}`;
      this.refreshTokens.set(rotated, clientId);
      return { access_token: accessToken(), expires_in: 28800, refresh_token: rotated, refresh_token_expires_in: 15811200, scope: '', token_type: 'bearer' };
    }
    const code = this.codes.get(form.get('code') ?? '');
    const verifier = form.get('code_verifier');
    const challengeMet = !code?.codeChallenge || (verifier !== null && createHash('sha256').update(verifier).digest('base64url') === code.codeChallenge);
    if (!code || code.clientId !== clientId || !challengeMet) return refuse('bad_verification_code', 'The code passed is incorrect or expired.');
    if (form.get('redirect_uri') && form.get('redirect_uri') !== code.redirectUri) return refuse('redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.');
    this.codes.delete(form.get('code')!);
    return { access_token: accessToken(), scope: 'repo,read:org,read:discussion', token_type: 'bearer' };
  }
}
