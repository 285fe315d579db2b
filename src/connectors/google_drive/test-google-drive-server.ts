import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { DRIVE_DEFAULT, FILE_DEFAULT, fileNotFound, googleError, json, matcherOf, paginate, readBody, select } from './test-google-drive-protocol.js';
import { closeLoopback, listenOnLoopback, recordedRequest, type RecordedRequest } from '../../platform/http/test-loopback-server.js';

/**
 * Test helper: a local HTTP server speaking the part of the Google Drive API v3 and of Google's
 * OAuth 2 token endpoint the google_drive connector uses, for one signed-in user. Shapes come from:
 *
 * - Google's discovery document for drive:v3 (googleapis/google-api-nodejs-client, discovery/drive-v3.json;
 *   https://www.googleapis.com/discovery/v1/apis/drive/v3/rest): paths under `/drive/v3/`;
 *   `files.list` (`q`, `corpora` user|drive|allDrives, `driveId`, `includeItemsFromAllDrives`,
 *   `supportsAllDrives`, `pageSize` 1–1000 default 100, `pageToken`) answering `{kind: "drive#fileList",
 *   nextPageToken?, incompleteSearch, files}`; `files.get` (`root` is My Drive; `alt=media` for content);
 *   `files.export` (`mimeType`); `drives.list` (`pageSize` 1–100 default 10) and `drives.get`;
 *   `changes.getStartPageToken` (`{kind: "drive#startPageToken", startPageToken}`) and `changes.list`
 *   (`pageToken` required, `includeItemsFromAllDrives`, `driveId`, `includeRemoved` default true) answering
 *   `{kind: "drive#changeList", nextPageToken? | newStartPageToken?, changes: [{kind: "drive#change",
 *   changeType: "file"|"drive", time, removed, fileId, file?, driveId?, drive?}]}`.
 * - The File resource (developers.google.com/drive/api/reference/rest/v3/files): `id`, `name`, `mimeType`,
 *   `parents`, `driveId`, `webViewLink`, `createdTime`, `modifiedTime`, `md5Checksum` and `size` (int64 as
 *   a string; binary files only), `trashed`, `owners` (none for shared drive items), `permissions`.
 * - Partial responses (developers.google.com/drive/api/guides/fields-parameter): `fields` selects what is
 *   returned (`files(id,owners(emailAddress))`); without it only `kind,id,name,mimeType` of each item.
 * - Query terms (developers.google.com/drive/api/guides/ref-search-terms): `trashed = false`,
 *   `mimeType = '…'` / `!= '…'`, `'<id>' in parents`, joined with `and`.
 * - Errors (developers.google.com/drive/api/guides/handle-errors): `{"error": {"code", "message", "errors":
 *   [{"domain", "reason", "message", "location"?, "locationType"?}], "status"?}}`: 401 `authError`
 *   (`UNAUTHENTICATED`, with `WWW-Authenticate: Bearer …`), 404 `notFound`, 400 `invalid`/`badRequest`,
 *   403 `userRateLimitExceeded` / `rateLimitExceeded` / `dailyLimitExceeded`, 429 `rateLimitExceeded`
 *   (with `Retry-After` when asked), 403 `fileNotDownloadable` (alt=media on a Google Doc) and
 *   `exportSizeLimitExceeded` (exports above 10 MB).
 * - OAuth (developers.google.com/identity/protocols/oauth2/web-server): `POST /token` with a form body and
 *   client_id/client_secret in it; `authorization_code` (with `redirect_uri` and the PKCE `code_verifier`,
 *   S256) answers `access_token`, `expires_in` (3599), `refresh_token`, `scope`, `token_type: "Bearer"`;
 *   `refresh_token` answers a new access token without a new refresh token. Refusals are
 *   `{"error": "invalid_grant", "error_description": "Bad Request"}` (400) and `invalid_client` (401).
 */

