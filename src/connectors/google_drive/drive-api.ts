import { z } from 'zod';
import { CredentialsRejectedError, SourceRateLimitedError, SourceConfigError, SourceHttpError } from '../contract/errors.js';
import { SourceResponseTooLargeError } from '../contract/http-client.js';
import type { SourceBytesResponse, SourceHttpClient, SourceRequestOptions } from '../contract/source-http.js';

/**
 * The calls of the Google Drive API v3 this source makes, over the connection's HTTP client (which
 * attaches the token, refreshes it after a 401, and retries 429 and 5xx answers). Shapes follow
 * Google's discovery document for drive:v3 (https://www.googleapis.com/discovery/v1/apis/drive/v3/rest):
 * `files.list`, `files.get`, `files.export`, `drives.list`, `drives.get`, `changes.getStartPageToken`
 * and `changes.list`. Responses are read with lenient schemas (Google adds fields) that keep only
 * what the source uses.
 */

const DriveUser = z.object({ displayName: z.string().optional(), emailAddress: z.string().optional() });
const DrivePermission = z.object({ type: z.string(), role: z.string().optional(), emailAddress: z.string().optional(), domain: z.string().optional() });

export const DriveFile = z.object({
  id: z.string(),
  name: z.string(),
  mimeType: z.string(),
  /** Since 2020 an item has one parent; absent for items shared with the user that are not in their drive. */
  parents: z.array(z.string()).optional(),
  /** Present for items of a shared drive. */
  driveId: z.string().optional(),
  webViewLink: z.string().optional(),
  createdTime: z.string().optional(),
  modifiedTime: z.string().optional(),
  /** Only for files with binary content (not Google Docs, Sheets or Slides). */
  md5Checksum: z.string().optional(),
  /** int64 as a decimal string. */
  size: z.string().optional(),
  trashed: z.boolean().optional(),
  owners: z.array(DriveUser).optional(),
  /** Only returned when the user may see the item's sharing (Google leaves it out otherwise). */
  permissions: z.array(DrivePermission).optional(),
});
export type DriveFile = z.infer<typeof DriveFile>;

export const SharedDrive = z.object({ id: z.string(), name: z.string(), createdTime: z.string().optional() });
export type SharedDrive = z.infer<typeof SharedDrive>;

const FileList = z.object({ nextPageToken: z.string().optional(), incompleteSearch: z.boolean().optional(), files: z.array(DriveFile).default([]) });
const DriveList = z.object({ nextPageToken: z.string().optional(), drives: z.array(SharedDrive).default([]) });
const StartPageToken = z.object({ startPageToken: z.string() });
const Change = z.object({
  changeType: z.string().optional(),
  removed: z.boolean().default(false),
  fileId: z.string().optional(),
  file: DriveFile.optional(),
  driveId: z.string().optional(),
  drive: SharedDrive.optional(),
});
export type DriveChange = z.infer<typeof Change>;
const ChangeList = z.object({ nextPageToken: z.string().optional(), newStartPageToken: z.string().optional(), changes: z.array(Change).default([]) });

/** Google's error body (https://developers.google.com/drive/api/guides/handle-errors). */
const GoogleError = z.object({
  error: z.object({
    code: z.number().optional(),
    message: z.string().default(''),
    status: z.string().optional(),
    errors: z.array(z.object({ reason: z.string().optional(), message: z.string().optional(), location: z.string().optional() })).default([]),
  }),
});
type GoogleError = z.infer<typeof GoogleError>['error'];

/** The item fields the source reads (`fields` selects them: Google returns only what is asked for). */
export const FILE_FIELDS = 'id,name,mimeType,parents,driveId,webViewLink,createdTime,modifiedTime,md5Checksum,size,trashed,owners(displayName,emailAddress),permissions(type,role,emailAddress,domain)';
const FOLDER_FIELDS = 'id,name,mimeType,parents,driveId';
const DRIVE_FIELDS = 'id,name,createdTime';

/** Which items a listing covers: the user's corpus (My Drive and what is shared with them) or one shared drive. */
export type Corpus = { kind: 'user' } | { kind: 'drive'; driveId: string };

