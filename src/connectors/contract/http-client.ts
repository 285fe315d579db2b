/**
 * The connection's HTTP client (SyncContext.http; the behaviour is documented on SourceHttpClient):
 * the sources' address guard, the token attached only to the connection's credential targets, one
 * refresh on a 401, retries with backoff on rate limits, server errors and network failures, pacing
 * at the connector's declared rate, capped bodies and the job's cancellation.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { fetch, type Response } from 'undici';
import type { Logger } from '../../platform/logger.js';
import { USER_AGENT } from '../../platform/http/web-client.js';
import type { Connector } from '../connector.js';
import { CredentialsRejectedError, SourceRateLimitedError, SourceHttpError, SourceUnreachableError, TemporarilyUnavailableError } from './errors.js';
import { guardedSourceAgent, networkReason, refusalOf } from '../../platform/http/guarded-agent.js';
import { readCappedBody } from '../../platform/http/capped-body.js';
import { retryAfterMs } from '../../platform/http/retry-after.js';
import { backoffMs, isRateLimited, RequestPacer, serverWaitMs } from './retry-timing.js';
import type { SourceBytesResponse, SourceHttpClient, SourceJsonResponse, SourceRequestOptions, TokenProvider } from './source-http.js';

export interface SourceHttpClientOptions {
  connector: Connector;
  config: unknown;
  credentials: unknown | null;
  tokens: TokenProvider | null;
  allowPrivateNetworks: boolean;
  signal: AbortSignal;
  logger: Logger;
  /** Waits between retries and for pacing (tests record them instead of waiting). */
  sleep?: (ms: number) => Promise<void>;
  /** The clock pacing and the servers' reset times are read against (tests advance it by the waits they record). */
  now?: () => number;
}

/** Default cap of `getBytes` bodies: the largest file a source hands to text extraction. */
export const SOURCE_FILE_MAX_BYTES = 64 * 1024 * 1024;
/** Cap of JSON answers: API pages are far smaller; a larger answer is a mistake, not data. */
const JSON_MAX_BYTES = 32 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 60_000;
/** Sends per request, first one included. */
const MAX_ATTEMPTS = 5;
/** The longest one request waits in total for retries: beyond it, the job fails and is retried later. */
const MAX_WAIT_MS = 60_000;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const EXCERPT_CHARACTERS = 300;

/** An answer larger than the cap the request was made with (the source may skip the item). */
export class SourceResponseTooLargeError extends Error {
  override name = 'SourceResponseTooLargeError';
  constructor(
    readonly url: string,
    readonly maxBytes: number,
  ) {
    super(`The answer of ${url} is larger than ${maxBytes} bytes`);
  }
}

interface Request {
  method: 'GET' | 'POST';
  url: URL;
  body?: string;
  headers: Record<string, string>;
  acceptStatuses: number[];
}

/** The token sent with a request, and where it came from (for `authHeaders` and the 401 rule). */
interface SentToken {
  token: string;
  origin: 'oauth' | 'pasted';
}

interface Answer {
  response: Response;
  url: URL;
  sent: SentToken | null;
}

/** Where errors and logs name a URL: origin and path, never the query (an API may take keys there). */
const shown = (url: URL) => `${url.origin}${url.pathname}`;

const defaultAuthHeaders = (token: string) => ({ authorization: `Bearer ${token}` });

async function readCapped(response: Response, maxBytes: number, url: URL): Promise<Buffer> {
  const body = await readCappedBody(response, maxBytes);
  if (body === null) throw new SourceResponseTooLargeError(shown(url), maxBytes);
  return body;
}

/**
 * The start of an error answer, for the message (the rest is dropped unread), without the token the
 * request was sent with: an API or proxy that echoes the request (its headers) in an error would
 * otherwise put it in job errors that every member of the organization reads.
 */
