import { randomUUID } from 'node:crypto';

/**
 * Test helper: Notion's OAuth token endpoint, `POST /v1/oauth/token` (developers.notion.com/reference/
 * create-a-token and /reference/refresh-a-token, /docs/authorization): the public integration
 * authenticates with HTTP Basic (client id and secret), the body is JSON with `grant_type`
 * `authorization_code` (`code`, `redirect_uri`) or `refresh_token`; each grant answers `access_token`,
 * `token_type: "bearer"`, a new `refresh_token` (the one used is spent), `bot_id`, `workspace_*` and
 * `owner`. Refusals are RFC 6749 §5.2 bodies (`{"error","error_description"}`).
 */

interface OAuthClient {
  secret: string;
  redirectUri: string;
}

export interface TokenAnswer {
  status: number;
  body: unknown;
}

export class TestNotionOAuth {
  private readonly clients = new Map<string, OAuthClient>();
  /** Authorization codes issued (single use). */
  private readonly codes = new Set<string>();
  private readonly refreshTokens = new Set<string>();

  /** `grantAccess` makes each access token issued valid at the API. */
  constructor(
    private readonly workspaceName: () => string,
    private readonly grantAccess: (accessToken: string) => void,
  ) {}

  /** Registers a public integration and issues an authorization code, as Notion's consent page does. */
  authorize(clientId: string, secret: string, redirectUri: string): string {
    this.clients.set(clientId, { secret, redirectUri });
    const code = `code-${randomUUID()}`;
    this.codes.add(code);
    return code;
  }

  answer(authorization: string | undefined, body: Record<string, unknown>): TokenAnswer {
    const basic = /^Basic (.+)$/.exec(authorization ?? '');
    const [clientId, secret] = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':') : [];
    const client = clientId ? this.clients.get(clientId) : undefined;
    if (!client || client.secret !== secret) return refused(401, 'invalid_client', 'Client authentication failed.');
    if (body.grant_type === 'authorization_code') {
      if (typeof body.code !== 'string' || !this.codes.delete(body.code)) return refused(400, 'invalid_grant', 'Invalid code.');
      if (body.redirect_uri !== client.redirectUri) return refused(400, 'invalid_grant', 'Invalid redirect_uri.');
      return this.grant();
    }
    if (body.grant_type === 'refresh_token') {
      // Each refresh replaces the refresh token: the old one is spent.
      if (typeof body.refresh_token !== 'string' || !this.refreshTokens.delete(body.refresh_token)) return refused(400, 'invalid_grant', 'Invalid refresh token.');
      return this.grant();
    }
    return refused(400, 'unsupported_grant_type', 'Unsupported grant type.');
  }

  private grant(): TokenAnswer {
    const accessToken = `ntn_access_${randomUUID()}`;
    const refreshToken = `ntn_refresh_${randomUUID()}`;
    this.grantAccess(accessToken);
    this.refreshTokens.add(refreshToken);
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: 'bearer',
        refresh_token: refreshToken,
        bot_id: 'bot-1',
        workspace_name: this.workspaceName(),
        workspace_icon: null,
        workspace_id: 'workspace-1',
        owner: { type: 'user', user: { object: 'user', id: 'user-1', type: 'person', name: 'Ada', avatar_url: null, person: { email: 'ada@example.com' } } },
        duplicated_template_id: null,
        request_id: randomUUID(),
      },
    };
  }
}

const refused = (status: number, error: string, description: string): TokenAnswer => ({ status, body: { error, error_description: description } });