/** Reasons Google gives for a per-user or per-project rate limit (403 or 429): retry with exponential backoff. */
const RATE_LIMIT_REASONS = new Set(['userRateLimitExceeded', 'rateLimitExceeded']);
/** Daily or project quotas: retrying within the run does not help. */
const QUOTA_REASONS = new Set(['dailyLimitExceeded', 'quotaExceeded', 'sharingRateLimitExceeded']);
/** The token lacks the scope (or the API is not enabled for it): the user must sign in again. */
const SCOPE_REASONS = new Set(['insufficientPermissions', 'authError', 'accessNotConfigured']);
/** Google's backoff: 1, 2, 4, 8, 16 s plus up to a second of jitter, then the job is retried later. */
const RATE_LIMIT_RETRIES = 5;
const QUOTA_RETRY_SECONDS = 3600;

/** Google refused a listing's page token (400 on `pageToken`): it documents them as discardable. */
export class PageTokenRefusedError extends SourceHttpError {
  override name = 'PageTokenRefusedError';
}

/** A file's content that cannot be read, with a short reason for reportSkipped. */
export class UnreadableContent {
  constructor(
    readonly reason: string,
    readonly detail?: string,
  ) {}
}

export class DriveApi {
  private readonly base: URL;

  constructor(
    private readonly http: SourceHttpClient,
    apiUrl: string,
  ) {
    this.base = new URL('drive/v3/', apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`);
  }

  /** One page of the items of `corpus` matching `q` (`files.list`). */
  async listFiles(corpus: Corpus, q: string, pageSize: number, pageToken: string | null) {
    const query = { q, pageSize, pageToken: pageToken ?? undefined, fields: `nextPageToken,incompleteSearch,files(${FILE_FIELDS})`, ...corpusQuery(corpus) };
    return (await this.json('files', FileList, query))!;
  }

  /** One page of the shared drives the user is a member of (`drives.list`, at most 100 a page). */
  async listDrives(pageToken: string | null) {
    return (await this.json('drives', DriveList, { pageSize: 100, pageToken: pageToken ?? undefined, fields: `nextPageToken,drives(${DRIVE_FIELDS})` }))!;
  }

  /** A shared drive, or null when it does not exist or the user is not a member. */
  getDrive(driveId: string) {
    return this.json(`drives/${encodeURIComponent(driveId)}`, SharedDrive, { fields: DRIVE_FIELDS }, { nullOn404: true });
  }

  /** The shared drive a connection reads: SourceConfigError on `drive_id` when the user is not a member. */
  async requireDrive(driveId: string): Promise<SharedDrive> {
    const drive = await this.getDrive(driveId);
    if (!drive) throw new SourceConfigError('drive_id', `No shared drive "${driveId}" among those this account is a member of`);
    return drive;
  }

  /** A folder's name and parent (for breadcrumbs), or null when the user cannot see it. `root` is My Drive. */
  getFolder(folderId: string) {
    return this.json(`files/${encodeURIComponent(folderId)}`, DriveFile, { fields: FOLDER_FIELDS, supportsAllDrives: true }, { nullOn404: true });
  }

  /** Where the changes after now start (`changes.getStartPageToken`). */
  async startPageToken(corpus: Corpus): Promise<string> {
    const query = { supportsAllDrives: true, ...(corpus.kind === 'drive' ? { driveId: corpus.driveId } : {}) };
    return (await this.json('changes/startPageToken', StartPageToken, query))!.startPageToken;
  }

  /**
   * One page of changes (`changes.list`); null when Google refuses the page token (400 or 404), which
   * it documents as "discard it and start over".
   */
  listChanges(pageToken: string, scope: { corpus: Corpus; allDrives: boolean }, pageSize: number) {
    const query = {
      pageToken,
      pageSize,
      includeRemoved: true,
      fields: `nextPageToken,newStartPageToken,changes(changeType,removed,fileId,driveId,file(${FILE_FIELDS}),drive(${DRIVE_FIELDS}))`,
      supportsAllDrives: true,
      ...(scope.corpus.kind === 'drive' ? { driveId: scope.corpus.driveId, includeItemsFromAllDrives: true } : { includeItemsFromAllDrives: scope.allDrives }),
    };
    return this.json('changes', ChangeList, query, { nullOn404: true, nullOn400: true });
  }

  /** A Google Docs, Sheets or Slides file exported as `mimeType` (`files.export`, 10 MB at most). */
  exportFile(fileId: string, mimeType: string, maxBytes: number) {
    return this.bytes(`files/${encodeURIComponent(fileId)}/export`, { mimeType }, maxBytes);
  }

  /** A file's content (`files.get` with `alt=media`). */
  download(fileId: string, maxBytes: number) {
    return this.bytes(`files/${encodeURIComponent(fileId)}`, { alt: 'media', supportsAllDrives: true }, maxBytes);
  }

  private async json<T extends z.ZodType>(
    path: string,
    schema: T,
    query: SourceRequestOptions['query'],
    options: { nullOn404?: boolean; nullOn400?: boolean } = {},
  ): Promise<z.infer<T> | null> {
    const url = new URL(path, this.base);
    const response = await this.withRateLimitRetries(async () => {
      const answer = await this.http.getJson(url, { query, acceptStatuses: [400, 403, 404] });
      return { ...answer, error: answer.status >= 400 ? googleError(answer.body) : null };
    });
    if ((response.status === 404 && options.nullOn404) || (response.status === 400 && options.nullOn400)) return null;
    if (response.error) throw this.refusal(response.status, url, response.error);
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) throw new SourceHttpError(response.status, url.href, `not a ${path.split('/')[0]} answer of the Drive API v3: ${z.prettifyError(parsed.error).slice(0, 200)}`);
    return parsed.data;
  }

  /** Content, or why it cannot be read (not downloadable, too large to export, gone meanwhile). */
  private async bytes(path: string, query: SourceRequestOptions['query'], maxBytes: number): Promise<Buffer | UnreadableContent> {
    const url = new URL(path, this.base);
    let response: SourceBytesResponse & { error: GoogleError | null };
    try {
      response = await this.withRateLimitRetries(async () => {
        const answer = await this.http.getBytes(url, { query, maxBytes, acceptStatuses: [400, 403, 404, 413] });
        return { ...answer, error: answer.status >= 400 ? googleError(parseJson(answer.bytes)) : null };
      });
    } catch (error) {
      if (error instanceof SourceResponseTooLargeError) return new UnreadableContent('too large', `more than ${maxBytes} bytes`);
      throw error;
    }
    if (!response.error) return response.bytes;
    const reason = response.error.errors[0]?.reason;
    if (response.status === 404) return new UnreadableContent('gone', 'deleted or unshared since it was listed');
    if (reason === 'exportSizeLimitExceeded' || response.status === 413) return new UnreadableContent('too large', response.error.message);
    if (response.status === 403 && !SCOPE_REASONS.has(reason ?? '') && !QUOTA_REASONS.has(reason ?? '')) return new UnreadableContent('not downloadable', response.error.message || reason);
    throw this.refusal(response.status, url, response.error);
  }

  /**
   * Runs a request again while Google answers a rate limit with a 403 (`userRateLimitExceeded`,
   * `rateLimitExceeded`), which the HTTP client does not retry on its own: Google asks for
   * exponential backoff (https://developers.google.com/drive/api/guides/limits). 429s are the client's.
   */
  private async withRateLimitRetries<R extends { status: number; error: GoogleError | null }>(request: () => Promise<R>): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      const response = await request();
      const reason = response.error?.errors[0]?.reason;
      if (response.status !== 403 || !reason || !RATE_LIMIT_REASONS.has(reason)) return response;
      if (attempt >= RATE_LIMIT_RETRIES) throw new SourceRateLimitedError(`Google Drive kept answering ${reason} after ${RATE_LIMIT_RETRIES} retries`, 60);
      await this.http.wait(2 ** attempt * 1000 + Math.random() * 1000);
    }
  }

  private refusal(status: number, url: URL, error: GoogleError): Error {
    const reason = error.errors[0]?.reason ?? error.status ?? '';
    const message = error.message || reason;
    if (status === 400 && error.errors[0]?.location === 'pageToken') return new PageTokenRefusedError(status, `${url.origin}${url.pathname}`, message);
    if (status === 403 && QUOTA_REASONS.has(reason)) return new SourceRateLimitedError(`Google Drive quota exceeded (${reason}): ${message}`, QUOTA_RETRY_SECONDS);
    if (status === 403 && SCOPE_REASONS.has(reason)) return new CredentialsRejectedError(`Google Drive refused the token (${reason}): ${message}. Sign in again and grant read access to Drive.`);
    return new SourceHttpError(status, `${url.origin}${url.pathname}`, message);
  }
}

function corpusQuery(corpus: Corpus) {
  if (corpus.kind === 'drive') return { corpora: 'drive', driveId: corpus.driveId, includeItemsFromAllDrives: true, supportsAllDrives: true };
  return { corpora: 'user', supportsAllDrives: true };
}

function googleError(body: unknown): GoogleError {
  const parsed = GoogleError.safeParse(body);
  return parsed.success ? parsed.data.error : { message: '', errors: [] };
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
}
