import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { XMLParser } from 'fast-xml-parser';
import { fetch } from 'undici';
import { payloadSha256, signedHeaders, uriEncode, type SigningKeys } from '../object-storage/sigv4.js';
import { retryAfterMs } from '../http/retry-after.js';
import type { BlobStore } from './blob-store.js';

/**
 * The raw data store on S3-compatible object storage (AWS S3, MinIO, Cloudflare R2, Ceph RGW…), for
 * the servers deployment: API and worker processes on different hosts then share one store, where
 * files under the data directory would each see only their own.
 *
 * Keys map to objects under an optional prefix of one bucket. It speaks the S3 REST API with SigV4:
 * PutObject, GetObject, DeleteObject, ListObjectsV2 (paged by continuation token) and DeleteObjects
 * (batches of 1,000, Content-MD5 as the API requires). Busy answers (503 SlowDown, 5xx, 429) and
 * network errors are retried with backoff, honouring Retry-After; other errors are thrown with S3's
 * code and message. The endpoint is the operator's own, so it is reached directly (the address guard
 * is for what users configure).
 */
export interface S3BlobStoreOptions {
  /** `https://s3.eu-west-1.amazonaws.com`, `http://minio.internal:9000`… */
  endpoint: URL;
  region: string;
  bucket: string;
  /** Keys are stored under this prefix (no leading or trailing '/'), empty for the bucket's root. */
  prefix: string;
  /** Path style (`endpoint/bucket/key`: MinIO, Ceph, most self-hosted stores) or virtual-hosted style (`bucket.endpoint/key`: AWS). */
  pathStyle: boolean;
  keys: SigningKeys;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

const MAX_ATTEMPTS = 5;
const FIRST_BACKOFF_MS = 200;
const MAX_WAIT_MS = 30_000;
/** DeleteObjects takes at most 1,000 keys per request. */
const DELETE_BATCH = 1000;
const xml = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, isArray: (name) => name === 'Contents' || name === 'Error' });

