import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { requestTokens } from '../../modules/connections/oauth/token-endpoint.js';
import { collectRun, connectionContext, parsedConfig, rejection } from '../connector-testing.js';
import { CredentialsRejectedError, SourceRateLimitedError, SourceConfigError } from '../contract/errors.js';
import { describeSchema, parseConfig } from '../contract/schemas.js';
import type { TokenProvider } from '../contract/source-http.js';
import { EXTRACTION_VERSION } from '../text-extraction/extract-text.js';
import googleDrive from './index.js';
import type { DriveCursor, PastedToken } from './schemas.js';
import { FakeGoogleDrive, FOLDER, GOOGLE_DOC, GOOGLE_SHEET, GOOGLE_SLIDES } from './test-google-drive-server.js';

/**
 * My Drive: Projects/Apollo/{Plan (Doc), Budget (Sheet)}, Projects/notes.md, Kickoff (Slides), and three
 * items left out (a PNG, a text file over the size limit, a Form); a file shared by someone else whose
 * folder the user cannot see; the shared drive Engineering with Runbooks/restart.md.
 */
function seed(fake: FakeGoogleDrive) {
  fake.add({ id: 'f-projects', name: 'Projects', mimeType: FOLDER });
  fake.add({ id: 'f-apollo', name: 'Apollo', mimeType: FOLDER, parent: 'f-projects' });
  fake.add({
    id: 'd-plan',
    name: 'Plan',
    mimeType: GOOGLE_DOC,
    parent: 'f-apollo',
    exports: { 'text/plain': '\uFEFFLaunch plan: countdown at T-10.' },
    permissions: [
      { type: 'user', role: 'owner', emailAddress: 'ada@example.com' },
      { type: 'user', role: 'reader', emailAddress: 'bob@example.com' },
      { type: 'domain', role: 'reader', domain: 'example.com' },
      { type: 'anyone', role: 'reader' },
    ],
  });
  fake.add({ id: 's-budget', name: 'Budget', mimeType: GOOGLE_SHEET, parent: 'f-apollo', exports: { 'text/csv': 'item,cost\r\nfuel,100\r\n' } });
  fake.add({ id: 'b-notes', name: 'notes.md', mimeType: 'text/markdown', parent: 'f-projects', content: Buffer.from('# Notes\n\nRemember the oxygen.\n'), permissions: [{ type: 'user', role: 'owner', emailAddress: 'ada@example.com' }] });
  fake.add({ id: 'p-kickoff', name: 'Kickoff', mimeType: GOOGLE_SLIDES, exports: { 'text/plain': 'Kickoff\nWelcome aboard' } });
  fake.add({ id: 'b-photo', name: 'photo.png', mimeType: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]) });
  fake.add({ id: 'b-big', name: 'big.txt', mimeType: 'text/plain', content: Buffer.alloc(5000, 'a') });
  fake.add({ id: 'g-form', name: 'Survey', mimeType: 'application/vnd.google-apps.form' });
  fake.add({ id: 'b-shared', name: 'shared.txt', mimeType: 'text/plain', parents: ['0AOtherUsersFolder'], content: Buffer.from('Shared with Ada') });
  fake.addDrive('0AEngineering', 'Engineering');
  fake.add({ id: 'f-runbooks', name: 'Runbooks', mimeType: FOLDER, driveId: '0AEngineering' });
  fake.add({ id: 'b-restart', name: 'restart.md', mimeType: 'text/markdown', driveId: '0AEngineering', parent: 'f-runbooks', content: Buffer.from('Restart the service with care.') });
}

function countsByType(entities: { entityType: string }[]) {
  const counts: Record<string, number> = {};
  for (const entity of entities) counts[entity.entityType] = (counts[entity.entityType] ?? 0) + 1;
  return counts;
}

