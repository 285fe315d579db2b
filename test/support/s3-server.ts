import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordedRequest, type RecordedRequest } from '../../src/platform/http/test-loopback-server.js';
import { ALGORITHM, canonicalQuery, canonicalRequestText, payloadSha256, signature } from '../../src/platform/object-storage/sigv4.js';

/**
 * Test helper: a local HTTP server speaking the S3 REST API, path style, as the Amazon S3 API
 * Reference documents it (the s3 source reads it; the raw data store on object storage also writes):
 * - ListObjectsV2, `GET /<bucket>?list-type=2&prefix=&max-keys=&continuation-token=`, answering a
 *   `ListBucketResult` (Name, Prefix, KeyCount, MaxKeys, IsTruncated, Contents{Key, LastModified,
 *   ETag, Size, StorageClass}, ContinuationToken, NextContinuationToken) — docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
 * - GetObject, `GET /<bucket>/<key>`, with Content-Type, ETag and Last-Modified — API_GetObject.html
 * - PutObject `PUT /<bucket>/<key>` and DeleteObject `DELETE /<bucket>/<key>` (204 whether or not the key
 *   existed) — API_PutObject.html, API_DeleteObject.html; DeleteObjects `POST /<bucket>?delete`
 * - every payload's SHA-256 checked against x-amz-content-sha256 (XAmzContentSHA256Mismatch)
 * - errors as `<Error><Code/><Message/><Resource/><RequestId/></Error>` with the documented codes and
 *   statuses (InvalidAccessKeyId 403, SignatureDoesNotMatch 403, NoSuchBucket 404, NoSuchKey 404,
 *   SlowDown 503) — ErrorResponses.html
 * - every request authenticated by AWS Signature Version 4 in the Authorization header, the
 *   signature recomputed here from the request as received and the secret of its access key id —
 *   sig-v4-header-based-auth.html (the primitives are pinned to that page's examples in s3.test.ts).
 */

export interface StoredObject {
  body: Buffer;
  contentType: string;
  lastModified: Date;
}

export interface S3Request extends RecordedRequest {
  /** 0 for a dropped connection. */
  status: number;
  /** The S3 error code answered, null for a success. */
  code: string | null;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unescapeXml = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
const etagOf = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;
const REGION = 'us-east-1';

export class TestS3Server {
  /** Bucket → key → object. */
  readonly buckets = new Map<string, Map<string, StoredObject>>();
  /** Access key id → secret access key. */
  readonly keys = new Map<string, string>();
  readonly requests: S3Request[] = [];
  /**
   * Answers given instead of the next requests, in order (e.g. a 503 SlowDown with Retry-After); one
   * with a `path` answers only the next request to that path (e.g. 403 InvalidObjectState for one object);
   * one with `drop` closes the connection without an answer (recorded with status 0).
   */
  readonly interruptions: ({ status: number; code: string; retryAfter?: string; path?: string; message?: string } | { drop: true; path?: string })[] = [];
  /** Most keys a listing page holds, whatever max-keys asks (S3 may return fewer keys than asked). */
  pageSize = 1000;
  private server: Server | null = null;
  url = '';

  put(bucket: string, key: string, body: string | Buffer, contentType = 'application/octet-stream', lastModified = new Date()): void {
    if (!this.buckets.has(bucket)) this.buckets.set(bucket, new Map());
    // S3 keeps Last-Modified to the second.
    this.buckets.get(bucket)!.set(key, { body: Buffer.from(body), contentType, lastModified: new Date(Math.floor(lastModified.getTime() / 1000) * 1000) });
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        const url = new URL(request.url!, 'http://fake');
        const answer = this.answer(request, url, Buffer.concat(parts));
        if (answer === null) {
          this.requests.push({ ...recordedRequest(request), status: 0, code: null });
          request.socket.destroy();
          return;
        }
        this.requests.push({ ...recordedRequest(request), status: answer.status, code: answer.code });
        response.writeHead(answer.status, answer.headers).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }

