import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { z } from 'zod';
import type { Connector } from '../../../connectors/connector.js';
import type { OAuth2Spec } from '../../../connectors/contract/auth.js';
import type { Orm } from '../../../platform/db/database.js';
import { hashSecret, type SecretBox } from '../../../platform/secrets/secrets.js';
import { ValidationError, type ErrorLocation } from '../../../shared/errors.js';
import { isHttpUrl } from '../../../shared/web-url.js';
import { Organization } from '../../organizations/organization.entity.js';
import { SourceConnection } from '../source-connection.entity.js';
import type { OAuthCallbackAddress } from './callback-address.js';
import { OAuthAuthorization } from './oauth-authorization.entity.js';
import type { OperatorOAuthApps } from './operator-apps.js';
import type { OAuthClient } from './token-endpoint.js';

/** How long an auth_url can be used: a person signs in within minutes. */
export const SIGN_IN_TTL_MS = 10 * 60 * 1000;

/**
 * The client a sign-in runs with: the operator's app for the source (looked up again when the code is
 * exchanged, so a rotated secret applies), or the caller's own (`oauth_byoc`), sealed with the sign-in.
 */
export type SignInClient = { kind: 'operator'; clientId: string } | { kind: 'connection'; clientId: string; clientSecret: string | null };

/**
 * What a sign-in keeps sealed until its callback: the PKCE verifier, the caller's own client, and the
 * token endpoint the sign-in was made for (its code and the client's secret go there and nowhere else:
 * absent in sign-ins begun before it was kept, which then cannot complete).
 */
const pendingSecrets = z.object({
  codeVerifier: z.string().nullable(),
  tokenUrl: z.string().optional(),
  client: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('operator') }),
    z.object({ kind: z.literal('connection'), clientId: z.string(), clientSecret: z.string().nullable() }),
  ]),
});
export type PendingSecrets = z.infer<typeof pendingSecrets>;

export interface SignInRequest {
  connection: SourceConnection;
  spec: OAuth2Spec;
  config: Record<string, unknown>;
  client: SignInClient;
  /** Where the browser is sent with the outcome; null: the service shows a page. */
  redirectUrl: string | null;
  /** The caller's own `redirect_uri` for the provider (one that forwards to /oauth/callback); null: the service's. */
  redirectUri: string | null;
  syncOnCompletion: boolean;
}

export interface SignInLink {
  authUrl: string;
  expiresAt: Date;
  redirectUrl: string | null;
}

/** A sign-in under way, as a connection's view shows it (never its state or verifier). */
export interface PendingSignIn {
  expiresAt: Date;
  redirectUrl: string | null;
}

/**
 * Browser sign-ins (`oauth_browser`, `oauth_byoc`): each makes the provider's authorize URL with a
 * random `state` (stored as its SHA-256) and, when the provider takes PKCE, an S256 challenge whose
 * verifier stays sealed here until the callback (oauth-callback.ts) exchanges the code.
 */
export class OAuthSignIns {
  constructor(
    private readonly orm: Orm,
    private readonly secretBox: SecretBox,
    private readonly operatorApps: OperatorOAuthApps,
    private readonly callbackAddress: OAuthCallbackAddress,
  ) {}

  /**
   * The client a sign-in with `connector` at `config` uses: the caller's (BYOC) when given, else the
   * operator's app when it serves the config's token endpoint; a 422 at `loc` when there is neither.
   */
  async client(connector: Connector, config: unknown, own: OAuthClient | null, loc: ErrorLocation): Promise<SignInClient> {
    if (own) return { kind: 'connection', ...own };
    const { shortName } = connector;
    const tokenUrl = connector.auth.kind === 'oauth2' ? connector.auth.oauth.tokenUrl(config) : null;
    const operator = tokenUrl ? await this.operatorApps.clientFor(shortName, tokenUrl) : null;
    if (operator) return { kind: 'operator', clientId: operator.clientId };
    throw new ValidationError([
      {
        loc,
        msg: `No OAuth app is registered on this instance for "${shortName}" with the token endpoint ${tokenUrl}: bring your own OAuth app (its client_id and client_secret: oauth_byoc), or ask the operator to register one (catchment oauth-apps set ${shortName}, with --token-url for a server of your own)`,
        type: 'byoc_required',
      },
    ]);
  }