export const FOLDER = 'application/vnd.google-apps.folder';
export const GOOGLE_DOC = 'application/vnd.google-apps.document';
export const GOOGLE_SHEET = 'application/vnd.google-apps.spreadsheet';
export const GOOGLE_SLIDES = 'application/vnd.google-apps.presentation';
const EXPORT_LIMIT_BYTES = 10 * 1024 * 1024;

export interface FakePermission {
  type: 'user' | 'group' | 'domain' | 'anyone';
  role: 'owner' | 'organizer' | 'fileOrganizer' | 'writer' | 'commenter' | 'reader';
  emailAddress?: string;
  domain?: string;
}

export interface FakeItem {
  id: string;
  name: string;
  mimeType: string;
  parents?: string[];
  driveId?: string;
  createdTime: string;
  modifiedTime: string;
  trashed: boolean;
  ownerEmail?: string;
  permissions?: FakePermission[];
  /** The bytes of a binary file. */
  content?: Buffer;
  /** What Google's own formats export as, by MIME type. */
  exports?: Record<string, string | Buffer>;
}

export interface FakeDrive {
  id: string;
  name: string;
  createdTime: string;
}

interface ChangeEntry {
  seq: number;
  kind: 'file' | 'drive';
  id: string;
  time: string;
  /** The shared drive of an item removed with its drive (the item itself is gone). */
  driveId?: string;
}


/** An answer given instead of the real one to the next `times` requests whose path matches. */
interface Failure {
  path: RegExp;
  /** Matching requests answered normally first. */
  after: number;
  times: number;
  status: number;
  reason: string;
  retryAfterSeconds?: number;
}

const USER = { displayName: 'Ada Lovelace', emailAddress: 'ada@example.com' };
const ROOT_ID = '0AMyDriveRootFolder';

export class FakeGoogleDrive {
  readonly requests: RecordedRequest[] = [];
  readonly items = new Map<string, FakeItem>();
  readonly drives = new Map<string, FakeDrive>();
  readonly clientId = 'fake-client.apps.googleusercontent.com';
  readonly clientSecret = 'fake-client-secret';
  readonly rootId = ROOT_ID;
  private readonly accessTokens = new Set<string>();
  private readonly refreshTokens = new Set<string>();
  private readonly codes = new Map<string, { challenge: string; redirectUri: string }>();
  private readonly changes: ChangeEntry[] = [];
  private readonly failures: Failure[] = [];
  private nextSeq = 1;
  private clock = Date.parse('2025-03-01T09:00:00.000Z');

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeGoogleDrive> {
    let fake: FakeGoogleDrive | null = null;
    const server = createServer((request, response) => {
      fake!.handle(request, response).catch((error: unknown) => {
        response.statusCode = 500;
        response.end(String(error));
      });
    });
    fake = new FakeGoogleDrive(server, await listenOnLoopback(server));
    return fake;
  }

  close(): Promise<void> {
    return closeLoopback(this.server);
  }

  /** An access token valid until revoked (what a sign-in or a refresh would give). */
  issueAccessToken(): string {
    const token = `ya29.${randomBytes(12).toString('hex')}`;
    this.accessTokens.add(token);
    return token;
  }

  /** Access tokens expire after an hour: this one now answers 401. */
  expireAccessToken(token: string): void {
    this.accessTokens.delete(token);
  }

  /** What the consent screen hands the redirect: a code bound to the PKCE challenge and redirect URI. */
  issueAuthorizationCode(codeVerifier: string, redirectUri: string): string {
    return this.approve(createHash('sha256').update(codeVerifier).digest('base64url'), redirectUri);
  }

  /** The user consenting on the screen an authorization request opened: a code for its S256 challenge and redirect URI. */
  approve(codeChallenge: string, redirectUri: string): string {
    const code = `4/${randomBytes(8).toString('hex')}`;
    this.codes.set(code, { challenge: codeChallenge, redirectUri });
    return code;
  }

  /** The user removes the app's access (myaccount.google.com/permissions): every token it holds stops working. */
  revokeAccess(): void {
    this.accessTokens.clear();
    this.refreshTokens.clear();
  }