describe("google_drive source, against a local server speaking Google's Drive API v3", () => {
  let fake: FakeGoogleDrive;
  let token: string;
  const config = (extra: Record<string, unknown> = {}) => ({ api_url: fake.url, page_size: 2, max_file_bytes: 1000, ...extra });
  const credentials = (): PastedToken => ({ access_token: token });

  beforeEach(async () => {
    fake = await FakeGoogleDrive.start();
    token = fake.issueAccessToken();
    seed(fake);
  });
  afterEach(() => fake.close());

  test('a first sync lists every drive, folder and readable file, exports Google formats, and reports what it leaves out', async () => {
    const startToken = fake.startPageToken;
    const run = await collectRun(googleDrive, { config: config(), credentials: credentials() });
    expect(run.complete).toBe(true);
    expect(countsByType(run.entities)).toEqual({ folder: 4, shared_drive: 1, file: 6 });
    expect(run.ids).toEqual(['0AEngineering', '0AMyDriveRootFolder', 'b-notes', 'b-restart', 'b-shared', 'd-plan', 'f-apollo', 'f-projects', 'f-runbooks', 'p-kickoff', 's-budget'].sort());
    expect(run.skipped.map(({ entityId, reason }) => ({ entityId, reason })).sort((a, b) => a.entityId.localeCompare(b.entityId))).toEqual([
      { entityId: 'b-big', reason: 'too large' },
      { entityId: 'b-photo', reason: 'unsupported file type' },
      { entityId: 'g-form', reason: 'unsupported file type' },
    ]);
    expect(run.byId.get('d-plan')!.text).toBe('Launch plan: countdown at T-10.');
    expect(run.byId.get('d-plan')!.fields).toMatchObject({ mime_type: GOOGLE_DOC, exported_as: 'text/plain', owners: ['ada@example.com'], md5_checksum: null });
    expect(run.byId.get('s-budget')!.text).toBe('item,cost\r\nfuel,100\r\n');
    expect(run.byId.get('p-kickoff')!.text).toBe('Kickoff\nWelcome aboard');
    const notes = run.byId.get('b-notes')!;
    expect(notes.text).toBe('# Notes\n\nRemember the oxygen.\n');
    expect(notes.fields).toMatchObject({ mime_type: 'text/markdown', size: 30, md5_checksum: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(notes.file).toMatchObject({ name: 'notes.md', size: 30 });
    // The start token is taken before the listing: what changes meanwhile comes with the next run.
    expect(run.cursor).toEqual({ version: 1, target: `${fake.url}|allDrives|`, extraction: expect.any(Number), changes_token: startToken, listing: null });
    // Every request asked for the fields it reads, and for shared drive support.
    for (const request of fake.requestsTo(/^\/drive\/v3\/files$/)) expect(Object.fromEntries(request.query)).toMatchObject({ fields: expect.stringContaining('webViewLink'), supportsAllDrives: 'true', pageSize: '2' });
    expect(fake.requestsTo(/^\/drive\/v3\/files$/).map((request) => request.query.get('corpora'))).toEqual(expect.arrayContaining(['user', 'drive']));
  });

  test('breadcrumbs follow the folder chain up to My Drive or the shared drive; web_url is the webViewLink; access comes from permissions', async () => {
    const run = await collectRun(googleDrive, { config: config(), credentials: credentials() });
    const crumbs = (id: string) => run.byId.get(id)!.breadcrumbs.map((crumb) => `${crumb.entityType}:${crumb.name}`);
    expect(crumbs('d-plan')).toEqual(['folder:My Drive', 'folder:Projects', 'folder:Apollo']);
    expect(run.byId.get('d-plan')!.breadcrumbs.map((crumb) => crumb.entityId)).toEqual(['0AMyDriveRootFolder', 'f-projects', 'f-apollo']);
    expect(crumbs('f-apollo')).toEqual(['folder:My Drive', 'folder:Projects']);
    expect(crumbs('p-kickoff')).toEqual(['folder:My Drive']);
    expect(crumbs('b-restart')).toEqual(['shared_drive:Engineering', 'folder:Runbooks']);
    // Shared with the user from a folder they cannot see: the chain starts below it.
    expect(crumbs('b-shared')).toEqual([]);
    expect(run.byId.get('d-plan')!.webUrl).toBe('https://docs.google.com/document/d/d-plan/edit?usp=drivesdk');
    expect(run.byId.get('b-notes')!.webUrl).toBe('https://drive.google.com/file/d/b-notes/view?usp=drivesdk');
    expect(run.byId.get('f-apollo')!.webUrl).toBe('https://drive.google.com/drive/folders/f-apollo');
    expect(run.byId.get('0AEngineering')!.webUrl).toBe('https://drive.google.com/drive/folders/0AEngineering');
    expect(run.byId.get('d-plan')!.access).toEqual({ viewers: ['ada@example.com', 'bob@example.com', 'domain:example.com'], isPublic: true });
    expect(run.byId.get('b-notes')!.access).toEqual({ viewers: ['ada@example.com'], isPublic: false });
    // Google returns no permissions to users who may not see them: unknown, not "nobody".
    expect(run.byId.get('p-kickoff')!.access).toBeUndefined();
  });

  test('an incremental re-sync reads the changes list: edits and additions are read again, trashed and deleted items are deleted', async () => {
    const first = await collectRun(googleDrive, { config: config(), credentials: credentials() });
    fake.update('d-plan', { exports: { 'text/plain': 'Launch plan: countdown at T-5.' } });
    fake.add({ id: 'b-log', name: 'log.txt', mimeType: 'text/plain', parent: 'f-apollo', content: Buffer.from('All systems go') });
    fake.trash('s-budget');
    fake.remove('b-notes');
    fake.add({ id: 'f-archive', name: 'Archive', mimeType: FOLDER, driveId: '0AEngineering' });
    const second = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: first.cursor });
    expect(second.complete).toBe(false);
    expect(second.ids).toEqual(['b-log', 'd-plan', 'f-archive']);
    expect(second.deletes).toEqual(['b-notes', 's-budget']);
    expect(second.keeps).toEqual([]);
    expect(second.byId.get('d-plan')!.text).toBe('Launch plan: countdown at T-5.');
    expect(second.byId.get('b-log')!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['My Drive', 'Projects', 'Apollo']);
    expect(second.byId.get('f-archive')!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['Engineering']);
    expect(Object.fromEntries(fake.requestsTo(/^\/drive\/v3\/changes$/)[0]!.query)).toMatchObject({ pageToken: first.cursor!.changes_token, includeItemsFromAllDrives: 'true', supportsAllDrives: 'true' });
    expect(second.cursor!.changes_token).not.toBe(first.cursor!.changes_token);

    const third = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: second.cursor });
    expect({ ids: third.ids, deletes: third.deletes }).toEqual({ ids: [], deletes: [] });
    expect(third.cursor).toEqual(second.cursor);
  });

  test('a renamed folder has its subtree read again with the new breadcrumbs; a trashed folder takes its subtree with it', async () => {
    const first = await collectRun(googleDrive, { config: config(), credentials: credentials() });
    fake.update('f-apollo', { name: 'Apollo 11' });
    const renamed = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: first.cursor });
    expect(renamed.ids).toEqual(['d-plan', 'f-apollo', 's-budget']);
    expect(renamed.byId.get('s-budget')!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['My Drive', 'Projects', 'Apollo 11']);
    expect(fake.requestsTo(/^\/drive\/v3\/files$/).at(-1)!.query.get('q')).toBe("'f-apollo' in parents and trashed = false");

    fake.trash('f-projects');
    const trashed = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: renamed.cursor });
    expect(trashed.ids).toEqual([]);
    expect(trashed.deletes).toEqual(['b-notes', 'd-plan', 'f-apollo', 'f-projects', 's-budget']);
  });

  test('changes pages are checkpointed, and a shared drive left is deleted', async () => {
    const first = await collectRun(googleDrive, { config: config(), credentials: credentials() });
    for (const id of ['d-plan', 'p-kickoff', 'b-notes']) fake.update(id, { name: `${id} v2` });
    fake.removeDrive('0AEngineering');
    const second = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: first.cursor });
    expect(second.ids).toEqual(['b-notes', 'd-plan', 'p-kickoff']);
    expect(second.deletes).toEqual(['0AEngineering', 'b-restart', 'f-runbooks']);
    // Six changes at two a page: a checkpoint after each page but the last, each at the next page.
    expect(second.checkpoints.map((checkpoint) => checkpoint.listing)).toEqual([null, null]);
    expect(second.checkpoints.map((checkpoint) => checkpoint.changes_token)).toEqual(fake.requestsTo(/^\/drive\/v3\/changes$/).slice(1).map((request) => request.query.get('pageToken')));
  });

  test('a 429 with Retry-After is waited out and the same page asked again; the run is complete', async () => {
    fake.fail(/^\/drive\/v3\/files$/, { status: 429, reason: 'rateLimitExceeded', retryAfterSeconds: 7, after: 1 });
    const waits: number[] = [];
    const run = await collectRun(googleDrive, { config: config(), credentials: credentials(), waits });
    expect(waits).toContain(7000);
    const listings = fake.requestsTo(/^\/drive\/v3\/files$/);
    expect(Object.fromEntries(listings[1]!.query)).toEqual(Object.fromEntries(listings[2]!.query));
    expect(run.complete).toBe(true);
    expect(run.entities).toHaveLength(11);
  });

  test("Google's 403 userRateLimitExceeded is retried with backoff; a daily limit fails the run as rate limited", async () => {
    fake.fail(/^\/drive\/v3\/drives$/, { status: 403, reason: 'userRateLimitExceeded' });
    const waits: number[] = [];
    const run = await collectRun(googleDrive, { config: config(), credentials: credentials(), waits });
    expect(fake.requestsTo(/^\/drive\/v3\/drives$/)).toHaveLength(2);
    // The first retry's backoff: a second plus up to a second of jitter.
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);
    expect(waits[0]).toBeLessThan(2000);
    expect(run.entities).toHaveLength(11);

    fake.fail(/^\/drive\/v3\/changes$/, { status: 403, reason: 'dailyLimitExceeded' });
    const error = await rejection(collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: run.cursor }));
    expect(error).toBeInstanceOf(SourceRateLimitedError);
    expect((error as SourceRateLimitedError).retryAfterSeconds).toBe(3600);
  });

  test('a run that fails half-way through the listing resumes from its last checkpoint', async () => {
    // The third listing request (the second page of My Drive's files) fails for the day.
    fake.fail(/^\/drive\/v3\/files$/, { status: 403, reason: 'dailyLimitExceeded', after: 2 });
    const checkpoints: DriveCursor[] = [];
    const failed = await rejection(collectRun(googleDrive, { config: config(), credentials: credentials(), checkpoints }));
    expect(failed).toBeInstanceOf(SourceRateLimitedError);
    const resumeFrom = checkpoints.at(-1)!;
    expect(resumeFrom.listing).toEqual({ corpus: 'user', stage: 'files', page_token: expect.any(String) });
    const failedAt = fake.requestsTo(/^\/drive\/v3\/files$/).length;

    const resumed = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor: resumeFrom, resuming: true });
    expect(resumed.complete).toBe(false);
    const listings = fake.requestsTo(/^\/drive\/v3\/files$/).slice(failedAt);
    // It starts at the checkpoint's page: no folder listing of My Drive, no first page again.
    expect(Object.fromEntries(listings[0]!.query)).toMatchObject({ corpora: 'user', pageToken: resumeFrom.listing!.page_token!, q: "trashed = false and mimeType != 'application/vnd.google-apps.folder'" });
    expect(resumed.ids).not.toContain('f-projects');
    expect(resumed.ids).toEqual(expect.arrayContaining(['b-restart', 'f-runbooks', 'p-kickoff']));
    expect(resumed.cursor).toEqual({ ...resumeFrom, listing: null });
  });

  test('a checkpoint whose page token Google no longer takes starts its stage over', async () => {
    const checkpoint: DriveCursor = { version: 1, target: `${fake.url}|user|`, extraction: EXTRACTION_VERSION, changes_token: '3', listing: { corpus: 'user', stage: 'files', page_token: 'expired-token' } };
    const run = await collectRun(googleDrive, { config: config({ corpora: 'user' }), credentials: credentials(), cursor: checkpoint, resuming: true });
    expect(run.ids).toEqual(['0AMyDriveRootFolder', 'b-notes', 'b-shared', 'd-plan', 'p-kickoff', 's-budget']);
    expect(fake.requestsTo(/^\/drive\/v3\/files$/).map((request) => request.query.get('pageToken')).slice(0, 2)).toEqual(['expired-token', null]);
    expect(run.cursor).toEqual({ ...checkpoint, listing: null });
  });

  test('an invalid token is CredentialsRejectedError, and no message carries the token', async () => {
    const wrong = 'ya29.not-a-valid-token';
    const error = await rejection(collectRun(googleDrive, { config: config(), credentials: { access_token: wrong } }));
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(error.message).not.toContain(wrong);
    expect(fake.requests[0]!.authorization).toBe(`Bearer ${wrong}`);
    const validation = await rejection(googleDrive.validate(connectionContext(googleDrive, { config: config(), credentials: { access_token: wrong } }), { localFolderRoots: [], webClient: null as never }));
    expect(validation).toBeInstanceOf(CredentialsRejectedError);
    expect(validation.message).not.toContain(wrong);
  });

  test('the pasted token is sent as a Bearer token, and an OAuth token is refreshed at the token endpoint after a 401', async () => {
    await collectRun(googleDrive, { config: config({ corpora: 'user' }), credentials: credentials() });
    expect(new Set(fake.requests.map((request) => request.authorization))).toEqual(new Set([`Bearer ${token}`]));

    if (googleDrive.auth.kind !== 'oauth2') throw new Error('google_drive signs in with OAuth 2');
    const spec = googleDrive.auth.oauth;
    const client = { clientId: fake.clientId, clientSecret: fake.clientSecret };
    const signedIn = await requestTokens({
      spec,
      config: parsedConfig(googleDrive, config({ oauth_token_url: `${fake.url}/token` })),
      client,
      grant: { type: 'authorization_code', code: fake.issueAuthorizationCode('verifier-verifier-verifier-verifier-1234', 'https://catchment.test/callback'), redirectUri: 'https://catchment.test/callback', codeVerifier: 'verifier-verifier-verifier-verifier-1234' },
      allowPrivateNetworks: true,
    });
    expect(signedIn).toMatchObject({ refreshToken: expect.stringMatching(/^1\/\//), scope: 'https://www.googleapis.com/auth/drive.readonly' });
    // A provider that refreshes as the platform's does after a 401 (the real one is tested with the runtime).
    let current = signedIn.accessToken;
    const tokens: TokenProvider = {
      accessToken: async () => current,
      refreshAfterRejection: async () => {
        current = (await requestTokens({ spec, config: parsedConfig(googleDrive, config({ oauth_token_url: `${fake.url}/token` })), client, grant: { type: 'refresh_token', refreshToken: signedIn.refreshToken! }, allowPrivateNetworks: true })).accessToken;
        return current;
      },
    };
    fake.expireAccessToken(signedIn.accessToken);
    const before = fake.requests.length;
    const run = await collectRun(googleDrive, { config: config({ corpora: 'user' }), tokens });
    expect(run.entities.length).toBe(8);
    const sent = fake.requests.slice(before);
    expect(sent.filter((request) => request.path === '/token')).toHaveLength(1);
    expect(sent[0]!.authorization).toBe(`Bearer ${signedIn.accessToken}`);
    expect(sent.at(-1)!.authorization).toBe(`Bearer ${current}`);
    expect(current).not.toBe(signedIn.accessToken);
  });

  test('corpora "drive" reads one shared drive; an unknown drive is a config error', async () => {
    const run = await collectRun(googleDrive, { config: config({ corpora: 'drive', drive_id: '0AEngineering' }), credentials: credentials() });
    expect(run.ids).toEqual(['0AEngineering', 'b-restart', 'f-runbooks']);
    expect(fake.requestsTo(/^\/drive\/v3\/files\/root$/)).toHaveLength(0);
    const error = await rejection(googleDrive.validate(connectionContext(googleDrive, { config: config({ corpora: 'drive', drive_id: '0ANope' }), credentials: credentials() }), { localFolderRoots: [], webClient: null as never }));
    expect(error).toBeInstanceOf(SourceConfigError);
    expect((error as SourceConfigError).field).toBe('drive_id');
    expect(parseConfig(googleDrive, { corpora: 'drive' }).issues).toEqual([{ loc: ['config', 'drive_id'], msg: 'Field required when corpora is "drive"', type: 'missing' }]);
  });

  test('a changes token Google refuses starts a complete listing over', async () => {
    const cursor: DriveCursor = { version: 1, target: `${fake.url}|allDrives|`, extraction: EXTRACTION_VERSION, changes_token: '999', listing: null };
    const run = await collectRun(googleDrive, { config: config(), credentials: credentials(), cursor });
    expect(run.complete).toBe(true);
    expect(run.entities).toHaveLength(11);
    expect(run.cursor!.changes_token).toBe(fake.startPageToken);
  });

  test('the catalog describes the config and the pasted token from the schemas', () => {
    expect(describeSchema(googleDrive.config).fields.map((field) => [field.name, field.type, field.required])).toEqual([
      ['api_url', 'string', false],
      ['corpora', 'string', false],
      ['drive_id', 'string', false],
      ['max_file_bytes', 'integer', false],
      ['page_size', 'integer', false],
      ['oauth_authorize_url', 'string', false],
      ['oauth_token_url', 'string', false],
    ]);
    if (googleDrive.auth.kind !== 'oauth2') throw new Error('google_drive signs in with OAuth 2');
    expect(describeSchema(googleDrive.auth.pasted!.credentials).fields).toEqual([expect.objectContaining({ name: 'access_token', isSecret: true, required: true })]);
    // Google's OAuth endpoints unless config names others (a proxy, a test server).
    const defaults = parsedConfig(googleDrive, {});
    expect([googleDrive.auth.oauth.authorizeUrl(defaults), googleDrive.auth.oauth.tokenUrl(defaults)]).toEqual(['https://accounts.google.com/o/oauth2/v2/auth', 'https://oauth2.googleapis.com/token']);
    expect(googleDrive.auth.oauth.tokenUrl(parsedConfig(googleDrive, { oauth_token_url: `${fake.url}/token/` }))).toBe(`${fake.url}/token`);
    expect(googleDrive.credentialTargets(parsedConfig(googleDrive, {}), null)).toEqual(['https://www.googleapis.com']);
  });
});
