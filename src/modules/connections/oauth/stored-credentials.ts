/**
 * What a connection's `sealed_credentials` envelope holds, by its `auth_method`:
 *
 * - `direct`: the credentials the connector's schema parses (its fields, or a pasted token), as given.
 * - `oauth_browser`, `oauth_byoc`, `oauth_token`: an `OAuthCredentials` — the tokens, and which OAuth
 *   client refreshes them. Absent (null envelope) while a browser flow has not completed.
 *
 * The envelope is opened only by the worker (and the token provider) to sync, and by the connection
 * service to check a change; it is never returned, logged or put in an error.
 */
export interface OAuthCredentials {
  kind: 'oauth';
  accessToken: string;
  /** Null when the provider issues none (`oauth_type: access_only`) or the caller gave none (`oauth_token`). */
  refreshToken: string | null;
  /** ISO time the access token expires, when the provider said (`expires_in`) or the caller gave `expires_at`. */
  expiresAt: string | null;
  /** Scopes granted, as the token endpoint returned them. */
  scope: string | null;
  /** The client that obtained the tokens and refreshes them. */
  client: OAuthClientReference;
}

/**
 * `operator`: the OAuth app the operator registered for this source (CATCHMENT_OAUTH_* or the CLI),
 * looked up when needed, so a rotated app secret applies at once. `connection`: the caller's own
 * client (`oauth_byoc`, or `oauth_token` with client credentials), sealed with the tokens. `none`: a
 * token given without any client (`oauth_token`): it cannot be refreshed.
 */
export type OAuthClientReference =
  | { kind: 'operator' }
  | { kind: 'connection'; clientId: string; clientSecret: string | null }
  | { kind: 'none' };

export function isOAuthCredentials(value: unknown): value is OAuthCredentials {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'oauth' && typeof (value as { accessToken?: unknown }).accessToken === 'string';
}