/** An S3 answer that is not a success: status, S3's error code and message. */
export class ObjectStorageError extends Error {
  override name = 'ObjectStorageError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class S3BlobStore implements BlobStore {
  private readonly prefix: string;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.prefix = options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
  }

  async put(key: string, bytes: Buffer | string): Promise<void> {
    const body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    await this.send('PUT', this.objectUrl(key), { body, headers: { 'content-type': 'application/octet-stream' } });
  }

  async get(key: string): Promise<Buffer | null> {
    const answer = await this.send('GET', this.objectUrl(key), { notFound: true });
    return answer?.body ?? null;
  }

  async *list(prefix: string): AsyncIterable<string> {
    let token: string | null = null;
    do {
      const url = this.bucketUrl();
      const query: [string, string][] = [['list-type', '2'], ['prefix', this.prefix + prefix]];
      if (token) query.push(['continuation-token', token]);
      url.search = query.map(([name, value]) => `${uriEncode(name)}=${uriEncode(value)}`).join('&');
      const answer = await this.send('GET', url);
      const result = (xml.parse(answer!.body.toString('utf8')) as { ListBucketResult?: ListBucketResult }).ListBucketResult;
      if (!result) throw new ObjectStorageError(200, '', `The answer of ${this.options.endpoint.origin} to ListObjectsV2 is not a ListBucketResult`);
      for (const entry of result.Contents ?? []) yield String(entry.Key ?? '').slice(this.prefix.length);
      token = String(result.IsTruncated) === 'true' && result.NextContinuationToken ? String(result.NextContinuationToken) : null;
    } while (token);
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 whether or not the key existed.
    await this.send('DELETE', this.objectUrl(key), { notFound: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    let batch: string[] = [];
    for await (const key of this.list(prefix)) {
      batch.push(key);
      if (batch.length === DELETE_BATCH) {
        await this.deleteObjects(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await this.deleteObjects(batch);
  }

  /** DeleteObjects (`POST /?delete`), quiet mode: the answer lists only the keys that failed. */
  private async deleteObjects(keys: string[]): Promise<void> {
    const body = Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>${keys.map((key) => `<Object><Key>${escapeXml(this.prefix + key)}</Key></Object>`).join('')}</Delete>`,
      'utf8',
    );
    const url = this.bucketUrl();
    url.search = 'delete=';
    const answer = await this.send('POST', url, { body, headers: { 'content-type': 'application/xml', 'content-md5': createHash('md5').update(body).digest('base64') } });
    const errors = (xml.parse(answer!.body.toString('utf8')) as { DeleteResult?: { Error?: { Key?: unknown; Code?: unknown; Message?: unknown }[] } }).DeleteResult?.Error ?? [];
    if (errors.length > 0) {
      const first = errors[0]!;
      throw new ObjectStorageError(200, String(first.Code ?? ''), `${errors.length} of ${keys.length} objects could not be deleted (${String(first.Code ?? '')}: ${String(first.Message ?? '')})`);
    }
  }

  private bucketUrl(): URL {
    const { endpoint, bucket, pathStyle } = this.options;
    const url = new URL(endpoint.origin);
    if (pathStyle) url.pathname = `/${uriEncode(bucket)}`;
    else url.hostname = `${bucket}.${endpoint.hostname}`;
    return url;
  }

  private objectUrl(key: string): URL {
    if (key.split('/').some((part) => part === '..' || part === '.')) throw new Error(`Blob key escapes the store: ${key}`);
    const url = this.bucketUrl();
    url.pathname = `${this.options.pathStyle ? url.pathname : ''}/${uriEncode(this.prefix + key, true)}`;
    return url;
  }

  /**
   * One signed request, retried while the store is busy. Null for a 404 when `notFound` allows it;
   * any other failure throws an ObjectStorageError.
   */
  private async send(method: string, url: URL, { body, headers = {}, notFound = false }: { body?: Buffer; headers?: Record<string, string>; notFound?: boolean } = {}): Promise<{ body: Buffer } | null> {
    const { keys, region, timeoutMs = 30_000 } = this.options;
    for (let attempt = 1; ; attempt++) {
      let status: number;
      let answer: Buffer;
      let askedMs: number | null = null;
      try {
        const signed = signedHeaders({ method, url, keys, region, now: new Date(), payloadHash: payloadSha256(body ?? ''), extra: headers });
        const response = await fetch(url, { method, headers: signed, body, signal: AbortSignal.timeout(timeoutMs) });
        status = response.status;
        askedMs = retryAfterMs(response.headers);
        answer = Buffer.from(await response.arrayBuffer());
      } catch (error) {
        if (attempt < MAX_ATTEMPTS) {
          await sleep(backoff(attempt));
          continue;
        }
        const cause = (error as { cause?: { message?: string } }).cause;
        throw new ObjectStorageError(0, 'NetworkError', `The raw data store at ${this.options.endpoint.origin} cannot be reached: ${cause?.message ?? (error as Error).message}`);
      }
      if (status >= 200 && status < 300) return { body: answer };
      if (status === 404 && notFound) return null;
      const { code, message } = errorBody(answer);
      if ((status >= 500 || status === 429 || code === 'SlowDown') && attempt < MAX_ATTEMPTS) {
        await sleep(Math.min(MAX_WAIT_MS, askedMs ?? backoff(attempt)));
        continue;
      }
      throw new ObjectStorageError(status, code, `The raw data store refused ${method} ${url.pathname} in bucket "${this.options.bucket}": ${code || `HTTP ${status}`}${message ? ` (${message})` : ''}`);
    }
  }
}

/** Doubling pauses, at most MAX_WAIT_MS (when the store does not say how long to wait). */
const backoff = (attempt: number) => Math.min(MAX_WAIT_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));

interface ListBucketResult {
  Contents?: { Key?: unknown }[];
  IsTruncated?: unknown;
  NextContinuationToken?: unknown;
}

function errorBody(body: Buffer): { code: string; message: string } {
  try {
    const error = (xml.parse(body.toString('utf8')) as { Error?: { Code?: unknown; Message?: unknown }[] }).Error?.[0];
    return { code: String(error?.Code ?? ''), message: String(error?.Message ?? '') };
  } catch {
    return { code: '', message: '' };
  }
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
