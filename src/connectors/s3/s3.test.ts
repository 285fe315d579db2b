import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { api, FAST_WORKER, waitForJob, type Api } from '../../../test/support/sync-helpers.js';
import { startTestServer, type TestServer } from '../../../test/support/harness.js';
import { CredentialsRejectedError, SourceConfigError } from '../connector.js';
import { collectRun, connectionContext, connectorEnvironment, parsedConfig, rejection, silentLogger, syncContext } from '../connector-testing.js';
import connector, { bucketTarget, type BucketCursor } from './index.js';
import { S3Client } from './s3-client.js';
import { canonicalQuery, canonicalRequestText, EMPTY_PAYLOAD_SHA256, signature, signedHeaders } from '../../platform/object-storage/sigv4.js';
import { TestS3Server } from '../../../test/support/s3-server.js';

const KEY_ID = 'AKIACATCHMENTTEST';
const SECRET = 'wJalrXUtnFEMI-catchment-test-secret-0042';
const credentials = { access_key_id: KEY_ID, secret_access_key: SECRET };

/** The objects of a small knowledge bucket: documents in folders, and an image the source leaves out. */
function fill(s3: TestS3Server): void {
  s3.put('knowledge', 'readme.md', '# Readme\n\nThe observatory opens at dusk.', 'text/markdown', new Date('2025-01-01T00:00:00Z'));
  s3.put('knowledge', 'docs/guide.md', '# Guide\n\nCalibrate the telescope before use.', 'text/markdown', new Date('2025-01-02T00:00:00Z'));
  s3.put('knowledge', 'docs/notes/plan.txt', 'Plan: polish the mirror in spring.', 'text/plain', new Date('2025-01-03T00:00:00Z'));
  s3.put('knowledge', 'images/cat.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png');
}

describe('AWS Signature Version 4', () => {
  // The examples of the S3 API Reference, "Signature Calculations for the Authorization Header".
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
  test("matches the documented GetObject example (Range header signed)", () => {
    const headers = { host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY_PAYLOAD_SHA256, 'x-amz-date': '20130524T000000Z' };
    const canonical = canonicalRequestText({ method: 'GET', path: '/test.txt', query: '', headers, payloadHash: EMPTY_PAYLOAD_SHA256 });
    expect(signature(secret, '20130524T000000Z', 'us-east-1', 's3', canonical)).toBe('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
    const sent = signedHeaders({ method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), keys: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: secret }, region: 'us-east-1', now: new Date('2013-05-24T00:00:00Z'), extra: { range: 'bytes=0-9' } });
    expect(sent.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });
  test('matches the documented bucket listing example (query sorted and encoded)', () => {
    const headers = { host: 'examplebucket.s3.amazonaws.com', 'x-amz-content-sha256': EMPTY_PAYLOAD_SHA256, 'x-amz-date': '20130524T000000Z' };
    const canonical = canonicalRequestText({ method: 'GET', path: '/', query: canonicalQuery([['prefix', 'J'], ['max-keys', '2']]), headers, payloadHash: EMPTY_PAYLOAD_SHA256 });
    expect(signature(secret, '20130524T000000Z', 'us-east-1', 's3', canonical)).toBe('34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7');
  });
});

