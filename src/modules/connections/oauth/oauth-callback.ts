import { runRefusal } from '../../../connectors/connector.js';
import { TemporarilyUnavailableError } from '../../../connectors/contract/errors.js';
import type { Orm } from '../../../platform/db/database.js';
import type { EventBus } from '../../../platform/events/event-bus.js';
import type { Logger } from '../../../platform/logger.js';
import { hashSecret, type SecretBox } from '../../../platform/secrets/secrets.js';
import { ConflictError } from '../../../shared/errors.js';
import type { SourceService } from '../../sources/source.service.js';
import type { SyncService } from '../../sync/sync.service.js';
import { recordConnectionEvent } from '../connection-events.js';
import { SourceConnection } from '../source-connection.entity.js';
import { OAuthAuthorization } from './oauth-authorization.entity.js';
import type { OperatorOAuthApps } from './operator-apps.js';
import type { OAuthSignIns } from './sign-in.js';
import type { OAuthCredentials } from './stored-credentials.js';
import { requestTokens, TokenRequestRefusedError } from './token-endpoint.js';

/** What the provider sent the browser back with (RFC 6749 §4.1.2 and §4.1.2.1). */
export interface CallbackQuery {
  state?: unknown;
  code?: unknown;
  error?: unknown;
}

/**
 * Where the browser goes next: the caller's `redirect_url` with the outcome in its query, or, for a
 * sign-in without one (or a state that names none), a page of the service's own.
 */
export type CallbackOutcome = { redirect: string } | { page: { status: number; title: string; message: string } };

/** Why a sign-in failed, as `error=` tells the caller's page. */
type SignInError = 'invalid_state' | 'expired' | 'already_used' | 'invalid_request' | 'access_denied' | 'provider_error' | 'config_changed' | 'token_exchange_refused' | 'provider_unavailable';

const MESSAGES: Record<SignInError, string> = {
  invalid_state: 'This sign-in link is not known: it may have been replaced by a newer one, or its connection deleted.',
  expired: 'This sign-in link has expired: ask for a new one.',
  already_used: 'This sign-in link was already used: ask for a new one.',
  invalid_request: 'The provider sent the browser back without an authorization code.',
  access_denied: 'Access was denied at the provider.',
  provider_error: 'The provider refused the sign-in.',
  config_changed: "The connection's server settings changed after this sign-in link was made: ask for a new one.",
  token_exchange_refused: 'The provider refused to exchange the authorization code for tokens.',
  provider_unavailable: 'The provider could not be reached to finish the sign-in: try again.',
};

export interface OAuthCallbackDependencies {
  orm: Orm;
  secretBox: SecretBox;
  sources: SourceService;
  signIns: OAuthSignIns;
  operatorApps: OperatorOAuthApps;
  events: EventBus;
  sync: SyncService;
  allowPrivateNetworks: boolean;
  logger: Logger;
}

/**
 * The end of a browser sign-in (GET /oauth/callback): the `state` alone authenticates the request,
 * once. It exchanges the code at the provider's token endpoint, seals the tokens as the connection's
 * credentials, marks it authenticated, fires `source_connection.auth_completed`, starts the first sync
 * when asked, and sends the browser on with the outcome. Nothing secret reaches the page, the
 * redirect or the logs.
 */
export class OAuthCallback {
  constructor(private readonly deps: OAuthCallbackDependencies) {}

