import { z } from 'zod';
import { retryAfterMs } from '../../platform/http/retry-after.js';
import { CredentialsRejectedError, SourceRateLimitedError, SourceHttpError } from '../contract/errors.js';
import type { SourceHttpClient, TokenProvider } from '../contract/source-http.js';

/**
 * Linear's GraphQL endpoint, `POST {api_url}/graphql`, through the connection's HTTP client (which
 * attaches the token, paces, retries 429/5xx and guards addresses). Linear answers errors inside the
 * GraphQL body, with HTTP 400: a rate limit is `extensions.code: "RATELIMITED"` with the
 * `X-RateLimit-Requests-Reset` / `X-RateLimit-Complexity-Reset` headers (UTC epoch milliseconds), and
 * a refused token is `AUTHENTICATION_ERROR` (https://linear.app/developers/rate-limiting, the SDK's
 * error types). This module turns those answers into the contract's errors.
 */

const graphqlError = z.object({
  message: z.string(),
  extensions: z.object({ code: z.string().optional(), type: z.string().optional(), userPresentableMessage: z.string().optional() }).loose().optional(),
});
const graphqlAnswer = z.object({ data: z.unknown().optional(), errors: z.array(graphqlError).optional() });
type GraphqlError = z.infer<typeof graphqlError>;

const isRateLimit = (error: GraphqlError) => error.extensions?.code === 'RATELIMITED' || error.extensions?.type === 'ratelimited';
const isAuthentication = (error: GraphqlError) => error.extensions?.code === 'AUTHENTICATION_ERROR' || error.extensions?.type === 'authentication error';

/** Longest a run waits for Linear's bucket to refill before leaving it to the job's retry. */
const MAX_RATE_LIMIT_WAIT_MS = 60_000;
/** Rate-limited answers in a row a single query waits out before giving up. */
const MAX_RATE_LIMIT_RETRIES = 3;

export interface LinearGraphqlOptions {
  http: SourceHttpClient;
  /** `{api_url}/graphql`. */
  endpoint: string;
  /** The OAuth connection's tokens (null for a pasted API key): a refused token is refreshed once. */
  tokens: TokenProvider | null;
  signal: AbortSignal;
}

/**
 * How long until Linear's bucket has room again: the latest of the documented reset headers (epoch
 * milliseconds) and a `Retry-After` in seconds, from now; null when none is given.
 */
export function rateLimitWaitMs(headers: Headers, now = Date.now()): number | null {
  const waits: number[] = [];
  for (const name of ['x-ratelimit-requests-reset', 'x-ratelimit-complexity-reset']) {
    const reset = Number(headers.get(name));
    if (headers.get(name) && Number.isFinite(reset)) waits.push(reset - now);
  }
  const asked = retryAfterMs(headers, now);
  if (asked !== null) waits.push(asked);
  return waits.length > 0 ? Math.max(0, ...waits) : null;
}

/** A client for one connection's queries: `query(text, variables, shape)` returns the parsed `data`. */
export class LinearGraphql {
  constructor(private readonly options: LinearGraphqlOptions) {}

  async query<T>(query: string, variables: Record<string, unknown>, shape: z.ZodType<T>): Promise<T> {
    const { http, endpoint, tokens, signal } = this.options;
    let refreshed = false;
    for (let rateLimited = 0; ; ) {
      signal.throwIfAborted();
      const response = await http.postJson(endpoint, { query, variables }, { acceptStatuses: [400] });
      const answer = graphqlAnswer.safeParse(response.body);
      if (!answer.success) throw new SourceHttpError(response.status, endpoint, 'not a GraphQL answer');
      const errors = answer.data.errors ?? [];
      if (errors.some(isRateLimit)) {
        const wait = rateLimitWaitMs(response.headers) ?? 1000 * 2 ** rateLimited;
        if (wait > MAX_RATE_LIMIT_WAIT_MS || rateLimited >= MAX_RATE_LIMIT_RETRIES) {
          throw new SourceRateLimitedError('Linear rate-limits this connection (RATELIMITED)', Math.ceil(wait / 1000));
        }
        rateLimited += 1;
        await http.wait(wait);
        continue;
      }
      if (errors.some(isAuthentication)) {
        // Linear says so in the body (HTTP 400), where the HTTP client's 401 rule cannot see it:
        // an OAuth token gets the same single refresh before the connection needs signing in again.
        if (tokens && !refreshed) {
          refreshed = true;
          await tokens.refreshAfterRejection(await tokens.accessToken());
          continue;
        }
        throw new CredentialsRejectedError('Linear refused the credentials (AUTHENTICATION_ERROR): sign in again or give a valid API key');
      }
      if (errors.length > 0 || response.status !== 200) {
        const messages = errors.map((error) => error.extensions?.userPresentableMessage ?? error.message);
        throw new SourceHttpError(response.status, endpoint, messages.join('; ').slice(0, 300));
      }
      const data = shape.safeParse(answer.data.data);
      if (!data.success) throw new SourceHttpError(response.status, endpoint, `unexpected answer: ${z.prettifyError(data.error).slice(0, 300)}`);
      return data.data;
    }
  }
}
