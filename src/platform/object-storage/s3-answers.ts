import { XMLParser } from 'fast-xml-parser';

/**
 * Reading what the S3 REST API answers: error bodies (`<Error><Code>…</Code><Message>…</Message></Error>`),
 * ListObjectsV2's `ListBucketResult` and DeleteObjects' `DeleteResult`, for every client of it (the s3
 * source, the raw data store on object storage).
 */

/** An S3 answer that is not a success: status (0 when there was no answer), S3's error code and a message. */
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

/** Elements that may occur once or more and are read as lists either way. */
const LISTS = new Set(['Contents', 'Error']);
const xml = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, isArray: (name) => LISTS.has(name) });

/** The code and message of an error body, empty when the body is not one (a proxy's HTML page, nothing). */
export function s3ErrorOf(body: Buffer): { code: string; message: string } {
  try {
    const error = (xml.parse(body.toString('utf8')) as { Error?: { Code?: unknown; Message?: unknown }[] }).Error?.[0];
    return { code: String(error?.Code ?? ''), message: String(error?.Message ?? '') };
  } catch {
    return { code: '', message: '' };
  }
}

export interface ListedObject {
  key: string;
  etag: string;
  lastModified: string;
  size: number;
}

export interface ListPage {
  objects: ListedObject[];
  /** Present while the listing is truncated. */
  nextContinuationToken: string | null;
}

/** The `ListBucketResult` of ListObjectsV2, as parsed (every value a string, or absent). */
interface ListBucketResult {
  Contents?: { Key?: unknown; ETag?: unknown; LastModified?: unknown; Size?: unknown }[];
  IsTruncated?: unknown;
  NextContinuationToken?: unknown;
}

/** A ListObjectsV2 answer's page, or null when the body is not a ListBucketResult (the endpoint is not an S3 API). */
export function listPageOf(body: Buffer): ListPage | null {
  const result = (xml.parse(body.toString('utf8')) as { ListBucketResult?: ListBucketResult }).ListBucketResult;
  if (!result) return null;
  const objects = (result.Contents ?? []).map((entry) => ({ key: String(entry.Key ?? ''), etag: String(entry.ETag ?? ''), lastModified: String(entry.LastModified ?? ''), size: Number(entry.Size ?? 0) }));
  const truncated = String(result.IsTruncated) === 'true';
  return { objects, nextContinuationToken: truncated && result.NextContinuationToken ? String(result.NextContinuationToken) : null };
}

/** The keys a quiet DeleteObjects answer lists as failed, with S3's code and message for each. */
export function deleteFailuresOf(body: Buffer): { code: string; message: string }[] {
  const errors = (xml.parse(body.toString('utf8')) as { DeleteResult?: { Error?: { Code?: unknown; Message?: unknown }[] } }).DeleteResult?.Error ?? [];
  return errors.map((error) => ({ code: String(error.Code ?? ''), message: String(error.Message ?? '') }));
}
