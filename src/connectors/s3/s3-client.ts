import { setTimeout as sleep } from 'node:timers/promises';
import { XMLParser } from 'fast-xml-parser';
import { readCappedBody } from '../../platform/http/capped-body.js';
import { retryAfterMs } from '../../platform/http/retry-after.js';
import type { Logger } from '../../platform/logger.js';
import { CredentialsRejectedError, SourceConfigError } from '../connector.js';
import { USER_AGENT, type WebClient } from '../../platform/http/web-client.js';
import { signedHeaders, uriEncode, type SigningKeys } from '../../platform/object-storage/sigv4.js';

/**
 * The two S3 REST operations the source needs — ListObjectsV2 (`GET /?list-type=2`, paged by
 * continuation token) and GetObject — signed with SigV4 and sent through the web sources' guarded
 * client (the operator's network policy, link-local always refused). Error bodies
 * (`<Error><Code>…</Code><Message>…</Message></Error>`) become the connector's typed errors; SlowDown
 * and 5xx answers are retried with backoff, honouring Retry-After.
 */

/** Where a bucket is: the endpoint origin, the signing region, the bucket and how it is addressed. */
export interface BucketTarget {
  /** `https://s3.eu-west-1.amazonaws.com`, `http://minio.internal:9000`… (no path). */
  endpoint: URL;
  region: string;
  bucket: string;
  /** Path style (`endpoint/bucket/key`) or virtual-hosted style (`bucket.endpoint/key`). */
  pathStyle: boolean;
}

export interface ListedObject {
  key: string;
  etag: string;
  lastModified: string;
  size: number;
}

/** Why an object listed a moment ago cannot be read, in the words its skip is reported with. */
export interface UnreadObject {
  unread: 'gone' | 'larger than max_object_bytes' | 'unreadable';
  detail: string;
}

export interface ListPage {
  objects: ListedObject[];
  /** Present while the listing is truncated. */
  nextContinuationToken: string | null;
}

/** Codes that mean the keys are wrong, expired or not allowed (the connection needs new credentials). */
const CREDENTIAL_CODES = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'ExpiredToken', 'InvalidToken', 'TokenRefreshRequired', 'InvalidSecurity']);
const BUCKET_CODES = new Set(['NoSuchBucket', 'InvalidBucketName']);
/** The bucket lives in another region than the one signed for. */
const REGION_CODES = new Set(['AuthorizationHeaderMalformed', 'PermanentRedirect', 'IllegalLocationConstraintException']);
const RETRYABLE_CODES = new Set(['SlowDown', 'InternalError', 'ServiceUnavailable', 'RequestTimeout', 'RequestTimeTooSkewed']);

const MAX_ATTEMPTS = 5;
/** A ListObjectsV2 page of 1,000 keys is well under a megabyte; error bodies are smaller still. */
const MAX_LISTING_BYTES = 16 * 1024 * 1024;
const TOO_LARGE = 'TooLarge';
const FIRST_BACKOFF_MS = 500;
/** A longer Retry-After would stall the job: it fails instead and is retried later. */
const MAX_RETRY_AFTER_MS = 60_000;

const xml = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, isArray: (name) => name === 'Contents' });

/** An S3 answer that is not a success, with the code of its error body when it has one. */
export class S3RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class S3Client {
  constructor(
    private readonly target: BucketTarget,
    private readonly keys: SigningKeys,
    private readonly context: { webClient: WebClient; signal: AbortSignal; timeoutMs: number; logger: Logger },
  ) {}

  /** The object's address (also its `web_url`). */
  objectUrl(key: string): URL {
    return this.address(`/${uriEncode(key, true)}`);
  }

  /** One page of ListObjectsV2 under `prefix`, after `continuationToken`. */
  async listPage(prefix: string, continuationToken: string | null, maxKeys = 1000): Promise<ListPage> {
    const url = this.address('/');
    if (this.target.pathStyle) url.pathname = `/${uriEncode(this.target.bucket)}`;
    const query: [string, string][] = [['list-type', '2'], ['max-keys', String(maxKeys)], ['prefix', prefix]];
    if (continuationToken) query.push(['continuation-token', continuationToken]);
    url.search = query.map(([name, value]) => `${uriEncode(name)}=${uriEncode(value)}`).join('&');
    const { body } = await this.send(url, 'list the bucket');
    const result = (xml.parse(body.toString('utf8')) as { ListBucketResult?: ListBucketResult }).ListBucketResult;
    if (!result) throw new S3RequestError(200, '', `The endpoint's answer to ListObjectsV2 is not a ListBucketResult: is ${this.target.endpoint.origin} an S3 API?`);
    const objects = (result.Contents ?? []).map((entry) => ({ key: String(entry.Key ?? ''), etag: String(entry.ETag ?? ''), lastModified: String(entry.LastModified ?? ''), size: Number(entry.Size ?? 0) }));
    const truncated = String(result.IsTruncated) === 'true';
    return { objects, nextContinuationToken: truncated && result.NextContinuationToken ? String(result.NextContinuationToken) : null };
  }