  /** `times` requests whose path matches (after `after` of them) answer an error (Google's body) instead. */
  fail(path: RegExp, failure: { status: number; reason: string; retryAfterSeconds?: number; times?: number; after?: number }): void {
    this.failures.push({ path, times: 1, after: 0, ...failure });
  }

  /** What `changes/startPageToken` answers now. */
  get startPageToken(): string {
    return String(this.nextSeq);
  }

  requestsTo(path: RegExp): RecordedRequest[] {
    return this.requests.filter((request) => path.test(request.path));
  }

  // --- The user's drive, as the tests shape it; every change is recorded in the changes list. ---

  private tick(): string {
    this.clock += 60_000;
    return new Date(this.clock).toISOString();
  }

  private recordChange(kind: 'file' | 'drive', id: string, time: string): void {
    this.changes.push({ seq: this.nextSeq++, kind, id, time });
  }

  addDrive(id: string, name: string): FakeDrive {
    const drive = { id, name, createdTime: this.tick() };
    this.drives.set(id, drive);
    this.recordChange('drive', id, drive.createdTime);
    return drive;
  }

  /** The user leaves (or loses) a shared drive: its items are removed from their changes list too ("loss of access"). */
  removeDrive(id: string): void {
    const time = this.tick();
    this.drives.delete(id);
    for (const item of [...this.items.values()].filter((candidate) => candidate.driveId === id)) {
      this.items.delete(item.id);
      this.changes.push({ seq: this.nextSeq++, kind: 'file', id: item.id, time, driveId: id });
    }
    this.recordChange('drive', id, time);
  }

  add(item: Omit<FakeItem, 'createdTime' | 'modifiedTime' | 'trashed'> & { parent?: string }): FakeItem {
    const time = this.tick();
    const { parent, ...rest } = item;
    const parents = rest.parents ?? [parent ?? rest.driveId ?? ROOT_ID];
    const stored: FakeItem = { ...rest, parents, createdTime: time, modifiedTime: time, trashed: false, ...(rest.driveId ? {} : { ownerEmail: USER.emailAddress }) };
    this.items.set(stored.id, stored);
    this.recordChange('file', stored.id, time);
    return stored;
  }

  update(id: string, change: Partial<Pick<FakeItem, 'name' | 'content' | 'exports' | 'parents' | 'permissions'>>): void {
    const item = this.items.get(id);
    if (!item) throw new Error(`no item ${id}`);
    const time = this.tick();
    Object.assign(item, change, { modifiedTime: time });
    this.recordChange('file', id, time);
  }

  /** Trashed with everything below it ("either explicitly or from a trashed parent folder"), each a change. */
  trash(id: string): void {
    const time = this.tick();
    const trashed = [id];
    for (let index = 0; index < trashed.length; index++) {
      this.items.get(trashed[index]!)!.trashed = true;
      this.recordChange('file', trashed[index]!, time);
      for (const child of this.items.values()) if (child.parents?.includes(trashed[index]!)) trashed.push(child.id);
    }
  }

  /** Deleted for good (emptied from the trash): the changes list reports it `removed`. */
  remove(id: string): void {
    this.items.delete(id);
    this.recordChange('file', id, this.tick());
  }

