import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetch } from 'undici';
import { networkReason } from '../http/guarded-agent.js';
import { bucketUrl, listObjectsUrl, objectUrl, type BucketTarget } from '../object-storage/bucket-address.js';
import { deleteFailuresOf, listPageOf, ObjectStorageError } from '../object-storage/s3-answers.js';
import { sendWithRetries } from '../object-storage/s3-retries.js';
import { payloadSha256, signedHeaders, type SigningKeys } from '../object-storage/sigv4.js';
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
export interface S3BlobStoreOptions extends BucketTarget {
  /** Keys are stored under this prefix (no leading or trailing '/'), empty for the bucket's root. */
  prefix: string;
  keys: SigningKeys;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

const RETRIES = { maxAttempts: 5, firstBackoffMs: 200, maxWaitMs: 30_000, retryNetworkErrors: true, wait: (ms: number) => sleep(ms) };
/** DeleteObjects takes at most 1,000 keys per request. */
const DELETE_BATCH = 1000;

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
    return this.send('GET', this.objectUrl(key), { notFound: true });
  }

  async *list(prefix: string): AsyncIterable<string> {
    let token: string | null = null;
    do {
      const page = listPageOf((await this.send('GET', listObjectsUrl(this.options, { prefix: this.prefix + prefix, continuationToken: token })))!);
      if (!page) throw new ObjectStorageError(200, '', `The answer of ${this.options.endpoint.origin} to ListObjectsV2 is not a ListBucketResult`);
      for (const object of page.objects) yield object.key.slice(this.prefix.length);
      token = page.nextContinuationToken;
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
    const url = bucketUrl(this.options);
    url.search = 'delete=';
    const answer = await this.send('POST', url, { body, headers: { 'content-type': 'application/xml', 'content-md5': createHash('md5').update(body).digest('base64') } });
    const failures = deleteFailuresOf(answer!);
    if (failures.length > 0) {
      const first = failures[0]!;
      throw new ObjectStorageError(200, first.code, `${failures.length} of ${keys.length} objects could not be deleted (${first.code}: ${first.message})`);
    }
  }

  private objectUrl(key: string): URL {
    if (key.split('/').some((part) => part === '..' || part === '.')) throw new Error(`Blob key escapes the store: ${key}`);
    return objectUrl(this.options, this.prefix + key);
  }

  /**
   * One signed request, retried while the store is busy: the answer's body, or null for a 404 when
   * `notFound` allows it; any other failure throws an ObjectStorageError.
   */
  private async send(method: string, url: URL, { body, headers = {}, notFound = false }: { body?: Buffer; headers?: Record<string, string>; notFound?: boolean } = {}): Promise<Buffer | null> {
    const { keys, region, timeoutMs = 30_000 } = this.options;
    let answer: Awaited<ReturnType<typeof sendWithRetries>>;
    try {
      answer = await sendWithRetries(async () => {
        const signed = signedHeaders({ method, url, keys, region, now: new Date(), payloadHash: payloadSha256(body ?? ''), extra: headers });
        const response = await fetch(url, { method, headers: signed, body, signal: AbortSignal.timeout(timeoutMs) });
        return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
      }, RETRIES);
    } catch (error) {
      throw new ObjectStorageError(0, 'NetworkError', `The raw data store at ${this.options.endpoint.origin} cannot be reached: ${networkReason(error, timeoutMs)}`);
    }
    const { status, code, message } = answer;
    if (status >= 200 && status < 300) return answer.body!;
    if (status === 404 && notFound) return null;
    throw new ObjectStorageError(status, code, `The raw data store refused ${method} ${url.pathname} in bucket "${this.options.bucket}": ${code || `HTTP ${status}`}${message ? ` (${message})` : ''}`);
  }
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