async function excerptOf(response: Response, sent: SentToken | null): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of response.body ?? []) {
    parts.push(Buffer.from(part));
    size += part.length;
    // Past the excerpt by a token's length, so that a token the cut would split is still found whole.
    if (size >= EXCERPT_CHARACTERS * 4 + (sent?.token.length ?? 0)) break;
  }
  await response.body?.cancel().catch(() => {});
  const text = Buffer.concat(parts).toString('utf8');
  return (sent ? text.replaceAll(sent.token, '[token]') : text).replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARACTERS);
}

const discard = (response: Response) => response.body?.cancel().catch(() => {});

class ConnectionHttpClient implements SourceHttpClient {
  /** The origins the connection's token may be sent to. */
  private readonly targets: Set<string>;
  private readonly pastedToken: string | null;
  private readonly pacer: RequestPacer | null;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(private readonly options: SourceHttpClientOptions) {
    const { connector, config, credentials, tokens } = options;
    this.targets = new Set(connector.credentialTargets(config, credentials).flatMap((target) => (URL.canParse(target) ? [new URL(target).origin] : [])));
    const { auth } = connector;
    this.pastedToken = !tokens && auth.kind === 'oauth2' && auth.pasted && credentials ? auth.pasted.token(credentials) : null;
    this.now = options.now ?? Date.now;
    this.pacer = connector.requestRate ? new RequestPacer(connector.requestRate, this.now) : null;
    const { signal } = options;
    this.sleep = options.sleep
      ? async (ms) => {
          await options.sleep!(ms);
          signal.throwIfAborted();
        }
      : (ms) => delay(ms, undefined, { signal });
  }

  async getJson<T>(url: string | URL, options: SourceRequestOptions = {}): Promise<SourceJsonResponse<T>> {
    return this.json<T>(this.request('GET', url, options, undefined));
  }

  async postJson<T>(url: string | URL, body: unknown, options: SourceRequestOptions = {}): Promise<SourceJsonResponse<T>> {
    return this.json<T>(this.request('POST', url, options, JSON.stringify(body)));
  }

  async getBytes(url: string | URL, options: SourceRequestOptions & { maxBytes?: number } = {}): Promise<SourceBytesResponse> {
    const request = this.request('GET', url, { ...options, headers: { accept: '*/*', ...options.headers } }, undefined);
    const { response, url: answered } = await this.exchange(request);
    const bytes = await readCapped(response, options.maxBytes ?? SOURCE_FILE_MAX_BYTES, answered);
    return { status: response.status, bytes, contentType: response.headers.get('content-type'), headers: response.headers as unknown as Headers, url: answered.href };
  }

  wait(ms: number): Promise<void> {
    return this.sleep(ms);
  }

  private request(method: Request['method'], target: string | URL, options: SourceRequestOptions, body: string | undefined): Request {
    const url = new URL(target);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.append(name, String(value));
    const headers: Record<string, string> = { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers, 'user-agent': USER_AGENT };
    return { method, url, body, headers, acceptStatuses: options.acceptStatuses ?? [] };
  }

  private async json<T>(pending: Request): Promise<SourceJsonResponse<T>> {
    const { response, url } = await this.exchange(pending);
    const text = (await readCapped(response, JSON_MAX_BYTES, url)).toString('utf8');
    let body: T;
    try {
      body = (text.trim() === '' ? null : JSON.parse(text)) as T;
    } catch (error) {
      throw new SourceHttpError(response.status, shown(url), `not JSON (${(error as Error).message})`);
    }
    return { status: response.status, body, headers: response.headers as unknown as Headers, url: url.href };
  }

