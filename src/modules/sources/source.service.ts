import type { AuthMethod, Connector } from '../../connectors/connector.js';
import { credentialsSchemaOf, describeSchema } from '../../connectors/contract/schemas.js';
import { NotFoundError } from '../../shared/errors.js';
import type { Source } from './source.types.js';

/** Which sources have an OAuth app the operator registered (their users need not bring their own). */
export interface OperatorOAuthAppDirectory {
  has(shortName: string): Promise<boolean>;
}

/** The service's OAuth callback address (OAuthCallbackAddress): the redirect URI OAuth apps are registered with. */
export interface OAuthRedirectAddress {
  url(): string;
}

/**
 * The catalog of source types: what each offers and needs, read from the connector plugins. What a
 * connector declares is described once (its schemas do not change while the process runs); only
 * whether the operator registered an app for it is read per request.
 */
export class SourceService {
  private readonly described = new Map<string, Omit<Source, 'requiresByoc'>>();

  constructor(
    private readonly connectors: ReadonlyMap<string, Connector>,
    private readonly operatorApps: OperatorOAuthAppDirectory | null = null,
    private readonly callbackAddress: OAuthRedirectAddress | null = null,
  ) {}

  async list(): Promise<Source[]> {
    const sources = await Promise.all([...this.connectors.values()].map((connector) => this.describe(connector)));
    return sources.sort((a, b) => a.shortName.localeCompare(b.shortName));
  }

  async get(shortName: string): Promise<Source> {
    return this.describe(this.connector(shortName));
  }

  connector(shortName: string): Connector {
    const connector = this.connectors.get(shortName);
    if (!connector) throw NotFoundError.of('Source', shortName);
    return connector;
  }

  private async describe(connector: Connector): Promise<Source> {
    let described = this.described.get(connector.shortName);
    if (!described) {
      const credentials = credentialsSchemaOf(connector);
      described = {
        shortName: connector.shortName,
        name: connector.name,
        description: connector.description,
        authMethods: authMethodsOf(connector),
        oauthType: oauthTypeOf(connector),
        oauthRedirectUri: null,
        authFields: credentials ? describeSchema(credentials) : null,
        configFields: describeSchema(connector.config),
        supportedAuthProviders: connector.supportedAuthProviders,
        supportsContinuous: connector.supportsContinuous,
        federatedSearch: connector.federatedSearch,
        labels: connector.labels,
        outputEntityDefinitions: connector.outputEntityDefinitions,
      };
      this.described.set(connector.shortName, described);
    }
    const oauth = connector.auth.kind === 'oauth2';
    return {
      ...described,
      // An OAuth source without an operator's app can only be signed in to with the caller's own client (or a token).
      requiresByoc: oauth && !(await this.operatorApps?.has(connector.shortName)),
      // What a user registers in their own OAuth app (BYOC): the address sign-ins send as redirect_uri (known once listening).
      oauthRedirectUri: oauth ? (this.callbackAddress?.url() ?? null) : null,
    };
  }
}

/**
 * The ways a connection of this source can authenticate: `direct` for sources without credentials,
 * with credential fields, or taking a pasted token; the OAuth methods for OAuth 2 sources.
 */
export function authMethodsOf(connector: Connector): AuthMethod[] {
  const { auth } = connector;
  if (auth.kind !== 'oauth2') return ['direct'];
  return [...(auth.pasted ? (['direct'] as const) : []), 'oauth_browser', 'oauth_byoc', 'oauth_token'];
}

const OAUTH_TYPES = { none: 'access_only', refresh: 'with_refresh', rotating: 'with_rotating_refresh' } as const;

/** The catalog's `oauth_type`: what the provider's tokens are like; null for sources without OAuth. */
export function oauthTypeOf(connector: Connector): (typeof OAUTH_TYPES)[keyof typeof OAUTH_TYPES] | null {
  return connector.auth.kind === 'oauth2' ? OAUTH_TYPES[connector.auth.oauth.refresh] : null;
}