  /** The answer to send, or null to drop the connection instead. */
  private answer(request: IncomingMessage, url: URL, payload: Buffer): { status: number; headers: Record<string, string>; body: Buffer | string; code: string | null } | null {
    const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) => ({
      status,
      code,
      headers: { 'content-type': 'application/xml', ...headers },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message><Resource>${escapeXml(url.pathname)}</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>`,
    });
    const next = this.interruptions.findIndex((interruption) => interruption.path === undefined || interruption.path === url.pathname);
    const [interruption] = next >= 0 ? this.interruptions.splice(next, 1) : [];
    if (interruption && 'drop' in interruption) return null;
    if (interruption) return error(interruption.status, interruption.code, interruption.message ?? 'Please reduce your request rate.', interruption.retryAfter ? { 'retry-after': interruption.retryAfter } : {});

    const refusal = this.authenticate(request, payload);
    if (refusal) return error(403, refusal.code, refusal.message);

    const [, bucketName = '', ...rest] = url.pathname.split('/');
    const bucket = this.buckets.get(decodeURIComponent(bucketName));
    if (!bucket) return error(404, 'NoSuchBucket', 'The specified bucket does not exist');
    const key = decodeURIComponent(rest.join('/'));
    if (key === '') {
      if (request.method === 'POST' && url.searchParams.has('delete')) return this.deleteObjects(request, bucket, payload, error);
      if (request.method !== 'GET') return error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
      if (url.searchParams.get('list-type') !== '2') return error(400, 'InvalidArgument', 'Only ListObjectsV2 is served here');
      return { status: 200, code: null, headers: { 'content-type': 'application/xml' }, body: this.list(decodeURIComponent(bucketName), bucket, url.searchParams) };
    }
    if (request.method === 'PUT') {
      this.put(decodeURIComponent(bucketName), key, payload, String(request.headers['content-type'] ?? 'binary/octet-stream'));
      return { status: 200, code: null, headers: { etag: etagOf(payload) }, body: '' };
    }
    if (request.method === 'DELETE') {
      bucket.delete(key);
      return { status: 204, code: null, headers: {}, body: '' };
    }
    if (request.method !== 'GET') return error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    const object = bucket.get(key);
    if (!object) return error(404, 'NoSuchKey', 'The specified key does not exist.');
    return { status: 200, code: null, headers: { 'content-type': object.contentType, etag: etagOf(object.body), 'last-modified': object.lastModified.toUTCString(), 'content-length': String(object.body.length) }, body: object.body };
  }

  private list(name: string, bucket: Map<string, StoredObject>, query: URLSearchParams): string {
    const prefix = query.get('prefix') ?? '';
    const maxKeys = Math.min(Number(query.get('max-keys') ?? 1000) || 1000, this.pageSize);
    const token = query.get('continuation-token');
    // The token is opaque to clients; here it is the last key returned, base64-encoded.
    const after = token ? Buffer.from(token, 'base64').toString('utf8') : '';
    const keys = [...bucket.keys()].filter((key) => key.startsWith(prefix) && key > after).sort();
    const page = keys.slice(0, maxKeys);
    const truncated = keys.length > page.length;
    const contents = page
      .map((key) => {
        const object = bucket.get(key)!;
        return `<Contents><Key>${escapeXml(key)}</Key><LastModified>${object.lastModified.toISOString()}</LastModified><ETag>${escapeXml(etagOf(object.body))}</ETag><Size>${object.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      })
      .join('');
    const next = truncated ? `<NextContinuationToken>${Buffer.from(page.at(-1)!).toString('base64')}</NextContinuationToken>` : '';
    const continued = token ? `<ContinuationToken>${escapeXml(token)}</ContinuationToken>` : '';
    return `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${escapeXml(name)}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents}${continued}${next}</ListBucketResult>`;
  }

  /**
   * DeleteObjects: a `<Delete>` body of up to 1,000 `<Object><Key>` entries, with Content-MD5 (the API
   * refuses the request without it); quiet mode answers only the failures — API_DeleteObjects.html.
   */
  private deleteObjects(request: IncomingMessage, bucket: Map<string, StoredObject>, payload: Buffer, error: (status: number, code: string, message: string) => { status: number; code: string; headers: Record<string, string>; body: string }) {
    if (request.headers['content-md5'] !== createHash('md5').update(payload).digest('base64')) return error(400, 'InvalidDigest', 'The Content-MD5 you specified was invalid.');
    const keys = [...payload.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) => unescapeXml(match[1]!));
    if (keys.length > 1000) return error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
    for (const key of keys) bucket.delete(key);
    return { status: 200, code: null, headers: { 'content-type': 'application/xml' }, body: '<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>' };
  }

  /** Checks the SigV4 Authorization header against the request as received; the refusal S3 would send, or null. */
  private authenticate(request: IncomingMessage, payload: Buffer): { code: string; message: string } | null {
    const header = request.headers.authorization ?? '';
    const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(header);
    if (!header.startsWith(ALGORITHM) || !match) return { code: 'AccessDenied', message: 'Access Denied' };
    const [, keyId, day, region, signedHeaders, given] = match as unknown as [string, string, string, string, string, string];
    const secret = this.keys.get(keyId);
    if (secret === undefined) return { code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
    if (region !== REGION) return { code: 'AuthorizationHeaderMalformed', message: `The authorization header is malformed; the region '${region}' is wrong; expecting '${REGION}'` };
    const amzDate = String(request.headers['x-amz-date'] ?? '');
    const names = signedHeaders.split(';');
    if (!amzDate.startsWith(day) || !names.includes('host') || !names.includes('x-amz-date') || !names.includes('x-amz-content-sha256')) {
      return { code: 'AccessDenied', message: 'Access Denied' };
    }
    const payloadHash = payloadSha256(payload);
    if (request.headers['x-amz-content-sha256'] !== payloadHash) {
      return { code: 'XAmzContentSHA256Mismatch', message: "The provided 'x-amz-content-sha256' header does not match what was computed." };
    }
    const [rawPath, rawQuery = ''] = request.url!.split('?') as [string, string?];
    const query = rawQuery ? rawQuery.split('&').map((pair) => pair.split('=').map((part) => decodeURIComponent(part)) as [string, string]) : [];
    const headers = Object.fromEntries(names.map((name) => [name, String(request.headers[name] ?? '')]));
    const canonical = canonicalRequestText({ method: request.method!, path: rawPath, query: canonicalQuery(query.map(([name, value = '']) => [name, value])), headers, payloadHash });
    const expected = Buffer.from(signature(secret, amzDate, region, 's3', canonical));
    if (!timingSafeEqual(expected, Buffer.from(given))) return { code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided. Check your key and signing method.' };
    return null;
  }
}