  /** The object's bytes and content type, or why it cannot be read (the run goes on without it). */
  async getObject(key: string, maxBytes: number): Promise<{ bytes: Buffer; contentType: string } | UnreadObject> {
    try {
      const { body, contentType } = await this.send(this.objectUrl(key), 'read an object', maxBytes);
      return { bytes: body, contentType };
    } catch (error) {
      if (!(error instanceof S3RequestError)) throw error;
      if (error.code === 'NoSuchKey') return { unread: 'gone', detail: 'deleted since it was listed' };
      if (error.code === TOO_LARGE) return { unread: 'larger than max_object_bytes', detail: `more than ${maxBytes} bytes` };
      // A refusal of this object alone (InvalidObjectState for an archived storage class, say): the
      // others are still read. Codes that are retried concern every request, so they fail the run.
      if (error.status >= 400 && error.status < 500 && error.status !== 429 && !RETRYABLE_CODES.has(error.code)) return { unread: 'unreadable', detail: error.message };
      throw error;
    }
  }

  private address(path: string): URL {
    const { endpoint, bucket, pathStyle } = this.target;
    const url = new URL(endpoint.origin);
    if (pathStyle) url.pathname = `/${uriEncode(bucket)}${path}`;
    else {
      url.hostname = `${bucket}.${endpoint.hostname}`;
      url.pathname = path;
    }
    return url;
  }

  /** A signed GET, retried on SlowDown and 5xx; S3 errors thrown as typed errors. */
  private async send(url: URL, what: string, maxBytes = MAX_LISTING_BYTES): Promise<{ body: Buffer; contentType: string }> {
    const { webClient, signal, timeoutMs, logger } = this.context;
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      let response: Awaited<ReturnType<WebClient['get']>>;
      let body: Buffer | null;
      try {
        const headers = { ...signedHeaders({ method: 'GET', url, keys: this.keys, region: this.target.region, now: new Date() }), 'user-agent': USER_AGENT };
        response = await webClient.get(url.href, { headers, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
        body = await readCappedBody(response, maxBytes);
      } catch (error) {
        signal.throwIfAborted();
        const cause = (error as { cause?: { message?: string; code?: string } }).cause;
        throw new S3RequestError(0, 'NetworkError', `Cannot reach ${this.target.endpoint.origin} to ${what}: ${cause?.message ?? cause?.code ?? (error as Error).message}`);
      }
      if (response.status >= 200 && response.status < 300) {
        if (!body) throw new S3RequestError(response.status, TOO_LARGE, `An answer of ${this.target.endpoint.origin} to ${what} is larger than ${maxBytes} bytes`);
        return { body, contentType: response.headers.get('content-type') ?? '' };
      }

      const { code, message } = errorBody(body ?? Buffer.alloc(0));
      const retryable = response.status >= 500 || RETRYABLE_CODES.has(code) || response.status === 429;
      if (retryable && attempt < MAX_ATTEMPTS) {
        const asked = retryAfterMs(response.headers);
        const waitMs = Math.min(asked ?? FIRST_BACKOFF_MS * 2 ** (attempt - 1), MAX_RETRY_AFTER_MS);
        logger.info({ source: 's3', status: response.status, code, attempt, waitMs }, 's3: endpoint busy, retrying');
        await sleep(waitMs, undefined, { signal });
        continue;
      }
      throw typedError(response.status, code, message, this.target, what);
    }
  }
}

/** The part of a ListObjectsV2 answer the source reads. */
interface ListBucketResult {
  Contents?: { Key?: unknown; ETag?: unknown; LastModified?: unknown; Size?: unknown }[];
  IsTruncated?: unknown;
  NextContinuationToken?: unknown;
}

function errorBody(body: Buffer): { code: string; message: string } {
  try {
    const error = (xml.parse(body.toString('utf8')) as { Error?: { Code?: unknown; Message?: unknown } }).Error;
    return { code: String(error?.Code ?? ''), message: String(error?.Message ?? '') };
  } catch {
    return { code: '', message: '' };
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
  return new S3RequestError(status, code, `S3 could not ${what} in bucket "${target.bucket}" (${said})`);
}
