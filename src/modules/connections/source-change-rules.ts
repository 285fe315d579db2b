import type { Connector } from '../../connectors/connector.js';
import { credentialsSchemaOf, describeSchema } from '../../connectors/contract/schemas.js';
import { ForbiddenError, type ValidationIssue } from '../../shared/errors.js';
import { roleAtLeast, type Role } from '../organizations/organization.entity.js';
import type { Principal } from '../organizations/principal.js';
import { isOAuthCredentials } from './oauth/stored-credentials.js';

/**
 * Who may change what a connection reads and with which credentials. A connection's config and
 * credentials decide where its stored secrets are sent and what data they unlock, so changing them
 * (a new sign-in included) takes the admin role or higher (API keys act as admin); members may
 * rename, describe, schedule, run and cancel. Creating a connection stays open to members: they bring
 * their own credentials.
 */
const SOURCE_CHANGE_ROLE: Role = 'admin';

/** Refuses a member's change of config or credentials, before anything is validated or sent. */
export function authorizeSourceChange(principal: Principal, change: { config?: unknown; credentials?: unknown }): void {
  if (change.config == null && change.credentials == null) return;
  if (!roleAtLeast(principal.role, SOURCE_CHANGE_ROLE)) {
    throw new ForbiddenError(`Changing a source connection's config or credentials needs the ${SOURCE_CHANGE_ROLE} role or higher`);
  }
}

/**
 * Stored secrets are bound to the targets they were given for (Connector.credentialTargets; for
 * OAuth tokens also the token endpoint, which receives the refresh token and client secret). A config
 * change that would send them to another target (a repository on another host, another GitLab…)
 * needs the credentials again in the same request, so that whoever redirects them proves they hold
 * them; OAuth tokens cannot be given again that way: such a change needs a new connection. Refused
 * here, before validation sends anything. The issue, or null when the secrets stay where they were.
 */
export function credentialTargetIssue(connector: Connector, stored: { config: Record<string, unknown>; credentials: unknown }, newConfig: Record<string, unknown>): ValidationIssue | null {
  if (!holdsSecret(connector, stored.credentials)) return null;
  const oauth = isOAuthCredentials(stored.credentials);
  const targetsOf = (config: Record<string, unknown>) => (oauth ? oauthTargets(connector, config) : connector.credentialTargets(config, stored.credentials));
  const given = new Set(targetsOf(stored.config));
  const unbound = targetsOf(newConfig).filter((target) => !given.has(target));
  if (unbound.length === 0) return null;
  const remedy = oauth ? 'create a new connection for the new target and sign in there' : 'send the credentials for the new target in the same request';
  return {
    loc: ['authentication', 'credentials'],
    msg: `This change would send the connection's stored credentials to ${unbound.join(', ')}, which they were not given for: ${remedy}`,
    type: 'credentials_required',
  };
}

/** Where an OAuth connection's token goes (the API origins) and its refresh token and client secret (the token endpoint). */
function oauthTargets(connector: Connector, config: Record<string, unknown>): string[] {
  const tokenEndpoint = connector.auth.kind === 'oauth2' ? [new URL(connector.auth.oauth.tokenUrl(config)).origin] : [];
  return [...connector.credentialTargets(config, null), ...tokenEndpoint];
}

/**
 * OAuth tokens are secrets; of direct credentials, a value is a secret unless the connector declares
 * its field as not secret (a SQL host, a git username).
 */
function holdsSecret(connector: Connector, credentials: unknown): boolean {
  if (isOAuthCredentials(credentials)) return true;
  if (typeof credentials !== 'object' || credentials === null) return false;
  const schema = credentialsSchemaOf(connector);
  const plain = new Set(schema ? describeSchema(schema).fields.filter((field) => !field.isSecret).map((field) => field.name) : []);
  return Object.entries(credentials).some(([name, value]) => !plain.has(name) && value != null && value !== '');
}