  async complete(query: CallbackQuery): Promise<CallbackOutcome> {
    const state = typeof query.state === 'string' && query.state.length <= 512 ? query.state : null;
    const em = this.deps.orm.em.fork();
    const signIn = state ? await em.findOne(OAuthAuthorization, { stateHash: hashSecret(state) }) : null;
    if (!signIn) return failed(null, null, 'invalid_state', 400);
    const connectionId = signIn.sourceConnection.id;
    // Taken at most once, whatever happens next: a replayed callback finds it used.
    const taken = await em.nativeUpdate(OAuthAuthorization, { id: signIn.id, usedAt: null }, { usedAt: new Date() });
    if (taken === 0) return failed(signIn.redirectUrl, connectionId, 'already_used', 400);
    if (signIn.expiresAt.getTime() <= Date.now()) return failed(signIn.redirectUrl, connectionId, 'expired', 400);
    if (query.error !== undefined) {
      const error: SignInError = query.error === 'access_denied' ? 'access_denied' : 'provider_error';
      return failed(signIn.redirectUrl, connectionId, error, 400);
    }
    if (typeof query.code !== 'string' || query.code === '') return failed(signIn.redirectUrl, connectionId, 'invalid_request', 400);

    const connection = await em.findOneOrFail(SourceConnection, { id: connectionId }, { populate: ['collection'] });
    const connector = this.deps.sources.connector(connection.shortName);
    if (connector.auth.kind !== 'oauth2') return failed(signIn.redirectUrl, connectionId, 'provider_error', 400);
    const secrets = this.deps.signIns.open(signIn);
    // The code and the client's secret go only to the token endpoint the sign-in was made for.
    const tokenUrl = connector.auth.oauth.tokenUrl(connection.config);
    if (secrets.tokenUrl !== tokenUrl) return failed(signIn.redirectUrl, connectionId, 'config_changed', 400);
    const client = secrets.client.kind === 'connection' ? secrets.client : await this.deps.operatorApps.clientFor(connection.shortName, tokenUrl);
    if (!client) return failed(signIn.redirectUrl, connectionId, 'token_exchange_refused', 400);

    let credentials: OAuthCredentials;
    try {
      const tokens = await requestTokens({
        spec: connector.auth.oauth,
        config: connection.config,
        client: { clientId: client.clientId, clientSecret: client.clientSecret },
        grant: { type: 'authorization_code', code: query.code, redirectUri: signIn.redirectUri, ...(secrets.codeVerifier ? { codeVerifier: secrets.codeVerifier } : {}) },
        allowPrivateNetworks: this.deps.allowPrivateNetworks,
      });
      credentials = {
        kind: 'oauth',
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        expiresAt: tokens.expiresAt?.toISOString() ?? null,
        scope: tokens.scope,
        client: secrets.client,
      };
    } catch (error) {
      if (error instanceof TokenRequestRefusedError) return failed(signIn.redirectUrl, connectionId, 'token_exchange_refused', 400);
      if (error instanceof TemporarilyUnavailableError) return failed(signIn.redirectUrl, connectionId, 'provider_unavailable', 502);
      throw error;
    }

    const firstSignIn = connection.authenticatedAt === null;
    connection.sealedCredentials = this.deps.secretBox.seal(JSON.stringify(credentials));
    // Signed in through the browser now, whatever it was before (an `oauth_token` signing in again).
    connection.authMethod = secrets.client.kind === 'connection' ? 'oauth_byoc' : 'oauth_browser';
    connection.authenticated = true;
    connection.authenticatedAt = new Date();
    connection.modifiedAt = new Date();
    const event = recordConnectionEvent(this.deps.events, em, 'source_connection.auth_completed', connection, connection.collection.readableId);
    await em.flush();
    await this.deps.events.publish({ ...event, subject: { id: connection.id } });
    this.deps.logger.info({ sourceConnectionId: connection.id, organizationId: connection.organization.id }, 'OAuth sign-in completed');
    if (signIn.syncOnCompletion && !runRefusal(connector, connection.config)) {
      await this.deps.sync.start(connection, { trigger: firstSignIn ? 'create' : 'manual', forceFullSync: false }).catch((error: unknown) => {
        // Signed in all the same: a sync already running keeps going, and the next one uses the new tokens.
        if (!(error instanceof ConflictError)) throw error;
      });
    }
    return signIn.redirectUrl
      ? { redirect: withOutcome(signIn.redirectUrl, { status: 'success', source_connection_id: connection.id }) }
      : { page: { status: 200, title: 'Connected', message: `${connector.name} is connected. You can close this window.` } };
  }
}

function failed(redirectUrl: string | null, connectionId: string | null, error: SignInError, status: number): CallbackOutcome {
  if (redirectUrl) return { redirect: withOutcome(redirectUrl, { status: 'error', error, error_description: MESSAGES[error], ...(connectionId ? { source_connection_id: connectionId } : {}) }) };
  return { page: { status, title: 'Sign-in failed', message: MESSAGES[error] } };
}

function withOutcome(redirectUrl: string, outcome: Record<string, string>): string {
  const url = new URL(redirectUrl);
  for (const [name, value] of Object.entries(outcome)) url.searchParams.set(name, value);
  return url.toString();
}