  /** Sends a request until it gets an answer to return, retrying what the contract retries. */
  private async exchange(request: Request): Promise<Answer> {
    const { signal, logger, tokens } = this.options;
    let waited = 0;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      let answer: Answer;
      try {
        answer = await this.follow(request);
      } catch (error) {
        signal.throwIfAborted();
        if (error instanceof SourceHttpError) throw error;
        const refusal = refusalOf(error);
        if (refusal) throw new SourceUnreachableError(`${shown(request.url)} may not be reached: ${refusal.message}`);
        const reason = `${request.url.origin} did not answer: ${networkReason(error)}`;
        const wait = backoffMs(attempt);
        if (attempt >= MAX_ATTEMPTS || waited + wait > MAX_WAIT_MS) throw new TemporarilyUnavailableError(reason);
        logger.warn({ url: shown(request.url), attempt, waitMs: wait, reason }, 'source request failed; retrying');
        await this.sleep(wait);
        waited += wait;
        continue;
      }
      const { response, url, sent } = answer;
      const { status, headers } = response;
      if (status === 401 && sent) {
        await discard(response);
        // One refresh per request: a token refused right after its refresh is refused for good.
        if (sent.origin === 'oauth' && tokens && !refreshed) {
          refreshed = true;
          await tokens.refreshAfterRejection(sent.token);
          continue;
        }
        throw new CredentialsRejectedError(`${url.origin} refused the connection's ${sent.origin === 'oauth' ? 'access token (401), also after refreshing it' : 'token (401)'}`);
      }
      const rateLimited = isRateLimited(status, headers as unknown as Headers);
      if (rateLimited || status >= 500) {
        await discard(response);
        // A rate-limit window's reset says nothing about a server error: GitHub sends x-ratelimit-reset on every answer.
        const asked = rateLimited ? serverWaitMs(headers as unknown as Headers, this.now()) : retryAfterMs(headers, this.now());
        const wait = asked ?? backoffMs(attempt);
        if (attempt >= MAX_ATTEMPTS || waited + wait > MAX_WAIT_MS) {
          const seconds = Math.max(1, Math.ceil(wait / 1000));
          if (rateLimited) throw new SourceRateLimitedError(`${url.origin} rate-limits this connection (${status}); retry in ${seconds} s`, seconds);
          throw new TemporarilyUnavailableError(`${url.origin} answered ${status} ${attempt} times`, asked === null ? null : seconds);
        }
        logger.warn({ url: shown(url), status, attempt, waitMs: wait }, 'source request answered a rate limit or server error; retrying');
        await this.sleep(wait);
        waited += wait;
        continue;
      }
      if ((status >= 200 && status < 300) || request.acceptStatuses.includes(status)) return answer;
      throw new SourceHttpError(status, shown(url), await excerptOf(response, sent));
    }
  }

  /** One send, following redirects itself so that the token is decided again for each hop's origin. */
  private async follow(request: Request): Promise<Answer> {
    let { method, url, body } = request;
    for (let hop = 0; ; hop++) {
      const sent = await this.tokenFor(url);
      const headers: Record<string, string> = { ...request.headers, ...(sent ? (this.options.connector.authHeaders ?? defaultAuthHeaders)(sent.token, sent.origin) : {}) };
      if (body === undefined) delete headers['content-type'];
      await this.pace();
      const response = await fetch(url, {
        method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([this.options.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
        dispatcher: guardedSourceAgent(this.options.allowPrivateNetworks),
      });
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location || request.acceptStatuses.includes(response.status)) return { response, url, sent };
      await discard(response);
      if (hop >= MAX_REDIRECTS) throw new SourceHttpError(response.status, shown(url), `more than ${MAX_REDIRECTS} redirects`);
      // RFC 9110 §15.4: a 303 (and, as browsers do, a 301/302 after a POST) continues as a GET without the body.
      if (response.status === 303 || (method === 'POST' && (response.status === 301 || response.status === 302))) {
        method = 'GET';
        body = undefined;
      }
      url = new URL(location, url);
    }
  }

  private async tokenFor(url: URL): Promise<SentToken | null> {
    if (!this.targets.has(url.origin)) return null;
    if (this.options.tokens) return { token: await this.options.tokens.accessToken(), origin: 'oauth' };
    return this.pastedToken ? { token: this.pastedToken, origin: 'pasted' } : null;
  }

  private async pace(): Promise<void> {
    const wait = this.pacer?.take() ?? 0;
    if (wait > 0) await this.sleep(wait);
  }
}

/** The HTTP client of one connection's run (or check): one per run, so its pacing is the connection's. */
export function createSourceHttpClient(options: SourceHttpClientOptions): SourceHttpClient {
  return new ConnectionHttpClient(options);
}
