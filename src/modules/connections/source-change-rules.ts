import type { Connector } from '../../connectors/connector.js';
import { ForbiddenError, type ValidationIssue } from '../../shared/errors.js';
import { roleAtLeast, type Role } from '../organizations/organization.entity.js';
import type { Principal } from '../organizations/principal.js';

/**
 * Who may change what a connection reads and with which credentials. A connection's config and
 * credentials decide where its stored secrets are sent and what data they unlock, so changing them
 * takes the admin role or higher (API keys act as admin); members may rename, describe, schedule,
 * run and cancel. Creating a connection stays open to members: they bring their own credentials.
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
 * Stored secrets are bound to the targets they were given for (Connector.credentialTargets). A
 * config change that would send them to another target (a repository on another host, a crawl of
 * another origin…) needs the credentials again in the same request, so that whoever redirects
 * them proves they hold them; otherwise it is refused here, before validation sends anything.
 * The issue, or null when the change keeps the secrets where they were or there are none.
 */
export function credentialTargetIssue(
  connector: Connector,
  stored: { config: Record<string, unknown>; credentials: Record<string, unknown> | null },
  newConfig: Record<string, unknown>,
): ValidationIssue | null {
  if (!stored.credentials || !holdsSecret(connector, stored.credentials)) return null;
  const given = new Set(connector.credentialTargets(stored.config, stored.credentials));
  const unbound = connector.credentialTargets(newConfig, stored.credentials).filter((target) => !given.has(target));
  if (unbound.length === 0) return null;
  return {
    loc: ['authentication', 'credentials'],
    msg: `This change would send the connection's stored credentials to ${unbound.join(', ')}, which they were not given for: send the credentials for the new target in the same request`,
    type: 'credentials_required',
  };
}

/**
 * A stored value is a secret unless the connector declares its field as not secret (a SQL host, a
 * git username); values of fields it does not declare (OAuth tokens) count as secrets.
 */
function holdsSecret(connector: Connector, credentials: Record<string, unknown>): boolean {
  const plain = new Set((connector.authFields ?? []).filter((field) => !field.isSecret).map((field) => field.name));
  return Object.entries(credentials).some(([name, value]) => !plain.has(name) && value != null && value !== '');
}
