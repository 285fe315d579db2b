import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3 requests, in the Authorization header, as the S3
 * API reference describes it ("Signature Calculations for the Authorization Header: Transferring
 * Payload in a Single Chunk"): a canonical request (method, URI, sorted query, signed headers,
 * payload hash), a string to sign over its SHA-256 with the date and credential scope, and an
 * HMAC-SHA256 chain of date → region → service → "aws4_request" from the secret.
 */

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const EMPTY_PAYLOAD_SHA256 = createHash('sha256').update('').digest('hex');

export interface SigningKeys {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS) carry a session token, sent and signed as x-amz-security-token. */
  sessionToken?: string;
}

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters, '/' kept when `keepSlash`. */
export function uriEncode(text: string, keepSlash = false): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(char) || (keepSlash && char === '/')) encoded += char;
    else encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** Query parameters sorted by encoded name then value, each encoded, joined by '&'. */
export function canonicalQuery(parameters: [string, string][]): string {
  return parameters
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

export interface CanonicalRequest {
  method: string;
  /** The request path as sent (already URI-encoded; S3 paths are not encoded twice). */
  path: string;
  query: string;
  /** Lower-case names to the values signed, trimmed. */
  headers: Record<string, string>;
  payloadHash: string;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

export function canonicalRequestText(request: CanonicalRequest): string {
  const names = Object.keys(request.headers).sort();
  const headerLines = names.map((name) => `${name}:${request.headers[name]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  return [request.method, request.path, request.query, headerLines, names.join(';'), request.payloadHash].join('\n');
}

/** The hex signature of a canonical request at `amzDate` (YYYYMMDD'T'HHMMSS'Z') for `region` and `service`. */
export function signature(secretAccessKey: string, amzDate: string, region: string, service: string, canonical: string): string {
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256(canonical)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request');
  return createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
}

const amzDateOf = (date: Date) => date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

/** The SHA-256 of a request body, hex, as `x-amz-content-sha256` carries it. */
export const payloadSha256 = (body: Buffer | string) => createHash('sha256').update(body).digest('hex');

export interface SigningRequest {
  method: string;
  /** Path and query already encoded as they are sent. */
  url: URL;
  keys: SigningKeys;
  region: string;
  now: Date;
  /** The body's SHA-256 (payloadSha256); the empty payload's by default. */
  payloadHash?: string;
  /** More headers to sign and send (content-type, content-md5…). */
  extra?: Record<string, string>;
}

/**
 * The headers of a signed request: host, x-amz-date, x-amz-content-sha256, the session token if any,
 * the extra headers, and Authorization. Used by the s3 source (GET) and the raw data store on object
 * storage (PUT, GET, DELETE, POST ?delete).
 */
export function signedHeaders({ method, url, keys, region, now, payloadHash = EMPTY_PAYLOAD_SHA256, extra = {} }: SigningRequest): Record<string, string> {
  const amzDate = amzDateOf(now);
  const signed: Record<string, string> = { host: url.host, 'x-amz-content-sha256': payloadHash, 'x-amz-date': amzDate, ...Object.fromEntries(Object.entries(extra).map(([name, value]) => [name.toLowerCase(), value])) };
  if (keys.sessionToken) signed['x-amz-security-token'] = keys.sessionToken;
  const query = canonicalQuery([...url.searchParams.entries()]);
  const canonical = canonicalRequestText({ method, path: url.pathname, query, headers: signed, payloadHash });
  const credential = `${keys.accessKeyId}/${amzDate.slice(0, 8)}/${region}/s3/aws4_request`;
  const authorization = `${ALGORITHM} Credential=${credential}, SignedHeaders=${Object.keys(signed).sort().join(';')}, Signature=${signature(keys.secretAccessKey, amzDate, region, 's3', canonical)}`;
  // The client sets Host from the URL itself.
  const sent = Object.fromEntries(Object.entries(signed).filter(([name]) => name !== 'host'));
  return { ...sent, authorization };
}
