/**
 * HTTP GET for the sources that read the web themselves (web, rss; git checks hosts with it): the `Catchment` user agent, a timeout
 * per request on top of the job's cancellation, a cap on the body, conditional requests, and the
 * operator's network policy checked on every connection (redirects included).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { fetch, type Agent, type Response } from 'undici';
import { bareHost, sourceAddressProblem } from '../../shared/target-guard.js';
import { readCappedBody } from './capped-body.js';
import { createGuardedAgent, networkReason } from './guarded-agent.js';

export const USER_AGENT = 'Catchment';

/**
 * The HTTP client of web sources, one per process: its connections only reach addresses the policy
 * allows (see `sourceAddressProblem`), checked when a socket connects, so neither a redirect nor a
 * DNS answer that changes after validation leads elsewhere.
 */
export class WebClient {
  private readonly agent: Agent;
  private readonly problemOf: (address: string) => string | null;

  constructor(policy: { allowPrivateNetworks: boolean }) {
    this.problemOf = (address: string) => sourceAddressProblem(address, policy.allowPrivateNetworks);
    this.agent = createGuardedAgent(policy.allowPrivateNetworks);
  }

  get(url: string, init: { headers: Record<string, string>; signal: AbortSignal }) {
    return fetch(url, { ...init, redirect: 'follow', dispatcher: this.agent });
  }

  /**
   * For sources that connect through another program (the git CLI): why the policy refuses `hostname`,
   * checked once before the program runs, or null. Weaker than this client's own per-connection check
   * (a DNS answer may change afterwards), but it keeps plain mistakes and metadata endpoints out.
   */
  async hostProblem(hostname: string): Promise<string | null> {
    const host = bareHost(hostname);
    const addresses = isIP(host) ? [host] : await lookup(host, { all: true }).then((entries) => entries.map((entry) => entry.address), () => []);
    for (const address of addresses) {
      const problem = this.problemOf(address);
      if (problem) return isIP(host) ? `refused: ${problem}` : `refused: ${hostname} resolves to ${problem}`;
    }
    return null;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

export interface FetchOptions {
  client: WebClient;
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes: number;
  /** Validators of the copy read last time: a 304 answer means it is unchanged. */
  etag?: string | null;
  lastModified?: string | null;
  accept?: string;
}

export interface FetchedResource {
  /** Where the body came from, after redirects. */
  url: string;
  status: number;
  contentType: string;
  etag: string | null;
  lastModified: string | null;
  /** Empty for 304 and for bodies over `maxBytes` (then `truncated`). */
  body: Buffer;
  truncated: boolean;
}

/** A request that got no HTTP answer (DNS, refused connection, TLS, timeout), with a reason fit for a job's error. */
export class FetchFailedError extends Error {}

async function readCapped(response: Response, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const body = await readCappedBody(response, maxBytes);
  return body === null ? { body: Buffer.alloc(0), truncated: true } : { body, truncated: false };
}

/** A pooled keep-alive connection the server had closed: worth one more try on a fresh connection. */
const STALE_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);

export async function fetchResource(url: string, options: FetchOptions, attempt = 1): Promise<FetchedResource> {
  options.signal.throwIfAborted();
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: options.accept ?? '*/*' };
  if (options.etag) headers['if-none-match'] = options.etag;
  if (options.lastModified) headers['if-modified-since'] = options.lastModified;
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
  try {
    const response = await options.client.get(url, { headers, signal });
    const { body, truncated } = response.status === 304 ? { body: Buffer.alloc(0), truncated: false } : await readCapped(response, options.maxBytes);
    return {
      url: response.url || url,
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      etag: response.headers.get('etag'),
      lastModified: response.headers.get('last-modified'),
      body,
      truncated,
    };
  } catch (error) {
    options.signal.throwIfAborted();
    if (attempt === 1 && STALE_CONNECTION.has((error as { cause?: { code?: string } }).cause?.code ?? '')) return fetchResource(url, options, 2);
    throw new FetchFailedError(`Cannot fetch ${url}: ${networkReason(error, options.timeoutMs)}`);
  }
}

/** An http(s) URL without its fragment, or null when the text is not one (or carries user info). */
export function normalizeUrl(text: string, base?: string): string | null {
  try {
    const url = new URL(text, base);
    // User info in a URL is a credential: such links are not followed (nor stored as ids).
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return null;
    url.hash = '';
    return url.href;
  } catch {
    return null;
  }
}