  // --- HTTP ---

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    this.requests.push(recordedRequest(request));
    if (request.method === 'POST' && url.pathname === '/token') return this.token(await readBody(request), response);
    const failure = this.failures.find((candidate) => candidate.times > 0 && candidate.path.test(url.pathname) && candidate.after-- <= 0);
    if (failure) {
      failure.times--;
      const headers: Record<string, string> = failure.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failure.retryAfterSeconds) };
      return googleError(response, failure.status, failure.reason, failure.reason === 'rateLimitExceeded' || failure.reason === 'userRateLimitExceeded' ? 'Rate Limit Exceeded' : 'Request failed', headers);
    }
    if (request.method !== 'GET' || !url.pathname.startsWith('/drive/v3/')) return googleError(response, 404, 'notFound', 'Not Found');
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!bearer || !this.accessTokens.has(bearer)) {
      response.setHeader('www-authenticate', 'Bearer realm="https://accounts.google.com/", error="invalid_token"');
      return googleError(
        response,
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        {},
        { status: 'UNAUTHENTICATED', location: 'Authorization', locationType: 'header' },
      );
    }
    const path = url.pathname.slice('/drive/v3/'.length).split('/').map(decodeURIComponent);
    const params = url.searchParams;
    if (path[0] === 'files' && path.length === 1) return this.listFiles(params, response);
    if (path[0] === 'files' && path.length === 2) return this.getFile(path[1]!, params, response);
    if (path[0] === 'files' && path.length === 3 && path[2] === 'export') return this.exportFile(path[1]!, params, response);
    if (path[0] === 'drives' && path.length === 1) return this.listDrives(params, response);
    if (path[0] === 'drives' && path.length === 2) {
      const drive = this.drives.get(path[1]!);
      if (!drive) return googleError(response, 404, 'notFound', `Shared drive not found: ${path[1]}`, {}, { location: 'driveId', locationType: 'parameter' });
      return json(response, 200, select(driveResource(drive), params.get('fields'), DRIVE_DEFAULT));
    }
    if (path[0] === 'changes' && path[1] === 'startPageToken') return json(response, 200, { kind: 'drive#startPageToken', startPageToken: this.startPageToken });
    if (path[0] === 'changes' && path.length === 1) return this.listChanges(params, response);
    return googleError(response, 404, 'notFound', 'Not Found');
  }

  private visible(item: FakeItem, params: URLSearchParams): boolean {
    // Shared drive items exist only for applications that say they support shared drives.
    return !item.driveId || params.get('supportsAllDrives') === 'true';
  }

  private listFiles(params: URLSearchParams, response: ServerResponse) {
    const corpora = params.get('corpora') ?? 'user';
    const driveId = params.get('driveId');
    const allDrives = params.get('includeItemsFromAllDrives') === 'true';
    if (corpora === 'drive' && (!driveId || !allDrives || params.get('supportsAllDrives') !== 'true')) {
      return googleError(response, 400, 'invalid', 'The includeItemsFromAllDrives parameter must be set to true when driveId is specified.', {}, { location: 'includeItemsFromAllDrives', locationType: 'parameter' });
    }
    if (corpora === 'drive' && !this.drives.has(driveId!)) return googleError(response, 404, 'notFound', `Shared drive not found: ${driveId}`, {}, { location: 'driveId', locationType: 'parameter' });
    const matches = matcherOf(params.get('q') ?? '');
    if (!matches) return googleError(response, 400, 'invalid', 'Invalid Value', {}, { location: 'q', locationType: 'parameter' });
    const inCorpus = (item: FakeItem) => (corpora === 'drive' ? item.driveId === driveId : corpora === 'allDrives' ? !item.driveId || allDrives : !item.driveId);
    const listed = [...this.items.values()].filter((item) => inCorpus(item) && matches(item)).sort((a, b) => a.id.localeCompare(b.id));
    const page = paginate(listed, params, 100, 1000, `files:${corpora}:${driveId}:${params.get('q')}`);
    if (!page) return googleError(response, 400, 'invalid', 'Invalid Value', {}, { location: 'pageToken', locationType: 'parameter' });
    const body = { kind: 'drive#fileList', ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}), incompleteSearch: false, files: page.items.map((item) => this.resource(item)) };
    json(response, 200, select(body, params.get('fields'), { kind: true, nextPageToken: true, incompleteSearch: true, files: FILE_DEFAULT }));
  }

  private getFile(id: string, params: URLSearchParams, response: ServerResponse) {
    if (id === 'root' || id === ROOT_ID) {
      const root = { kind: 'drive#file', id: ROOT_ID, name: 'My Drive', mimeType: FOLDER, createdTime: '2020-01-01T00:00:00.000Z', modifiedTime: '2020-01-01T00:00:00.000Z', trashed: false, owners: [ownerResource()] };
      return json(response, 200, select(root, params.get('fields'), FILE_DEFAULT));
    }
    const item = this.items.get(id);
    if (!item || !this.visible(item, params)) return fileNotFound(response, id);
    if (params.get('alt') === 'media') {
      if (!item.content) return googleError(response, 403, 'fileNotDownloadable', 'Only files with binary content can be downloaded. Use Export with Docs Editors files.', {}, { location: 'alt', locationType: 'parameter' });
      response.writeHead(200, { 'content-type': item.mimeType, 'content-length': item.content.length });
      return void response.end(item.content);
    }
    json(response, 200, select(this.resource(item), params.get('fields'), FILE_DEFAULT));
  }

  private exportFile(id: string, params: URLSearchParams, response: ServerResponse) {
    const item = this.items.get(id);
    if (!item) return fileNotFound(response, id);
    const mimeType = params.get('mimeType');
    if (!mimeType) return googleError(response, 400, 'required', 'Required parameter: mimeType', {}, { location: 'mimeType', locationType: 'parameter' });
    if (!item.exports) return googleError(response, 403, 'fileNotExportable', 'Export only supports Docs Editors files.');
    const exported = item.exports[mimeType];
    if (exported === undefined) return googleError(response, 400, 'badRequest', 'The requested conversion is not supported.', {}, { location: 'mimeType', locationType: 'parameter' });
    const bytes = Buffer.from(exported);
    if (bytes.length > EXPORT_LIMIT_BYTES) return googleError(response, 403, 'exportSizeLimitExceeded', 'This file is too large to be exported.');
    response.writeHead(200, { 'content-type': mimeType, 'content-length': bytes.length });
    response.end(bytes);
  }

  private listDrives(params: URLSearchParams, response: ServerResponse) {
    const drives = [...this.drives.values()].sort((a, b) => a.id.localeCompare(b.id));
    const page = paginate(drives, params, 10, 100, 'drives');
    if (!page) return googleError(response, 400, 'invalid', 'Invalid Value', {}, { location: 'pageToken', locationType: 'parameter' });
    const body = { kind: 'drive#driveList', ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}), drives: page.items.map(driveResource) };
    json(response, 200, select(body, params.get('fields'), { kind: true, nextPageToken: true, drives: DRIVE_DEFAULT }));
  }

  /**
   * Changes from the page token on; an item changed several times is listed once, at its latest
   * change, with its state now (as Google lists changes).
   */
  private listChanges(params: URLSearchParams, response: ServerResponse) {
    const token = params.get('pageToken');
    if (!token) return googleError(response, 400, 'required', 'Required parameter: pageToken', {}, { location: 'pageToken', locationType: 'parameter' });
    const from = Number(token);
    if (!/^\d+$/.test(token) || from < 1 || from > this.nextSeq) return googleError(response, 400, 'invalid', 'Invalid Value', {}, { location: 'pageToken', locationType: 'parameter' });
    const driveId = params.get('driveId');
    const allDrives = params.get('includeItemsFromAllDrives') === 'true';
    if (driveId && !allDrives) return googleError(response, 400, 'invalid', 'The includeItemsFromAllDrives parameter must be set to true when driveId is specified.', {}, { location: 'includeItemsFromAllDrives', locationType: 'parameter' });
    const pageSize = Math.min(1000, Number(params.get('pageSize') ?? 100));
    const latest = new Map<string, ChangeEntry>();
    for (const entry of this.changes) if (entry.seq >= from) latest.set(`${entry.kind}:${entry.id}`, entry);
    const inScope = (entry: ChangeEntry) => {
      const itemDrive = entry.kind === 'drive' ? entry.id : (this.items.get(entry.id)?.driveId ?? entry.driveId);
      if (driveId) return itemDrive === driveId || (entry.kind === 'file' && !this.items.has(entry.id) && !entry.driveId);
      return allDrives || (entry.kind === 'file' && !itemDrive);
    };
    const entries = [...latest.values()].filter(inScope).sort((a, b) => a.seq - b.seq);
    const page = entries.slice(0, pageSize);
    const more = entries.length > pageSize;
    const changes = page.map((entry) => {
      if (entry.kind === 'drive') {
        const drive = this.drives.get(entry.id);
        return { kind: 'drive#change', changeType: 'drive', time: entry.time, removed: !drive, driveId: entry.id, ...(drive ? { drive: driveResource(drive) } : {}) };
      }
      const item = this.items.get(entry.id);
      return { kind: 'drive#change', changeType: 'file', time: entry.time, removed: !item, fileId: entry.id, ...(item ? { file: this.resource(item) } : {}) };
    });
    const body = { kind: 'drive#changeList', ...(more ? { nextPageToken: String(page.at(-1)!.seq + 1) } : { newStartPageToken: String(this.nextSeq) }), changes };
    json(response, 200, select(body, params.get('fields'), { kind: true, nextPageToken: true, newStartPageToken: true, changes: { kind: true, changeType: true, time: true, removed: true, fileId: true, driveId: true, file: FILE_DEFAULT, drive: DRIVE_DEFAULT } }));
  }

  private token(body: string, response: ServerResponse) {
    const form = new URLSearchParams(body);
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      return json(response, 401, { error: 'invalid_client', error_description: 'Unauthorized' });
    }
    const refused = () => json(response, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
    const scope = 'https://www.googleapis.com/auth/drive.readonly';
    if (form.get('grant_type') === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      if (!code || code.redirectUri !== form.get('redirect_uri') || code.challenge !== createHash('sha256').update(verifier).digest('base64url')) return refused();
      const refreshToken = `1//${randomBytes(12).toString('hex')}`;
      this.refreshTokens.add(refreshToken);
      return json(response, 200, { access_token: this.issueAccessToken(), expires_in: 3599, refresh_token: refreshToken, scope, token_type: 'Bearer' });
    }
    if (form.get('grant_type') === 'refresh_token') {
      if (!this.refreshTokens.has(form.get('refresh_token') ?? '')) return refused();
      return json(response, 200, { access_token: this.issueAccessToken(), expires_in: 3599, scope, token_type: 'Bearer' });
    }
    json(response, 400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${form.get('grant_type')}` });
  }

  private resource(item: FakeItem) {
    return {
      kind: 'drive#file',
      id: item.id,
      name: item.name,
      mimeType: item.mimeType,
      ...(item.parents ? { parents: item.parents } : {}),
      ...(item.driveId ? { driveId: item.driveId } : {}),
      webViewLink: webViewLink(item),
      createdTime: item.createdTime,
      modifiedTime: item.modifiedTime,
      ...(item.content ? { md5Checksum: createHash('md5').update(item.content).digest('hex'), size: String(item.content.length) } : {}),
      trashed: item.trashed,
      ...(item.ownerEmail ? { owners: [ownerResource()] } : {}),
      ...(item.permissions ? { permissions: item.permissions.map((permission, index) => ({ kind: 'drive#permission', id: `perm${index}`, ...permission })) } : {}),
    };
  }
}

const ownerResource = () => ({ kind: 'drive#user', ...USER, me: true, permissionId: '0123456789' });
const driveResource = (drive: FakeDrive) => ({ kind: 'drive#drive', id: drive.id, name: drive.name, createdTime: drive.createdTime });

function webViewLink(item: FakeItem): string {
  if (item.mimeType === FOLDER) return `https://drive.google.com/drive/folders/${item.id}`;
  if (item.mimeType === GOOGLE_DOC) return `https://docs.google.com/document/d/${item.id}/edit?usp=drivesdk`;
  if (item.mimeType === GOOGLE_SHEET) return `https://docs.google.com/spreadsheets/d/${item.id}/edit?usp=drivesdk`;
  if (item.mimeType === GOOGLE_SLIDES) return `https://docs.google.com/presentation/d/${item.id}/edit?usp=drivesdk`;
  return `https://drive.google.com/file/d/${item.id}/view?usp=drivesdk`;
}
