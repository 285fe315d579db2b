import type { z } from 'zod';

/**
 * How a source authenticates, declared by its connector. The catalog's `auth_methods`, `oauth_type`
 * and `auth_fields` are derived from it, and the platform runs everything it describes (the browser
 * flow, token exchange and refresh); a connector only ever receives tokens or its parsed credentials.
 *
 * - `none`: nothing to authenticate (local folders, the stub, public feeds).
 * - `fields`: credentials the user types (keys, passwords, a personal token): `auth_methods: ["direct"]`.
 * - `oauth2`: OAuth 2 (`oauth_browser`, `oauth_byoc`, `oauth_token`), and optionally a token the user
 *   pastes instead (`pasted`, which adds `direct`).
 */
export type ConnectorAuth<Config = unknown, Credentials = unknown> =
  | { kind: 'none' }
  | { kind: 'fields'; credentials: z.ZodType<Credentials> }
  | { kind: 'oauth2'; oauth: OAuth2Spec<Config>; pasted?: PastedToken<Credentials> };

/** What the platform needs to run a provider's OAuth 2 authorization-code flow and refresh its tokens. */
export interface OAuth2Spec<Config = unknown> {
  /** The provider's authorization endpoint; may depend on config (GitHub Enterprise, self-managed GitLab). */
  authorizeUrl(config: Config): string;
  /** The provider's token endpoint (code exchange and refresh). */
  tokenUrl(config: Config): string;
  /** Scopes asked for, joined by `scopeSeparator` (default a space; GitHub accepts either). */
  scopes: string[];
  scopeSeparator?: string;
  /** Sends an S256 code challenge and keeps the verifier server side. */
  pkce: boolean;
  /**
   * `none`: access tokens do not expire or cannot be refreshed (catalog `oauth_type: access_only`);
   * `refresh`: a refresh token that stays valid (`with_refresh`); `rotating`: each refresh returns a
   * new refresh token that replaces the old one (`with_rotating_refresh`).
   */
  refresh: 'none' | 'refresh' | 'rotating';
  /** How the client authenticates at the token endpoint: HTTP Basic, or client_id/client_secret in the form body. */
  clientAuthentication: 'basic' | 'body';
  /** Provider-specific authorize parameters (Google: `access_type=offline`, `prompt=consent`; Notion: `owner=user`). */
  extraAuthorizeParameters?: Record<string, string>;
  /**
   * The token endpoint's request body encoding: a form (RFC 6749, the default) or JSON (Notion's token
   * endpoint takes JSON).
   */
  tokenRequestEncoding?: 'form' | 'json';
}

/** A token the user pastes instead of signing in (a personal access token, an API key): direct credentials. */
export interface PastedToken<Credentials = unknown> {
  credentials: z.ZodType<Credentials>;
  /** The token in the parsed credentials, sent as the access token would be (see `authHeaders`). */
  token(credentials: Credentials): string;
}

/**
 * Headers that authenticate one request with a token. `origin` says where the token came from, for
 * APIs whose API keys use another scheme than their OAuth tokens (Linear: `Authorization: <key>`).
 * Default: `Authorization: Bearer <token>`.
 */
export type AuthHeaders = (token: string, origin: 'oauth' | 'pasted') => Record<string, string>;
