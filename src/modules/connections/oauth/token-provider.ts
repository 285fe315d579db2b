/**
 * The access token of an OAuth connection (SyncContext.tokens): read from the connection's sealed
 * OAuthCredentials, refreshed ahead of expiry or after the provider refused it, one refresh at a time
 * per connection across processes, the new tokens persisted before anyone uses them.
 */
import { LockMode } from '@mikro-orm/core';
import type { Connector } from '../../../connectors/connector.js';
import { CredentialsRejectedError } from '../../../connectors/contract/errors.js';
import type { TokenProvider } from '../../../connectors/contract/source-http.js';
import type { Orm } from '../../../platform/db/database.js';
import type { Logger } from '../../../platform/logger.js';
import type { SecretBox } from '../../../platform/secrets/secrets.js';
import { SourceConnection } from '../source-connection.entity.js';
import { isOAuthCredentials, type OAuthCredentials } from './stored-credentials.js';
import { type OAuthClient, requestTokens, TokenRequestRefusedError } from './token-endpoint.js';

export interface TokenProviderOptions {
  orm: Orm;
  secretBox: SecretBox;
  connectionId: string;
  connector: Connector;
  config: unknown;
  /** The operator's registered apps (OperatorOAuthApps), for tokens obtained with one. */
  operatorApps: { clientFor(shortName: string, tokenUrl: string): Promise<OAuthClient | null> };
  allowPrivateNetworks: boolean;
  logger: Logger;
}

/** A token this close to its expiry is refreshed before use: a request sent with it could outlive it. */
const REFRESH_AHEAD_MS = 60_000;

/** Why the token is being refreshed: it is about to expire, or the provider refused this one. */
type RefreshReason = { kind: 'expiring' } | { kind: 'rejected'; token: string };

const expiresSoon = (credentials: OAuthCredentials) => credentials.expiresAt !== null && Date.parse(credentials.expiresAt) - Date.now() < REFRESH_AHEAD_MS;

class ConnectionTokens implements TokenProvider {
  private current: OAuthCredentials | null = null;
  /** The refresh under way in this process: concurrent requests of a run wait for it instead of starting their own. */
  private refreshing: Promise<OAuthCredentials> | null = null;

  constructor(private readonly options: TokenProviderOptions) {}

  async accessToken(): Promise<string> {
    this.current ??= await this.read();
    if (expiresSoon(this.current)) this.current = await this.refresh({ kind: 'expiring' });
    return this.current.accessToken;
  }

  async refreshAfterRejection(rejected: string): Promise<string> {
    this.current = await this.refresh({ kind: 'rejected', token: rejected });
    return this.current.accessToken;
  }

  private refresh(reason: RefreshReason): Promise<OAuthCredentials> {
    this.refreshing ??= this.refreshLocked(reason).finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async read(): Promise<OAuthCredentials> {
    const row = await this.options.orm.em.fork().findOne(SourceConnection, { id: this.options.connectionId }, { fields: ['sealedCredentials'] });
    return this.opened(row);
  }

  private opened(row: Pick<SourceConnection, 'sealedCredentials'> | null): OAuthCredentials {
    if (!row) throw new CredentialsRejectedError('The source connection no longer exists');
    const stored: unknown = row.sealedCredentials ? JSON.parse(this.options.secretBox.open(row.sealedCredentials)) : null;
    if (!isOAuthCredentials(stored)) throw new CredentialsRejectedError('The source connection has no OAuth tokens: sign in again');
    return stored;
  }

  /**
   * Refreshes under the connection row's lock (`SELECT … FOR UPDATE`), so that processes take turns:
   * the credentials are read again under the lock, and when another process refreshed meanwhile its
   * tokens are used instead of refreshing twice (with a rotating provider, a second refresh with the
   * same refresh token would be refused). The new tokens are committed before they are returned.
   */
  private async refreshLocked(reason: RefreshReason): Promise<OAuthCredentials> {
    const { orm, secretBox, connectionId, logger, connector, config, operatorApps } = this.options;
    // The operator's app is looked up only for tokens it obtained, and before the lock is taken: a
    // query outside the transaction while it holds the database's only connection (embedded PGlite)
    // would wait for it forever. The tokens' client is read before the lock too: it changes only with
    // a new sign-in, whose fresh tokens the check under the lock then uses without refreshing.
    const client = (this.current ?? (await this.read())).client;
    const operatorApp = client.kind === 'operator' && connector.auth.kind === 'oauth2' ? await operatorApps.clientFor(connector.shortName, connector.auth.oauth.tokenUrl(config)) : null;
    return orm.em.fork().transactional(async (em) => {
      const row = await em.findOne(SourceConnection, { id: connectionId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const stored = this.opened(row);
      const replaced = reason.kind === 'rejected' ? stored.accessToken !== reason.token : !expiresSoon(stored);
      if (replaced) return stored;
      const refreshed = await this.requestRefresh(stored, operatorApp);
      row!.sealedCredentials = secretBox.seal(JSON.stringify(refreshed));
      await em.flush();
      logger.info({ sourceConnectionId: connectionId, reason: reason.kind, rotated: refreshed.refreshToken !== stored.refreshToken }, 'OAuth tokens refreshed');
      return refreshed;
    });
  }

  private async requestRefresh(stored: OAuthCredentials, operatorApp: OAuthClient | null): Promise<OAuthCredentials> {
    const { connector, config, allowPrivateNetworks } = this.options;
    if (connector.auth.kind !== 'oauth2') throw new CredentialsRejectedError(`The ${connector.name} source does not sign in with OAuth`);
    if (!stored.refreshToken) throw new CredentialsRejectedError(`${connector.name} refused the access token, and there is no refresh token to renew it with: sign in again`);
    const client = clientOf(stored, operatorApp);
    if (!client) throw new CredentialsRejectedError(`The access token cannot be renewed: the OAuth client that obtained it is not available (sign in again)`);
    try {
      const tokens = await requestTokens({ spec: connector.auth.oauth, config, client, grant: { type: 'refresh_token', refreshToken: stored.refreshToken }, allowPrivateNetworks });
      return {
        ...stored,
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken ?? stored.refreshToken,
        expiresAt: tokens.expiresAt?.toISOString() ?? null,
        scope: tokens.scope ?? stored.scope,
      };
    } catch (error) {
      if (error instanceof TokenRequestRefusedError) throw new CredentialsRejectedError(`${error.message}: sign in again`);
      throw error;
    }
  }
}

/** The client that refreshes: the connection's own, or the operator's app (null when none serves the connection's token endpoint). */
function clientOf(stored: OAuthCredentials, operatorApp: OAuthClient | null): OAuthClient | null {
  const { client } = stored;
  if (client.kind === 'connection') return { clientId: client.clientId, clientSecret: client.clientSecret };
  if (client.kind === 'operator') return operatorApp;
  return null;
}

/** The token provider of one connection (one per run or check). */
export function createTokenProvider(options: TokenProviderOptions): TokenProvider {
  return new ConnectionTokens(options);
}
