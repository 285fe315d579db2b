import path from 'node:path';
import { z } from 'zod';
import { SourceConfigError, type Breadcrumb, type Connector, type SkippedItem, type SourceEntity, type SourceItem, type SyncContext } from '../connector.js';
import { nonBlankString } from '../contract/schemas.js';
import { EXTRACTION_VERSION, extractText, isSupported } from '../text-extraction/extract-text.js';
import type { BucketTarget } from '../../platform/object-storage/bucket-address.js';
import { ObjectStorageError, type ListedObject } from '../../platform/object-storage/s3-answers.js';
import type { SigningKeys } from '../../platform/object-storage/sigv4.js';
import { S3Client, type S3ClientContext } from './s3-client.js';

/**
 * `s3`: the objects of a bucket (under a prefix) on AWS S3 or an S3-compatible store (MinIO,
 * Cloudflare R2, Ceph RGW…), read with an access key through the S3 REST API. Objects whose type the
 * text extraction reads (as `local_folder` does) become `file` entities with their key as id; the
 * key's folders become `folder` entities and breadcrumbs.
 *
 * Each run lists the whole prefix (ListObjectsV2) and is `complete`, so objects gone from the bucket
 * are removed. An object whose ETag and Last-Modified are those of the previous run is a keep
 * marker and is not downloaded again. Objects left out are reported (SyncContext.reportSkipped) by
 * key, in the words `local_folder` uses for the same causes; objects without a type (no extension,
 * `binary/octet-stream`) are read when their content is text.
 */

const DEFAULT_REGION = 'us-east-1';

const config = z.strictObject({
  bucket: nonBlankString()
    .transform((name) => name.trim())
    .meta({ title: 'Bucket' }),
  endpoint: z
    .string()
    .default('')
    .transform((origin) => origin.trim())
    .meta({ title: 'Endpoint', description: 'Origin of an S3-compatible store (http://minio.internal:9000, https://<account>.r2.cloudflarestorage.com); empty for AWS S3.' }),
  region: z
    .string()
    .default(DEFAULT_REGION)
    .transform((region) => region.trim() || DEFAULT_REGION)
    .meta({ title: 'Region', description: 'Signing region (us-east-1 for MinIO unless configured, auto for R2).' }),
  prefix: z.string().default('').meta({ title: 'Key prefix', description: 'Only objects whose key starts with it (e.g. "docs/").' }),
  addressing: z
    .enum(['auto', 'path', 'virtual'])
    .default('auto')
    .meta({ title: 'Addressing style', description: 'path (endpoint/bucket/key), virtual (bucket.endpoint/key), or auto: virtual on AWS, path on a custom endpoint.' }),
  max_object_bytes: z.int().min(1).default(20 * 1024 * 1024).meta({ title: 'Largest object read (bytes)', description: 'Larger objects are skipped.' }),
  timeout_seconds: z.int().min(1).max(600).default(30).meta({ title: 'Request timeout (seconds)' }),
});

export type BucketConfig = z.output<typeof config>;

const credentials = z.strictObject({
  access_key_id: nonBlankString().meta({ title: 'Access key ID', secret: true }),
  secret_access_key: nonBlankString().meta({ title: 'Secret access key', secret: true }),
  session_token: z.string().optional().meta({ title: 'Session token', description: 'For temporary (STS) credentials only.', secret: true }),
});

type BucketCredentials = z.infer<typeof credentials>;

/**
 * What the last successful run saw of an object. `indexed` is false for objects read but without
 * text; `skipped` then says why, reported again while the object is unchanged.
 */
const objectState = z.object({ etag: z.string(), lastModified: z.string(), indexed: z.boolean(), skipped: z.string().optional() });

const cursor = z.object({
  version: z.literal(1),
  extraction: z.number(),
  /** Endpoint, bucket and prefix listed: a cursor of another listing says nothing about this one. */
  listing: z.string(),
  objects: z.record(z.string(), objectState),
  folders: z.array(z.string()),
});

export type BucketCursor = z.infer<typeof cursor>;

