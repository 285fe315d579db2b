import { CredentialsRejectedError, SourceRateLimitedError, SourceConfigError, SourceHttpError, SourceUnreachableError, TemporarilyUnavailableError, type Connector, type ConnectorEnvironment } from '../../connectors/connector.js';
import { createSourceHttpClient } from '../../connectors/contract/http-client.js';
import type { TokenProvider } from '../../connectors/contract/source-http.js';
import type { Logger } from '../../platform/logger.js';
import { ValidationError } from '../../shared/errors.js';

/** The longest a create or update waits for the source to answer its check. */
const CHECK_TIMEOUT_MS = 120_000;

/**
 * Checks config and credentials with the source itself before a connection is created or changed
 * (Connector.validate), through the connection's own HTTP client; what the source refuses becomes a
 * 422 on `config.<field>` or `authentication.credentials`.
 */
export class SourceChecks {
  constructor(
    private readonly environment: ConnectorEnvironment,
    private readonly allowPrivateNetworks: boolean,
    private readonly logger: Logger,
  ) {}

  async check(connector: Connector, config: unknown, credentials: unknown, tokens: TokenProvider | null): Promise<void> {
    const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    const http = createSourceHttpClient({ connector, config, credentials, tokens, allowPrivateNetworks: this.allowPrivateNetworks, signal, logger: this.logger });
    try {
      await connector.validate({ config, credentials, http, tokens, signal, logger: this.logger }, this.environment);
    } catch (error) {
      if (error instanceof SourceConfigError) throw new ValidationError([{ loc: ['config', error.field], msg: error.message, type: 'value_error' }]);
      if (error instanceof CredentialsRejectedError) throw new ValidationError([{ loc: ['authentication', 'credentials'], msg: error.message, type: 'credentials_rejected' }]);
      if (error instanceof SourceUnreachableError) throw new ValidationError([{ loc: ['authentication', 'credentials'], msg: error.message, type: 'source_unreachable' }]);
      if (error instanceof SourceRateLimitedError || error instanceof TemporarilyUnavailableError) {
        throw new ValidationError([{ loc: ['authentication', 'credentials'], msg: `The source could not be checked now: ${error.message}`, type: 'source_unavailable' }]);
      }
      if (error instanceof SourceHttpError) throw new ValidationError([{ loc: ['config'], msg: `The source answered the check with ${error.message}`, type: 'source_error' }]);
      throw error;
    }
  }
}

/**
 * The token a caller gave (`oauth_token`), for checking it before the connection exists: nothing to
 * refresh it with yet, so a rejection is final.
 */
export function givenToken(accessToken: string): TokenProvider {
  return {
    accessToken: async () => accessToken,
    refreshAfterRejection: async () => {
      throw new CredentialsRejectedError('The source refused the access token');
    },
  };
}
