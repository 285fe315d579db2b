import { uriEncode } from './sigv4.js';

/**
 * Where a bucket is and how its URLs are made, for every client of the S3 REST API (the s3 source,
 * the raw data store on object storage): path style (`endpoint/bucket/key`: MinIO, Ceph, most
 * self-hosted stores) or virtual-hosted style (`bucket.endpoint/key`: AWS).
 */
export interface BucketTarget {
  /** `https://s3.eu-west-1.amazonaws.com`, `http://minio.internal:9000`… (no path). */
  endpoint: URL;
  /** The region requests are signed for. */
  region: string;
  bucket: string;
  pathStyle: boolean;
}

/** The bucket's own URL (ListObjectsV2, DeleteObjects), without a query. */
export function bucketUrl({ endpoint, bucket, pathStyle }: BucketTarget): URL {
  const url = new URL(endpoint.origin);
  if (pathStyle) url.pathname = `/${uriEncode(bucket)}`;
  else url.hostname = `${bucket}.${endpoint.hostname}`;
  return url;
}

/** The URL of the object `key` (its '/' kept, everything else encoded as SigV4 signs it). */
export function objectUrl(target: BucketTarget, key: string): URL {
  const url = bucketUrl(target);
  url.pathname = `${target.pathStyle ? url.pathname : ''}/${uriEncode(key, true)}`;
  return url;
}

/** A ListObjectsV2 request (`GET /?list-type=2`) for the keys under `prefix`, after `continuationToken`. */
export function listObjectsUrl(target: BucketTarget, { prefix, continuationToken, maxKeys }: { prefix: string; continuationToken: string | null; maxKeys?: number }): URL {
  const url = bucketUrl(target);
  const query: [string, string][] = [['list-type', '2'], ...(maxKeys === undefined ? [] : [['max-keys', String(maxKeys)] as [string, string]]), ['prefix', prefix]];
  if (continuationToken) query.push(['continuation-token', continuationToken]);
  url.search = query.map(([name, value]) => `${uriEncode(name)}=${uriEncode(value)}`).join('&');
  return url;
}