describe('s3 connector against a local HTTP server speaking the S3 REST API', () => {
  let s3: TestS3Server;
  const config = () => ({ endpoint: s3.url, bucket: 'knowledge' });
  const sync = (cursor: BucketCursor | null = null, keys: Record<string, unknown> = credentials) => collectRun(connector, { config: config(), credentials: keys, cursor });
  const gets = () => s3.requests.filter((request) => request.query.get('list-type') !== '2').map((request) => request.path);

  beforeEach(async () => {
    s3 = await new TestS3Server().start();
    s3.keys.set(KEY_ID, SECRET);
    fill(s3);
  });
  afterEach(() => s3.stop());

  test('first sync: signed requests, paginated listing, files with folder breadcrumbs and links, unsupported types left out', async () => {
    s3.pageSize = 2;
    const run = await sync();
    expect(run.ids).toEqual(['docs/', 'docs/guide.md', 'docs/notes/', 'docs/notes/plan.txt', 'readme.md']);
    const listings = s3.requests.filter((request) => request.query.get('list-type') === '2');
    expect(listings.map((request) => request.query.get('continuation-token') !== null)).toEqual([false, true]);
    expect(s3.requests.every((request) => request.status === 200 && request.authorization?.startsWith(`AWS4-HMAC-SHA256 Credential=${KEY_ID}/`))).toBe(true);
    expect(gets()).not.toContain('/knowledge/images/cat.png');
    expect(run.byId.get('docs/notes/plan.txt')).toMatchObject({
      entityType: 'file',
      name: 'plan.txt',
      webUrl: `${s3.url}/knowledge/docs/notes/plan.txt`,
      breadcrumbs: [
        { entityId: 'docs/', name: 'docs', entityType: 'folder' },
        { entityId: 'docs/notes/', name: 'notes', entityType: 'folder' },
      ],
      fields: expect.objectContaining({ bucket: 'knowledge', key: 'docs/notes/plan.txt', mime_type: 'text/plain', last_modified: '2025-01-03T00:00:00.000Z' }),
    });
    expect(run.byId.get('docs/guide.md')!.text).toContain('Calibrate the telescope');
    expect(run.byId.get('docs/guide.md')!.updatedAt!.toISOString()).toBe('2025-01-02T00:00:00.000Z');
  });

  test('re-sync: unchanged objects are kept without a download, changed and new ones read, deleted ones gone', async () => {
    const first = await sync();
    s3.requests.length = 0;
    s3.put('knowledge', 'docs/guide.md', '# Guide\n\nCalibrate the telescope and cool the camera.', 'text/markdown', new Date('2025-02-01T00:00:00Z'));
    s3.put('knowledge', 'docs/new.md', 'Spectrograph arrives in May.', 'text/markdown');
    s3.buckets.get('knowledge')!.delete('readme.md');
    const second = await sync(first.cursor);
    expect(second.ids).toEqual(['docs/guide.md', 'docs/new.md']);
    expect(second.keeps).toEqual(['docs/', 'docs/notes/', 'docs/notes/plan.txt']);
    expect(second.deletes).toEqual(['readme.md']);
    expect(gets().sort()).toEqual(['/knowledge/docs/guide.md', '/knowledge/docs/new.md']);
    expect(second.byId.get('docs/guide.md')!.text).toContain('cool the camera');
  });

  test('a prefix limits the listing, and breadcrumbs start below its folder', async () => {
    const run = await collectRun(connector, { config: { ...config(), prefix: 'docs/no' }, credentials });
    expect(run.ids).toEqual(['docs/notes/', 'docs/notes/plan.txt']);
    expect(run.byId.get('docs/notes/plan.txt')!.breadcrumbs.map((crumb) => crumb.name)).toEqual(['notes']);
  });

  test('keys with spaces, plus signs and non-ASCII letters are signed and read; objects over max_object_bytes are not downloaded', async () => {
    s3.put('knowledge', 'docs/Ünïcode notes+ideas.md', 'Aurora sightings in Tromsø.', 'text/markdown');
    s3.put('knowledge', 'docs/big.md', 'x'.repeat(5000), 'text/markdown');
    const run = await collectRun(connector, { config: { ...config(), max_object_bytes: 4096 }, credentials });
    expect(run.byId.get('docs/Ünïcode notes+ideas.md')).toMatchObject({ text: expect.stringContaining('Tromsø'), webUrl: `${s3.url}/knowledge/docs/%C3%9Cn%C3%AFcode%20notes%2Bideas.md` });
    expect(run.ids).not.toContain('docs/big.md');
    expect(gets()).not.toContain('/knowledge/docs/big.md');
    expect(s3.requests.every((request) => request.status === 200)).toBe(true);
  });

  test('reports what it leaves out (type, size, binary, failed extraction, refused, gone), reads extensionless text by its content, and reports unchanged skips again', async () => {
    const pdf = Buffer.from('%PDF-1.7\n1 0 obj <<>> garbage without any page tree\n%%EOF');
    s3.put('knowledge', 'docs/', '', 'application/x-directory'); // a folder marker, as consoles create: nothing left out
    s3.put('knowledge', 'docs/big.md', 'x'.repeat(5000), 'text/markdown');
    s3.put('knowledge', 'bin/tool', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 0, 0]), 'binary/octet-stream');
    s3.put('knowledge', 'exports/data', Buffer.from('PK\u0003\u0004 zipped'), 'application/zip');
    s3.put('knowledge', 'docs/broken.pdf', pdf, 'application/pdf');
    s3.put('knowledge', 'archive/old.md', 'Archived to Glacier.', 'text/markdown');
    s3.put('knowledge', 'docs/moved.md', 'Moved away while the run read others.', 'text/markdown');
    s3.put('knowledge', 'debian/README.Debian', 'Notes for Debian packagers of the telescope driver.', 'binary/octet-stream');
    s3.put('knowledge', 'debian/copyright', 'Copyright 2025 The Observatory. Licensed under the MIT licence.');
    s3.put('knowledge', 'scripts/deploy', '#!/bin/sh\necho "deploying the dome controller"\n', 'binary/octet-stream');
    s3.interruptions.push(
      { status: 403, code: 'InvalidObjectState', path: '/knowledge/archive/old.md', message: "The operation is not valid for the object's storage class" },
      { status: 404, code: 'NoSuchKey', path: '/knowledge/docs/moved.md', message: 'The specified key does not exist.' },
    );
    const bySkippedId = (items: { entityId: string }[]) => [...items].sort((a, b) => (a.entityId < b.entityId ? -1 : 1));
    const run = await collectRun(connector, { config: { ...config(), max_object_bytes: 4096 }, credentials });

    expect(run.ids).toEqual(expect.arrayContaining(['debian/README.Debian', 'debian/copyright', 'scripts/deploy']));
    expect(run.byId.get('scripts/deploy')).toMatchObject({ language: 'bash', text: expect.stringContaining('dome controller') });
    expect(run.byId.get('debian/README.Debian')!.text).toContain('Debian packagers');
    expect(bySkippedId(run.skipped)).toEqual([
      { entityId: 'archive/old.md', reason: 'unreadable', detail: expect.stringContaining('InvalidObjectState') },
      { entityId: 'bin/tool', reason: 'binary content or no text' },
      { entityId: 'docs/big.md', reason: 'larger than max_object_bytes', detail: '5000 bytes' },
      { entityId: 'docs/broken.pdf', reason: 'text extraction failed', detail: expect.any(String) },
      { entityId: 'docs/moved.md', reason: 'gone', detail: 'deleted since it was listed' },
      { entityId: 'exports/data', reason: 'unsupported file type', detail: 'application/zip' },
      { entityId: 'images/cat.png', reason: 'unsupported file type' },
    ]);
    expect(gets()).not.toContain('/knowledge/images/cat.png');
    expect(gets()).not.toContain('/knowledge/docs/big.md');

    // Unchanged objects found without text are not downloaded again and stay reported, for the same reason.
    s3.requests.length = 0;
    s3.buckets.get('knowledge')!.delete('docs/moved.md');
    const second = await collectRun(connector, { config: { ...config(), max_object_bytes: 4096 }, credentials, cursor: run.cursor });
    expect(second.ids).toEqual(['archive/', 'archive/old.md']);
    expect(gets()).toEqual(['/knowledge/archive/old.md']);
    expect(bySkippedId(second.skipped)).toEqual([
      { entityId: 'bin/tool', reason: 'binary content or no text' },
      { entityId: 'docs/big.md', reason: 'larger than max_object_bytes', detail: '5000 bytes' },
      { entityId: 'docs/broken.pdf', reason: 'text extraction failed' },
      { entityId: 'exports/data', reason: 'unsupported file type' },
      { entityId: 'images/cat.png', reason: 'unsupported file type' },
    ]);
  });

  test('an object refused for now keeps its last copy; one gone since the listing is reported and removed', async () => {
    const first = await sync();
    s3.put('knowledge', 'docs/guide.md', '# Guide\n\nRewritten, then archived.', 'text/markdown', new Date('2025-03-01T00:00:00Z'));
    s3.put('knowledge', 'readme.md', '# Readme\n\nRewritten, then deleted.', 'text/markdown', new Date('2025-03-01T00:00:00Z'));
    s3.interruptions.push(
      { status: 403, code: 'InvalidObjectState', path: '/knowledge/docs/guide.md', message: "The operation is not valid for the object's storage class" },
      { status: 404, code: 'NoSuchKey', path: '/knowledge/readme.md' },
    );
    const second = await sync(first.cursor);
    expect(second.keeps).toEqual(['docs/', 'docs/guide.md', 'docs/notes/', 'docs/notes/plan.txt']);
    expect(second.deletes).toEqual(['readme.md']);
    // In the order found: the listing's, then the reads'.
    expect(second.skipped).toEqual([{ entityId: 'images/cat.png', reason: 'unsupported file type' }, { entityId: 'readme.md', reason: 'gone', detail: 'deleted since it was listed' }]);
    // The kept copy is read again on the next run.
    const third = await sync(second.cursor);
    expect(third.byId.get('docs/guide.md')!.text).toContain('Rewritten, then archived.');
  });

  test("a 503 SlowDown is retried after the Retry-After it names, waited through the connection's client", async () => {
    s3.interruptions.push({ status: 503, code: 'SlowDown', retryAfter: '1' }, { status: 500, code: 'InternalError' });
    const waits: number[] = [];
    const run = await collectRun(connector, { config: config(), credentials, waits });
    expect(run.ids).toHaveLength(5);
    const [busy, failed, retried] = s3.requests;
    expect(busy).toMatchObject({ status: 503, code: 'SlowDown' });
    expect(failed).toMatchObject({ status: 500, code: 'InternalError' });
    expect(retried!.status).toBe(200);
    // The asked second, then the doubling backoff's second step (no Retry-After).
    expect(waits).toEqual([1000, 1000]);
  });

  test('a wrong secret or an unknown key is "credentials rejected", never with the secret in the error or the logs', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    const wrong = 'totally-wrong-secret-value-1234';
    const run = connector.sync({ ...syncContext(connector, { config: config(), credentials: { access_key_id: KEY_ID, secret_access_key: wrong } }), logger }, connectorEnvironment());
    const error = await rejection((async () => { for await (const _ of run.items); })());
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(error.message).toMatch(/SignatureDoesNotMatch/);
    expect(`${error.message}${error.stack}${lines.join('')}`).not.toContain(wrong);
    const unknown = await rejection(connector.validate(connectionContext(connector, { config: config(), credentials: { access_key_id: 'AKIANOBODY', secret_access_key: SECRET } }), connectorEnvironment()));
    expect(unknown).toBeInstanceOf(CredentialsRejectedError);
    expect(unknown.message).toMatch(/InvalidAccessKeyId/);
  });

  test('validation: a missing bucket is a config error on bucket; an endpoint refused by the network policy or malformed on endpoint', async () => {
    const validate = async (overrides: Record<string, unknown>, environment = connectorEnvironment()) => connector.validate(connectionContext(connector, { config: { ...config(), ...overrides }, credentials }), environment);
    const missing = await rejection(validate({ bucket: 'no-such-bucket' }));
    expect(missing).toBeInstanceOf(SourceConfigError);
    expect(missing).toMatchObject({ field: 'bucket', message: expect.stringMatching(/NoSuchBucket/) });
    expect(await rejection(validate({ endpoint: 'http://169.254.169.254' }))).toMatchObject({ field: 'endpoint', message: expect.stringMatching(/refused/) });
    expect(await rejection(validate({ endpoint: `${s3.url}/path` }))).toMatchObject({ field: 'endpoint' });
    await expect(validate({})).resolves.toBeUndefined();
  });

  test('credential targets are the endpoint origin and the bucket; AWS is addressed by region', () => {
    expect(connector.credentialTargets(parsedConfig(connector, { endpoint: 'http://minio.internal:9000', bucket: 'team' }), credentials)).toEqual(['http://minio.internal:9000/team']);
    expect(connector.credentialTargets(parsedConfig(connector, { bucket: 'team', region: 'eu-west-1' }), credentials)).toEqual(['https://s3.eu-west-1.amazonaws.com/team']);
    expect(connector.credentialTargets({ ...parsedConfig(connector, { bucket: 'team' }), bucket: '' }, credentials)).toEqual([]);
  });

  test('addressing: virtual-hosted on AWS, path style on a custom endpoint, for dotted buckets or when asked', () => {
    const urlOf = (overrides: Record<string, unknown>) => new S3Client(bucketTarget(parsedConfig(connector, { bucket: 'team', ...overrides })), { accessKeyId: '', secretAccessKey: '' }, { webClient: connectorEnvironment().webClient, signal: new AbortController().signal, timeoutMs: 1000, logger: silentLogger, wait: async () => {} }).objectUrl('a b/c.md').href;
    expect(urlOf({ region: 'eu-west-1' })).toBe('https://team.s3.eu-west-1.amazonaws.com/a%20b/c.md');
    expect(urlOf({ region: 'eu-west-1', addressing: 'path' })).toBe('https://s3.eu-west-1.amazonaws.com/team/a%20b/c.md');
    expect(urlOf({ bucket: 'team.docs' })).toBe('https://s3.us-east-1.amazonaws.com/team.docs/a%20b/c.md');
    expect(urlOf({ endpoint: 'http://minio.internal:9000' })).toBe('http://minio.internal:9000/team/a%20b/c.md');
    expect(urlOf({ endpoint: 'https://storage.example.com', addressing: 'virtual' })).toBe('https://team.storage.example.com/a%20b/c.md');
  });
});

