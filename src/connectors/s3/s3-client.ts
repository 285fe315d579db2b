import { readCappedBody } from '../../platform/http/capped-body.js';
import { networkReason } from '../../platform/http/guarded-agent.js';
import { USER_AGENT, type WebClient } from '../../platform/http/web-client.js';
import type { Logger } from '../../platform/logger.js';
import { listObjectsUrl, objectUrl, type BucketTarget } from '../../platform/object-storage/bucket-address.js';
import { listPageOf, ObjectStorageError, type ListPage } from '../../platform/object-storage/s3-answers.js';
import { isBusyAnswer, sendWithRetries, type S3RetryPolicy } from '../../platform/object-storage/s3-retries.js';
import { signedHeaders, type SigningKeys } from '../../platform/object-storage/sigv4.js';
import { CredentialsRejectedError, SourceConfigError } from '../connector.js';

/**
 * The two S3 REST operations the source needs — ListObjectsV2 (`GET /?list-type=2`, paged by
 * continuation token) and GetObject — signed with SigV4 and sent through the web sources' guarded
 * client (the operator's network policy, link-local always refused). Error bodies
 * (`<Error><Code>…</Code><Message>…</Message></Error>`) become the connector's typed errors; busy
 * answers (SlowDown, 5xx, 429) are retried with backoff, honouring Retry-After, waiting through the
 * connection's client (`SourceHttpClient.wait`: the job's cancellation ends the wait).
 */

/** Why an object listed a moment ago cannot be read, in the words its skip is reported with. */
export interface UnreadObject {
  unread: 'gone' | 'larger than max_object_bytes' | 'unreadable';
  detail: string;
}

/** Codes that mean the keys are wrong, expired or not allowed (the connection needs new credentials). */
const CREDENTIAL_CODES = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'ExpiredToken', 'InvalidToken', 'TokenRefreshRequired', 'InvalidSecurity']);
const BUCKET_CODES = new Set(['NoSuchBucket', 'InvalidBucketName']);
/** The bucket lives in another region than the one signed for. */
const REGION_CODES = new Set(['AuthorizationHeaderMalformed', 'PermanentRedirect', 'IllegalLocationConstraintException']);

/** A ListObjectsV2 page of 1,000 keys is well under a megabyte; error bodies are smaller still. */
const MAX_LISTING_BYTES = 16 * 1024 * 1024;
const TOO_LARGE = 'TooLarge';
/** No answer at all (a refused address, DNS, a timeout) is not retried: validation reports it on the endpoint at once. */
const RETRIES = { maxAttempts: 5, firstBackoffMs: 500, maxWaitMs: 60_000, retryNetworkErrors: false } as const;

export interface S3ClientContext {
  webClient: WebClient;
  signal: AbortSignal;
  timeoutMs: number;
  logger: Logger;
  /** Waits between retries: the connection's `SourceHttpClient.wait`. */
  wait(ms: number): Promise<void>;
}

export class S3Client {
  constructor(
    private readonly target: BucketTarget,
    private readonly keys: SigningKeys,
    private readonly context: S3ClientContext,
  ) {}

  /** The object's address (also its `web_url`). */
  objectUrl(key: string): URL {
    return objectUrl(this.target, key);
  }

  /** One page of ListObjectsV2 under `prefix`, after `continuationToken`. */
  async listPage(prefix: string, continuationToken: string | null, maxKeys = 1000): Promise<ListPage> {
    const { body } = await this.send(listObjectsUrl(this.target, { prefix, continuationToken, maxKeys }), 'list the bucket');
    const page = listPageOf(body);
    if (!page) throw new ObjectStorageError(200, '', `The endpoint's answer to ListObjectsV2 is not a ListBucketResult: is ${this.target.endpoint.origin} an S3 API?`);
    return page;
  }

  /** The object's bytes and content type, or why it cannot be read (the run goes on without it). */
  async getObject(key: string, maxBytes: number): Promise<{ bytes: Buffer; contentType: string } | UnreadObject> {
    try {
      const { body, contentType } = await this.send(this.objectUrl(key), 'read an object', maxBytes);
      return { bytes: body, contentType };
    } catch (error) {
      if (!(error instanceof ObjectStorageError)) throw error;
      if (error.code === 'NoSuchKey') return { unread: 'gone', detail: 'deleted since it was listed' };
      if (error.code === TOO_LARGE) return { unread: 'larger than max_object_bytes', detail: `more than ${maxBytes} bytes` };
      // A refusal of this object alone (InvalidObjectState for an archived storage class, say): the
      // others are still read. Busy answers concern every request, so they fail the run.
      if (error.status >= 400 && !isBusyAnswer(error.status, error.code)) return { unread: 'unreadable', detail: error.message };
      throw error;
    }
  }

  /** A signed GET, retried while the endpoint is busy; S3 errors thrown as typed errors. */
  private async send(url: URL, what: string, maxBytes = MAX_LISTING_BYTES): Promise<{ body: Buffer; contentType: string }> {
    const { webClient, signal, timeoutMs, logger, wait } = this.context;
    const policy: S3RetryPolicy = {
      ...RETRIES,
      wait,
      onRetry: ({ status, code, attempt, waitMs }) => logger.info({ source: 's3', status, code, attempt, waitMs }, 's3: endpoint busy, retrying'),
    };
    let answer: Awaited<ReturnType<typeof sendWithRetries>>;
    try {
      answer = await sendWithRetries(async () => {
        signal.throwIfAborted();
        const headers = { ...signedHeaders({ method: 'GET', url, keys: this.keys, region: this.target.region, now: new Date() }), 'user-agent': USER_AGENT };
        const response = await webClient.get(url.href, { headers, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
        return { status: response.status, headers: response.headers, body: await readCappedBody(response, maxBytes) };
      }, policy);
    } catch (error) {
      signal.throwIfAborted();
      throw new ObjectStorageError(0, 'NetworkError', `Cannot reach ${this.target.endpoint.origin} to ${what}: ${networkReason(error, timeoutMs)}`);
    }
    const { status, body, code, message } = answer;
    if (status >= 200 && status < 300) {
      if (!body) throw new ObjectStorageError(status, TOO_LARGE, `An answer of ${this.target.endpoint.origin} to ${what} is larger than ${maxBytes} bytes`);
      return { body, contentType: answer.headers.get('content-type') ?? '' };
    }
    throw typedError(status, code, message, this.target, what);
  }
}

/** The connector's error for an S3 error answer: credentials, bucket and region problems are typed. */
function typedError(status: number, code: string, message: string, target: BucketTarget, what: string): Error {
  const said = `${code || `HTTP ${status}`}${message ? `: ${message}` : ''}`;
  if (CREDENTIAL_CODES.has(code) || (!code && (status === 401 || status === 403))) {
    return new CredentialsRejectedError(`S3 refused the access key to ${what} in bucket "${target.bucket}" (${said})`);
  }
  if (BUCKET_CODES.has(code)) return new SourceConfigError('bucket', `Bucket "${target.bucket}" cannot be used at ${target.endpoint.origin} (${said})`);
  if (REGION_CODES.has(code)) return new SourceConfigError('region', `Bucket "${target.bucket}" is not reachable with region "${target.region}" (${said})`);
  return new ObjectStorageError(status, code, `S3 could not ${what} in bucket "${target.bucket}" (${said})`);
}