/** Bucket names as S3 accepts them (3–63 lower-case letters, digits, dots and hyphens). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Where the bucket is. Without an endpoint it is AWS (`s3.<region>.amazonaws.com`, virtual-hosted
 * style); a custom endpoint (MinIO, R2, Ceph) is addressed path style unless `addressing` says
 * otherwise. Buckets with dots are path style on HTTPS (their host name would not match the certificate).
 */
export function bucketTarget(config: BucketConfig): BucketTarget {
  if (!BUCKET_NAME.test(config.bucket)) throw new SourceConfigError('bucket', `"${config.bucket}" is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)`);
  if (!/^[a-z0-9-]+$/i.test(config.region)) throw new SourceConfigError('region', `"${config.region}" is not a region name`);
  let endpoint: URL;
  try {
    endpoint = new URL(config.endpoint || `https://s3.${config.region}.amazonaws.com`);
  } catch {
    throw new SourceConfigError('endpoint', `"${config.endpoint}" is not a URL`);
  }
  if ((endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') || endpoint.username || endpoint.password || endpoint.pathname !== '/' || endpoint.search) {
    throw new SourceConfigError('endpoint', `The endpoint must be an http:// or https:// origin without user info or path, such as https://s3.eu-west-1.amazonaws.com or http://minio.internal:9000`);
  }
  const pathStyle = config.addressing === 'path' || (config.addressing === 'auto' && (Boolean(config.endpoint) || config.bucket.includes('.')));
  return { endpoint, region: config.region, bucket: config.bucket, pathStyle };
}

/** `s3://`-like identity of the listing: endpoint origin and bucket (the credential target) plus the prefix. */
const bucketAddress = (target: BucketTarget) => `${target.endpoint.origin}/${target.bucket}`;

function signingKeys(keys: BucketCredentials | null): SigningKeys {
  const sessionToken = keys?.session_token?.trim();
  return { accessKeyId: keys?.access_key_id.trim() ?? '', secretAccessKey: keys?.secret_access_key.trim() ?? '', ...(sessionToken ? { sessionToken } : {}) };
}

function clientFor(config: BucketConfig, credentials: BucketCredentials | null, context: Omit<S3ClientContext, 'timeoutMs'>) {
  const target = bucketTarget(config);
  return { target, client: new S3Client(target, signingKeys(credentials), { ...context, timeoutMs: config.timeout_seconds * 1000 }) };
}

/** The previous run's cursor when it describes this listing with this extraction, else null (every object is read). */
function usableCursor(previous: BucketCursor | null, listing: string): BucketCursor | null {
  return previous && previous.extraction === EXTRACTION_VERSION && previous.listing === listing ? previous : null;
}

/** Why a listed object is not read, or null when it is a candidate. */
function skipReason(object: ListedObject, config: BucketConfig): Omit<SkippedItem, 'entityId'> | null {
  // A URL cannot carry these segments unchanged: the client would resolve them to another key.
  if (object.key.split('/').some((segment) => segment === '.' || segment === '..')) return { reason: 'key with "." or ".." segments' };
  if (!isSupported(path.posix.basename(object.key))) return { reason: 'unsupported file type' };
  if (object.size > config.max_object_bytes) return { reason: 'larger than max_object_bytes', detail: `${object.size} bytes` };
  return null;
}

/** S3's types for "no type given" (`binary/octet-stream` is its default on upload): the content decides, as for a local file. */
const UNTYPED = /^(application|binary)\/octet-stream$/i;

const connector: Connector<BucketConfig, BucketCredentials, BucketCursor> = {
  shortName: 's3',
  name: 'Amazon S3 and compatible storage',
  description:
    'Objects of a bucket on AWS S3 or an S3-compatible store (MinIO, Cloudflare R2, Ceph…), under a prefix, read with an access key: Markdown, text, HTML, PDF, DOCX and source code, with the key\'s folders as breadcrumbs. Incremental by ETag and Last-Modified; objects removed from the bucket are removed from the collection.',
  auth: { kind: 'fields', credentials },
  config,
  cursor,
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['files', 'storage'],
  outputEntityDefinitions: ['S3FolderEntity', 'S3ObjectEntity'],

  /** The keys are sent to the endpoint for this bucket: both name the target. */
  credentialTargets(settings) {
    try {
      return [bucketAddress(bucketTarget(settings))];
    } catch {
      return []; // a config that names no bucket sends nothing anywhere (validation refuses it)
    }
  },

  async validate({ config: settings, credentials: keys, http, logger }, environment) {
    const { client } = clientFor(settings, keys, { webClient: environment.webClient, signal: new AbortController().signal, logger, wait: (ms) => http.wait(ms) });
    try {
      await client.listPage(settings.prefix, null, 1);
    } catch (error) {
      // No answer at all (a refused address, DNS, timeout) is the endpoint's problem.
      if (error instanceof ObjectStorageError && error.status === 0) throw new SourceConfigError('endpoint', error.message);
      throw error;
    }
  },

  sync({ config: settings, credentials: keys, cursor: previous, http, signal, logger, expectTotal, reportSkipped }, environment) {
    const next: BucketCursor = { version: 1, extraction: EXTRACTION_VERSION, listing: '', objects: {}, folders: [] };
    return {
      complete: true,
      nextCursor: () => next,
      items: readBucket(settings, keys, previous, next, { webClient: environment.webClient, signal, logger, wait: (ms) => http.wait(ms) }, { expectTotal, reportSkipped }),
    };
  },
};

async function* readBucket(
  config: BucketConfig,
  credentials: BucketCredentials | null,
  cursor: BucketCursor | null,
  next: BucketCursor,
  context: Omit<S3ClientContext, 'timeoutMs'>,
  { expectTotal, reportSkipped }: Pick<SyncContext, 'expectTotal' | 'reportSkipped'>,
): AsyncGenerator<SourceItem> {
  const { signal, logger } = context;
  const { target, client } = clientFor(config, credentials, context);
  next.listing = `${bucketAddress(target)}/${config.prefix}`;
  const previous = usableCursor(cursor, next.listing);
  const previousFolders = new Set(previous?.folders ?? []);

  // The whole listing first: it gives the run's total and a complete run must see every key anyway.
  const candidates: ListedObject[] = [];
  const skipped = new Map<string, number>();
  const skip = (key: string, { reason, detail }: Omit<SkippedItem, 'entityId'>) => {
    skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
    logger.debug({ source: 's3', key, reason, detail }, 's3: object skipped');
    reportSkipped?.({ entityId: key, reason, ...(detail ? { detail } : {}) });
  };
  let token: string | null = null;
  do {
    const page = await client.listPage(config.prefix, token);
    for (const object of page.objects) {
      // Folder markers (empty objects named like a folder, as consoles create them) hold nothing to leave out.
      if (object.key.endsWith('/')) continue;
      const reason = skipReason(object, config);
      if (reason) skip(object.key, reason);
      else candidates.push(object);
    }
    token = page.nextContinuationToken;
  } while (token);
  candidates.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  // Folders are below the prefix's own folder ("docs/2024" lists "docs/2024-…" under "docs/").
  const rootLength = config.prefix.lastIndexOf('/') + 1;
  const foldersOf = (key: string): Breadcrumb[] => {
    const segments = key.slice(rootLength).split('/').slice(0, -1);
    return segments.map((name, index) => ({ entityId: `${key.slice(0, rootLength)}${segments.slice(0, index + 1).join('/')}/`, name, entityType: 'folder' }));
  };
  if (expectTotal) expectTotal(candidates.length + new Set(candidates.flatMap((object) => foldersOf(object.key).map((crumb) => crumb.entityId))).size);

  const yielded = new Set<string>(); // ids of the entities and keep markers of this run
  /** Folders are yielded just before the first item below them, so folders with nothing searchable stay out. */
  function* ancestors(crumbs: Breadcrumb[]): Generator<SourceItem> {
    for (const [depth, crumb] of crumbs.entries()) {
      if (yielded.has(crumb.entityId)) continue;
      yielded.add(crumb.entityId);
      next.folders.push(crumb.entityId);
      yield previousFolders.has(crumb.entityId)
        ? { keep: crumb.entityId }
        : { ...crumb, breadcrumbs: crumbs.slice(0, depth), createdAt: null, updatedAt: null, text: crumb.name, fields: { bucket: target.bucket, key: crumb.entityId }, webUrl: client.objectUrl(crumb.entityId).href };
    }
  }

  for (const object of candidates) {
    signal.throwIfAborted();
    const crumbs = foldersOf(object.key);
    const before = previous?.objects[object.key];
    if (before && before.etag === object.etag && before.lastModified === object.lastModified) {
      next.objects[object.key] = before;
      if (before.indexed) {
        yield* ancestors(crumbs);
        yielded.add(object.key);
        yield { keep: object.key };
      } else skip(object.key, { reason: before.skipped ?? 'binary content or no text' });
      continue;
    }
    const read = await client.getObject(object.key, config.max_object_bytes);
    if ('unread' in read) {
      if (read.unread === 'unreadable' && before?.indexed) {
        // Refused for now (an archived storage class…): the last copy stands until the object changes again.
        next.objects[object.key] = before;
        yield* ancestors(crumbs);
        yielded.add(object.key);
        yield { keep: object.key };
      } else skip(object.key, { reason: read.unread, detail: read.detail });
      continue;
    }
    const name = path.posix.basename(object.key);
    const contentType = read.contentType.split(';')[0]!.trim();
    const mimeType = contentType && !UNTYPED.test(contentType) ? contentType : undefined;
    const notIndexed = (reason: Omit<SkippedItem, 'entityId'>) => {
      next.objects[object.key] = { etag: object.etag, lastModified: object.lastModified, indexed: false, skipped: reason.reason };
      skip(object.key, reason);
    };
    // A name that says nothing, served as a type extraction does not read (application/zip…).
    if (!isSupported(name, mimeType)) {
      notIndexed({ reason: 'unsupported file type', detail: contentType });
      continue;
    }
    let extracted: Awaited<ReturnType<typeof extractText>>;
    try {
      extracted = await extractText({ name, bytes: read.bytes, ...(mimeType ? { mimeType } : {}) });
    } catch (error) {
      notIndexed({ reason: 'text extraction failed', detail: error instanceof Error ? error.message : String(error) });
      continue;
    }
    signal.throwIfAborted();
    if (!extracted?.text.trim()) {
      notIndexed({ reason: 'binary content or no text' });
      continue;
    }
    next.objects[object.key] = { etag: object.etag, lastModified: object.lastModified, indexed: true };
    yield* ancestors(crumbs);
    yielded.add(object.key);
    const modified = new Date(object.lastModified);
    yield {
      entityId: object.key,
      entityType: 'file',
      name,
      breadcrumbs: crumbs,
      createdAt: null,
      updatedAt: Number.isNaN(modified.getTime()) ? null : modified,
      text: extracted.text,
      fields: { bucket: target.bucket, key: object.key, size: read.bytes.length, etag: object.etag, last_modified: object.lastModified, mime_type: extracted.mimeType, extension: path.posix.extname(name).toLowerCase() },
      webUrl: client.objectUrl(object.key).href,
      file: { name, mimeType: extracted.mimeType, size: read.bytes.length, bytes: read.bytes },
      ...(extracted.language ? { language: extracted.language } : {}),
    } satisfies SourceEntity;
  }

  if (previous) {
    const gone = [...previousFolders, ...Object.entries(previous.objects).filter(([, state]) => state.indexed).map(([key]) => key)].filter((id) => !yielded.has(id));
    for (const id of new Set(gone)) yield { delete: id };
  }
  logger[skipped.size > 0 ? 'info' : 'debug']({ source: 's3', bucket: target.bucket, objects: Object.keys(next.objects).length, folders: next.folders.length, skipped: Object.fromEntries(skipped) }, 's3: listing read');
}

export default connector;
