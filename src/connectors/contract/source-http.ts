/**
 * The HTTP client a connector gets for its connection (SyncContext.http). The platform builds it:
 *
 * - every connection goes through the operator's address guard (as the web sources' client);
 * - the connection's token (OAuth, refreshed by the TokenProvider, or pasted) is attached with the
 *   connector's `authHeaders`, and only to the origins of `credentialTargets(config)`: a URL anywhere
 *   else is requested without it;
 * - a 401 forces one token refresh and one retry; a second 401 throws CredentialsRejectedError;
 * - 429 and 5xx (and 403 with `x-ratelimit-remaining: 0` or a `Retry-After`, GitHub's documented
 *   rate-limit answers) are retried with exponential backoff and jitter, honouring `Retry-After`
 *   (seconds or an HTTP date) and `x-ratelimit-reset`; when the wait would be too long or the retries
 *   run out it throws SourceRateLimitedError / TemporarilyUnavailableError, and the job retries later;
 * - requests are paced at the connector's declared `requestRate`, per connection;
 * - the job's cancellation aborts every request; bodies are capped.
 *
 * Other statuses throw SourceHttpError unless listed in `acceptStatuses`.
 */
export interface SourceHttpClient {
  getJson<T = unknown>(url: string | URL, options?: SourceRequestOptions): Promise<SourceJsonResponse<T>>;
  postJson<T = unknown>(url: string | URL, body: unknown, options?: SourceRequestOptions): Promise<SourceJsonResponse<T>>;
  /** A body as bytes (file contents, exports), capped at `maxBytes` (default the platform's file limit). */
  getBytes(url: string | URL, options?: SourceRequestOptions & { maxBytes?: number }): Promise<SourceBytesResponse>;
  /**
   * Waits as the client waits before its own retries, ending early with the job's cancellation (tests
   * record the wait instead): for a source's own retry rules, such as the rate limits an API states
   * in its answer bodies rather than in its statuses.
   */
  wait(ms: number): Promise<void>;
}

export interface SourceRequestOptions {
  /** Appended to the URL's query; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Statuses returned to the caller instead of thrown (e.g. 404 for an item deleted meanwhile, 304). */
  acceptStatuses?: number[];
}

export interface SourceJsonResponse<T> {
  status: number;
  body: T;
  headers: Headers;
  /** The final URL (after redirects), for resolving relative pagination links. */
  url: string;
}

export interface SourceBytesResponse {
  status: number;
  bytes: Buffer;
  contentType: string | null;
  headers: Headers;
  url: string;
}

/** Requests per second a connector sends per connection at most, with a burst allowance. */
export interface RequestRate {
  requestsPerSecond: number;
  burst?: number;
}

/**
 * The access token of an OAuth connection. Refreshes ahead of expiry, one refresh at a time per
 * connection across processes (a database row lock), and persists rotated tokens before using them.
 */
export interface TokenProvider {
  /** A token valid for at least the next minute (refreshing first when it is not). */
  accessToken(): Promise<string>;
  /**
   * The provider refused `rejected`: refresh once (unless another request already replaced it) and
   * return the new token. Throws CredentialsRejectedError when the refresh is refused or impossible;
   * the connection then needs re-authentication (`needs_reauth`, `source_connection.auth_expired`).
   */
  refreshAfterRejection(rejected: string): Promise<string>;
}