describe('s3 source through the REST API, against a local HTTP server speaking the S3 REST API', () => {
  let server: TestServer;
  let call: Api;
  let s3: TestS3Server;
  const create = (bucket: string) =>
    call('POST', '/source-connections', { short_name: 's3', readable_collection_id: 's3-docs', name: 'Bucket', authentication: { credentials }, config: { endpoint: s3.url, bucket } });
  const run = async (id: string) => {
    const job = (await call('POST', `/source-connections/${id}/run`)).body;
    return waitForJob(call, id, job.id, ['COMPLETED', 'FAILED']);
  };

  beforeAll(async () => {
    s3 = await new TestS3Server().start();
    s3.keys.set(KEY_ID, SECRET);
    fill(s3);
    server = await startTestServer({ deployment: 'servers', env: { ...FAST_WORKER, CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS: 'true' } });
    call = api(server.url, server.apiKey);
    await call('POST', '/collections', { name: 's3-docs', readable_id: 's3-docs' });
  });
  afterAll(async () => {
    await server?.stop();
    await s3?.stop();
  });

  test('a missing bucket is a 422 on config.bucket', async () => {
    const refused = await create('no-such-bucket');
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'config', 'bucket'], msg: expect.stringMatching(/NoSuchBucket/) })]);
  });

  test('the stored keys are bound to the endpoint and bucket: moving to another bucket needs them again', async () => {
    s3.put('elsewhere', 'secret-plans.md', 'Not for this connection.', 'text/markdown');
    const created = await call('POST', '/source-connections', { short_name: 's3', readable_collection_id: 's3-docs', name: 'Bound', authentication: { credentials }, config: { endpoint: s3.url, bucket: 'knowledge' }, sync_immediately: false });
    expect(created.status).toBe(200);
    s3.requests.length = 0;
    const moved = await call('PATCH', `/source-connections/${created.body.id}`, { config: { endpoint: s3.url, bucket: 'elsewhere' } });
    expect(moved.status).toBe(422);
    expect(moved.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'authentication', 'credentials'], type: 'credentials_required' })]);
    expect(s3.requests).toEqual([]);
    expect((await call('DELETE', `/source-connections/${created.body.id}`)).status).toBe(200);
  });

  test('first sync, change, re-sync with exact counts; then a rotated secret fails the job as credentials rejected', async () => {
    const created = await create('knowledge');
    expect(created.status).toBe(200);
    const id = created.body.id;
    const [first] = (await call('GET', `/source-connections/${id}/jobs`)).body;
    expect(await waitForJob(call, id, first.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED', entities_inserted: 5, entities_updated: 0, entities_deleted: 0 });

    s3.put('knowledge', 'docs/guide.md', '# Guide\n\nCalibrate the telescope and cool the camera.', 'text/markdown', new Date('2025-02-01T00:00:00Z'));
    s3.put('knowledge', 'docs/new.md', 'Spectrograph arrives in May.', 'text/markdown');
    s3.buckets.get('knowledge')!.delete('readme.md');
    expect(await run(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 1, entities_updated: 1, entities_deleted: 1, entities_skipped: 4 });
    // The five unchanged entities, and the image left out as of an unsupported file type.
    expect(await run(id)).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 0, entities_deleted: 0, entities_skipped: 6 });

    s3.keys.set(KEY_ID, 'rotated-secret-the-connection-does-not-have');
    const failed = await run(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatch(/refused the access key.*SignatureDoesNotMatch/);
    const connection = await call('GET', `/source-connections/${id}`);
    expect(connection.body.status).toBe('needs_reauth');
    expect(JSON.stringify([failed, connection.body, (await call('GET', `/source-connections/${id}/jobs`)).body])).not.toContain(SECRET);
  });
});
