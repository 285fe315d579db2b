import type { AuthMethod, Connector } from '../../connectors/connector.js';
import { parseCredentials } from '../../connectors/contract/schemas.js';
import { ValidationError, type ErrorLocation, type ValidationIssue } from '../../shared/errors.js';
import { isHttpUrl } from '../../shared/web-url.js';
import { authMethodsOf } from '../sources/source.service.js';
import type { OperatorOAuthApps } from './oauth/operator-apps.js';
import type { OAuthCredentials } from './oauth/stored-credentials.js';
import type { OAuthClient } from './oauth/token-endpoint.js';

/** The `authentication` of a create request: its fields say the method (unspecified-shapes.md). */
export interface AuthenticationInput {
  credentials?: Record<string, unknown> | null;
  accessToken?: string | null;
  refreshToken?: string | null;
  expiresAt?: Date | null;
  redirectUri?: string | null;
  clientId?: string | null;
  clientSecret?: string | null;
  providerReadableId?: string | null;
  providerConfig?: Record<string, unknown> | null;
}

/** How a new connection authenticates, its credentials checked. */
export type AuthenticationPlan =
  | { method: 'direct'; credentials: unknown }
  | { method: 'oauth_token'; credentials: OAuthCredentials }
  | { method: 'oauth_browser' | 'oauth_byoc'; ownClient: OAuthClient | null; redirectUri: string | null };

/**
 * The method, inferred from the fields present: `credentials` → direct; `access_token` → oauth_token;
 * `client_id`/`client_secret` → oauth_byoc; `redirect_uri` or an empty object → oauth_browser;
 * `provider_readable_id` → auth_provider. Without `authentication`, direct where the source takes it
 * (no credentials, fields or a pasted token), else the browser sign-in.
 */
export function inferAuthMethod(connector: Connector, auth: AuthenticationInput | null): AuthMethod {
  const present = (keys: (keyof AuthenticationInput)[]) => auth !== null && keys.some((key) => auth[key] != null);
  if (present(['providerReadableId', 'providerConfig'])) return 'auth_provider';
  if (present(['accessToken', 'refreshToken', 'expiresAt'])) return 'oauth_token';
  if (present(['clientId', 'clientSecret'])) return 'oauth_byoc';
  if (present(['credentials'])) return 'direct';
  if (auth !== null) return connector.auth.kind === 'oauth2' ? 'oauth_browser' : 'direct';
  return authMethodsOf(connector).includes('direct') ? 'direct' : 'oauth_browser';
}

/**
 * Checks what a create request's `authentication` carries for its method, for a connection with
 * `config` (parsed); 422 with `loc` into it otherwise.
 */
export async function planAuthentication(connector: Connector, config: unknown, auth: AuthenticationInput | null, operatorApps: OperatorOAuthApps): Promise<AuthenticationPlan> {
  const method = inferAuthMethod(connector, auth);
  const supported = authMethodsOf(connector);
  if (!supported.includes(method)) {
    throw new ValidationError([{ loc: ['authentication'], msg: `Source "${connector.shortName}" does not support ${method} authentication (it supports ${supported.join(', ')})`, type: 'value_error' }]);
  }
  const issues: ValidationIssue[] = [];
  let plan: AuthenticationPlan;
  switch (method) {
    case 'direct': {
      const parsed = parseCredentials(connector, auth?.credentials ?? null);
      issues.push(...parsed.issues);
      plan = { method, credentials: parsed.value };
      break;
    }
    case 'oauth_token': {
      const accessToken = requiredText(auth?.accessToken, ['authentication', 'access_token'], issues);
      const ownClient = clientOf(auth, false, issues);
      const refreshToken = auth?.refreshToken ?? null;
      // A refresh token only works with the client it was issued to: the caller's, or else the operator's
      // app, when it serves this connection's token endpoint (decided now: an app for another server
      // would only be refused at the first refresh). Without either, the token is used until it expires.
      const client: OAuthCredentials['client'] = ownClient
        ? { kind: 'connection', ...ownClient }
        : refreshToken && (await operatorServes(connector, config, operatorApps))
          ? { kind: 'operator' }
          : { kind: 'none' };
      plan = { method, credentials: { kind: 'oauth', accessToken, refreshToken, expiresAt: auth?.expiresAt?.toISOString() ?? null, scope: null, client } };
      break;
    }
    case 'oauth_browser':
    case 'oauth_byoc': {
      const publicClient = connector.auth.kind === 'oauth2' && connector.auth.oauth.pkce;
      plan = { method, ownClient: method === 'oauth_byoc' ? clientOf(auth, !publicClient, issues) : null, redirectUri: httpUrl(auth?.redirectUri ?? null, ['authentication', 'redirect_uri'], issues) };
      break;
    }
    default:
      throw new ValidationError([{ loc: ['authentication'], msg: `${method} authentication is not available yet`, type: 'value_error' }]);
  }
  if (issues.length) throw new ValidationError(issues);
  return plan;
}

/** Whether the operator's app of the source serves the token endpoint of `config`. */
async function operatorServes(connector: Connector, config: unknown, operatorApps: OperatorOAuthApps): Promise<boolean> {
  if (connector.auth.kind !== 'oauth2') return false;
  return (await operatorApps.clientFor(connector.shortName, connector.auth.oauth.tokenUrl(config))) !== null;
}

/** The caller's own OAuth client (`client_id`, `client_secret`), when given; the secret may be optional for PKCE clients. */
function clientOf(auth: AuthenticationInput | null, secretRequired: boolean, issues: ValidationIssue[]): OAuthClient | null {
  if (auth?.clientId == null && auth?.clientSecret == null) return null;
  const clientId = requiredText(auth?.clientId, ['authentication', 'client_id'], issues);
  const clientSecret = secretRequired ? requiredText(auth?.clientSecret, ['authentication', 'client_secret'], issues) : auth?.clientSecret || null;
  return { clientId, clientSecret };
}

function requiredText(value: string | null | undefined, loc: ErrorLocation, issues: ValidationIssue[]): string {
  if (value == null || value.trim() === '') issues.push({ loc, msg: value == null ? 'Field required' : 'String should not be empty', type: value == null ? 'missing' : 'string_too_short' });
  return value ?? '';
}

/** An absolute http(s) URL the browser is sent to (a redirect), or null when not given. */
export function httpUrl(value: string | null, loc: ErrorLocation, issues: ValidationIssue[]): string | null {
  if (value == null) return null;
  if (!isHttpUrl(value) || value.length > 2048) {
    issues.push({ loc, msg: 'Must be an absolute http or https URL of at most 2048 characters', type: 'url_parsing' });
    return null;
  }
  return new URL(value).toString();
}
