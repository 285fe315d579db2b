import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { SourceConfigError, type ConnectorEnvironment } from '../connector.js';
import { bareHost } from '../../shared/target-guard.js';
import type { GitAccess } from './git-cli.js';
import { resolveLocalRepository } from './local-repository.js';

/** Where to clone from: what git is given, plus the base of the entities' web links. */
export interface Remote {
  cloneFrom: string;
  /** `https://host/owner/repo` (for `/blob/…` and `/commit/…` links) or the file URL of a local repository. */
  webBase: string;
  local: boolean;
  /** Token auth applies (HTTPS, or HTTP to the loopback interface). */
  tokenAllowed: boolean;
  /** See GitAccess. */
  protocol: GitAccess['protocol'];
  pinnedAddresses: string | null;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const DEFAULT_USERNAME = 'x-access-token';

/** The repository a connection's `url` names, refused when the network policy or the allowed folders do not let it be read. */
export async function resolveRemote(url: string, environment: ConnectorEnvironment): Promise<Remote> {
  if (!url) throw new SourceConfigError('url', 'A repository URL or local path is required');
  if (url.startsWith('-')) throw new SourceConfigError('url', 'The repository URL cannot start with "-"');
  let localPath: string;
  if (path.isAbsolute(url)) localPath = url;
  else {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new SourceConfigError('url', 'The repository must be an https:// or file:// URL or an absolute local path');
    }
    if (parsed.protocol === 'https:' || parsed.protocol === 'http:') {
      if (parsed.username || parsed.password) throw new SourceConfigError('url', 'Put credentials in the connection\'s authentication (token), not in the URL');
      const pinnedAddresses = await checkedAddresses(parsed, environment);
      const webBase = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '').replace(/\.git$/, '')}`;
      return {
        cloneFrom: parsed.href,
        webBase,
        local: false,
        tokenAllowed: parsed.protocol === 'https:' || LOOPBACK_HOSTS.has(parsed.hostname),
        protocol: parsed.protocol === 'https:' ? 'https' : 'http',
        pinnedAddresses,
      };
    }
    if (parsed.protocol !== 'file:') throw new SourceConfigError('url', `Unsupported repository URL scheme "${parsed.protocol}" (use https://, file:// or a local path)`);
    localPath = fileURLToPath(parsed);
  }
  const { folder, gitDir } = await resolveLocalRepository(localPath, environment.localFolderRoots);
  return { cloneFrom: gitDir, webBase: pathToFileURL(folder).href, local: true, tokenAllowed: false, protocol: 'file', pinnedAddresses: null };
}

/**
 * The web sources' network policy for the repository's host (link-local never, intranet per
 * CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS), applied to every address its name resolves to; the
 * result pins git to those addresses (curl's `host:port:address,…`), null for an address literal.
 */
async function checkedAddresses(url: URL, environment: ConnectorEnvironment): Promise<string | null> {
  const host = bareHost(url.hostname);
  const addresses = isIP(host) ? [host] : await lookup(host, { all: true }).then((entries) => entries.map((entry) => entry.address), () => []);
  if (addresses.length === 0) throw new SourceConfigError('url', `Cannot read the repository: ${host} does not resolve`);
  for (const address of addresses) {
    const refused = await environment.webClient.hostProblem(address);
    if (refused) throw new SourceConfigError('url', `Cannot read the repository${isIP(host) ? '' : ` (${host})`}: ${refused}`);
  }
  if (isIP(host)) return null;
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${host}:${port}:${addresses.map((address) => (isIP(address) === 6 ? `[${address}]` : address)).join(',')}`;
}

/** What git is allowed for this remote, with the connection's token (HTTP Basic) when it has one. */
/** What a private repository over HTTPS is read with: a token, sent as HTTP Basic auth with a user name. */
export const gitCredentials = z.strictObject({
  token: z
    .string()
    .optional()
    .meta({ title: 'Access token', description: 'Personal access token for a private repository over HTTPS (sent as HTTP Basic auth). Leave empty for public and local repositories.', secret: true }),
  username: z
    .string()
    .optional()
    .meta({ title: 'Username', description: `User name sent with the token (default "${DEFAULT_USERNAME}", which GitHub accepts; GitLab accepts any name with a personal access token).` }),
});

export type GitCredentials = z.infer<typeof gitCredentials>;

export function gitAccess(remote: Remote, credentials: GitCredentials | null, timeoutMs: number, signal: AbortSignal): GitAccess {
  return { protocol: remote.protocol, authorization: authorization(credentials, remote), pinnedAddresses: remote.pinnedAddresses, timeoutMs, signal };
}

function authorization(credentials: GitCredentials | null, remote: Remote): GitAccess['authorization'] {
  const token = credentials?.token || null;
  if (!token) return null;
  if (!remote.tokenAllowed) throw new SourceConfigError('url', 'A token is only sent over https:// (or to a repository on this machine\'s loopback interface)');
  const username = credentials?.username || DEFAULT_USERNAME;
  return { url: remote.cloneFrom, header: `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}` };
}