  /**
   * The caller's own client a connection's last sign-in used, for signing in again without sending
   * it: only for the token endpoint that sign-in was made for, so a config pointed elsewhere meanwhile
   * does not take the secret with it.
   */
  async lastOwnClient(connectionId: string, tokenUrl: string): Promise<OAuthClient | null> {
    const row = await this.orm.em.fork().findOne(OAuthAuthorization, { sourceConnection: connectionId });
    if (!row) return null;
    const secrets = this.open(row);
    if (secrets.tokenUrl !== tokenUrl || secrets.client.kind !== 'connection') return null;
    return { clientId: secrets.client.clientId, clientSecret: secrets.client.clientSecret };
  }

  /**
   * Starts a sign-in in `em` (it commits with the caller's change); replaces the connection's earlier
   * one. A 422 when the config names OAuth endpoints that are not http(s): the auth_url is followed
   * by browsers (the console assigns it to `window.location`), where a `javascript:` one would run.
   */
  async begin(em: EntityManager, request: SignInRequest): Promise<SignInLink> {
    const endpoints = [request.spec.authorizeUrl(request.config), request.spec.tokenUrl(request.config)];
    if (!endpoints.every(isHttpUrl)) {
      throw new ValidationError([{ loc: ['config'], msg: "The source's OAuth authorization and token endpoints must be http or https URLs", type: 'url_parsing' }]);
    }
    const state = randomBytes(32).toString('base64url');
    const codeVerifier = request.spec.pkce ? randomBytes(48).toString('base64url') : null;
    const redirectUri = request.redirectUri ?? this.callbackAddress.url();
    const expiresAt = new Date(Date.now() + SIGN_IN_TTL_MS);
    const secrets: PendingSecrets = {
      codeVerifier,
      tokenUrl: request.spec.tokenUrl(request.config),
      client: request.client.kind === 'operator' ? { kind: 'operator' } : request.client,
    };
    await em.nativeDelete(OAuthAuthorization, { sourceConnection: request.connection.id });
    em.create(OAuthAuthorization, {
      organization: em.getReference(Organization, request.connection.organization.id),
      sourceConnection: em.getReference(SourceConnection, request.connection.id),
      stateHash: hashSecret(state),
      sealedSecrets: this.secretBox.seal(JSON.stringify(secrets)),
      redirectUri,
      redirectUrl: request.redirectUrl,
      syncOnCompletion: request.syncOnCompletion,
      expiresAt,
    });
    const authUrl = authorizeUrl(request.spec, request.config, { clientId: request.client.clientId, redirectUri, state, codeVerifier });
    return { authUrl, expiresAt, redirectUrl: request.redirectUrl };
  }

  /** The unused, unexpired sign-ins of these connections. */
  async pending(connectionIds: string[]): Promise<Map<string, PendingSignIn>> {
    if (connectionIds.length === 0) return new Map();
    const rows = await this.orm.em.fork().find(OAuthAuthorization, { sourceConnection: { $in: connectionIds }, usedAt: null, expiresAt: { $gt: new Date() } });
    return new Map(rows.map((row) => [row.sourceConnection.id, { expiresAt: row.expiresAt, redirectUrl: row.redirectUrl }]));
  }

  open(row: OAuthAuthorization): PendingSecrets {
    return pendingSecrets.parse(JSON.parse(this.secretBox.open(row.sealedSecrets)));
  }
}

/**
 * The provider's authorization request (RFC 6749 §4.1.1, with RFC 7636's S256 challenge): the
 * connector's authorize URL (its own query kept) with the client, redirect URI, scopes, state and
 * its extra parameters.
 */
export function authorizeUrl(spec: OAuth2Spec, config: Record<string, unknown>, request: { clientId: string; redirectUri: string; state: string; codeVerifier: string | null }): string {
  const url = new URL(spec.authorizeUrl(config));
  // The provider's extra parameters first: they never replace the request's own.
  const parameters: Record<string, string> = {
    ...spec.extraAuthorizeParameters,
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    state: request.state,
    ...(spec.scopes.length ? { scope: spec.scopes.join(spec.scopeSeparator ?? ' ') } : {}),
    ...(request.codeVerifier ? { code_challenge: createHash('sha256').update(request.codeVerifier).digest('base64url'), code_challenge_method: 'S256' } : {}),
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.toString();
}
