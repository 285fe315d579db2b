/**
 * What a run hands its source, read from the connection with the typed contract: the parsed config,
 * the credentials or the OAuth token provider, the cursor to continue from (a checkpoint of an
 * unfinished run first), and the connection's HTTP client.
 */
import type { Connector, SyncContext } from '../../connectors/connector.js';
import { CredentialsRejectedError } from '../../connectors/contract/errors.js';
import { createSourceHttpClient } from '../../connectors/contract/http-client.js';
import { parseConfig, parseCredentials, parseCursor } from '../../connectors/contract/schemas.js';
import type { Orm } from '../../platform/db/database.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import type { TokenProviderOptions } from '../connections/oauth/token-provider.js';
import { createTokenProvider } from '../connections/oauth/token-provider.js';
import type { SourceConnection } from '../connections/source-connection.entity.js';

export interface RunContextDependencies {
  orm: Orm;
  secretBox: SecretBox;
  operatorApps: TokenProviderOptions['operatorApps'];
  /** The operator's policy for sources (CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
  logger: Logger;
}

export type RunContext = Pick<SyncContext, 'config' | 'credentials' | 'tokens' | 'cursor' | 'resuming' | 'http'>;

const listed = (issues: { loc: (string | number)[] }[]) => [...new Set(issues.map((issue) => issue.loc.join('.')))].join(', ');

/**
 * Builds the context of a run of `connection`. `loadCursor` false (force_full_sync, cursor.skip_load)
 * starts from nothing; otherwise a stored checkpoint resumes the unfinished run it came from, else the
 * last finished run's cursor continues an incremental source. A stored cursor the connector no longer
 * parses means a full sync.
 */
export function runContext(deps: RunContextDependencies, connector: Connector, connection: SourceConnection, options: { loadCursor: boolean; signal: AbortSignal }): RunContext {
  const { logger } = deps;
  const parsedConfig = parseConfig(connector, connection.config);
  if (parsedConfig.issues.length) throw new Error(`The connection's config no longer fits the ${connector.name} source (${listed(parsedConfig.issues)}): update it`);
  const config = parsedConfig.value;
  let credentials: unknown = null;
  let tokens: SyncContext['tokens'] = null;
  if (connection.authMethod === 'direct') {
    const stored: unknown = connection.sealedCredentials ? JSON.parse(deps.secretBox.open(connection.sealedCredentials)) : {};
    const parsed = parseCredentials(connector, stored);
    // Only where the problem is: the messages could quote what was stored.
    if (parsed.issues.length) throw new CredentialsRejectedError(`The stored credentials no longer fit the ${connector.name} source (${listed(parsed.issues)}): give them again`);
    credentials = parsed.value;
  } else {
    tokens = createTokenProvider({ ...deps, connectionId: connection.id, connector, config });
  }
  let cursor: unknown = null;
  let resuming = false;
  if (options.loadCursor && connection.resumeCursor !== null) {
    cursor = parseCursor(connector, connection.resumeCursor);
    resuming = cursor !== null;
    if (!resuming) logger.warn({ sourceConnectionId: connection.id }, 'the checkpoint of the unfinished run no longer parses: not resuming from it');
  }
  if (options.loadCursor && !resuming && connector.supportsContinuous && connection.cursor !== null) {
    cursor = parseCursor(connector, connection.cursor);
    if (cursor === null) logger.warn({ sourceConnectionId: connection.id }, 'the stored cursor no longer parses: full sync');
  }
  const http = createSourceHttpClient({ connector, config, credentials, tokens, allowPrivateNetworks: deps.allowPrivateNetworks, signal: options.signal, logger });
  return { config, credentials, tokens, cursor, resuming, http };
}
