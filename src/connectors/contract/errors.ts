/**
 * The errors a connector throws to say what went wrong in terms the platform acts on. Messages are
 * shown to users (job `error`, 422 `msg`): they never contain a credential.
 */

/** The source refuses the credentials: the job fails and the connection needs re-authentication (`needs_reauth`). */
export class CredentialsRejectedError extends Error {
  override name = 'CredentialsRejectedError';
}

/** Nothing answers at the address the config or credentials name (a database server, an API base URL). */
export class SourceUnreachableError extends Error {
  override name = 'SourceUnreachableError';
}

/** The config cannot work (bad path, path outside the allowed roots, unknown repository…): a 422 on `config.<field>`. */
export class SourceConfigError extends Error {
  override name = 'SourceConfigError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The source rate-limits this connection for longer than a run should wait: the job fails and is retried after `retryAfterSeconds`. */
export class SourceRateLimitedError extends Error {
  override name = 'SourceRateLimitedError';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** The source answers with server errors or not at all, for now: the job fails and is retried later. */
export class TemporarilyUnavailableError extends Error {
  override name = 'TemporarilyUnavailableError';
  constructor(
    message: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** A status the connector did not accept. `bodyExcerpt` is the start of the answer, for the error message. */
export class SourceHttpError extends Error {
  override name = 'SourceHttpError';
  constructor(
    readonly status: number,
    readonly url: string,
    readonly bodyExcerpt: string,
  ) {
    super(`${status} from ${url}${bodyExcerpt ? `: ${bodyExcerpt}` : ''}`);
  }
}
