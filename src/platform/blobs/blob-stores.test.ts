import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestS3Server } from '../../../test/support/s3-server.js';
import { FileBlobStore, type BlobStore } from './blob-store.js';
import { ObjectStorageError } from '../object-storage/s3-answers.js';
import { S3BlobStore } from './s3-blob-store.js';

/**
 * One contract for both raw data stores: the files under the data directory (embedded) and the
 * S3-compatible object store (servers deployment), here against a local server speaking the S3 REST
 * API with SigV4 checked on every request.
 */
const s3 = new TestS3Server();
const directory = mkdtempSync(path.join(tmpdir(), 'catchment-blobs-'));
const KEYS = { accessKeyId: 'AKIDRAWSTORE', secretAccessKey: 'raw-store-secret' };

beforeAll(async () => {
  await s3.start();
  s3.keys.set(KEYS.accessKeyId, KEYS.secretAccessKey);
  s3.buckets.set('raw', new Map());
});
afterAll(async () => {
  await s3.stop();
  rmSync(directory, { recursive: true, force: true });
});

const objectStore = (prefix = 'catchment/raw') => new S3BlobStore({ endpoint: new URL(s3.url), region: 'us-east-1', bucket: 'raw', prefix, pathStyle: true, keys: KEYS });

const stores: [string, () => BlobStore][] = [
  ['files under a directory', () => new FileBlobStore(path.join(directory, `store-${Math.random()}`))],
  ['S3-compatible object storage (against a local server speaking the S3 REST API)', () => objectStore(`run-${Math.random().toString(36).slice(2)}`)],
];

async function keysOf(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.list(prefix)) keys.push(key);
  return keys.sort();
}

describe.each(stores)('raw data store contract: %s', (_name, open) => {
  it('puts, gets, overwrites and deletes bytes by key; a missing key is null', async () => {
    const store = open();
    await store.put('raw/c1/s1/entities/a.json', '{"a":1}');
    await store.put('raw/c1/s1/files/a', Buffer.from([0, 1, 2, 255]));
    expect((await store.get('raw/c1/s1/entities/a.json'))?.toString()).toBe('{"a":1}');
    expect([...(await store.get('raw/c1/s1/files/a'))!]).toEqual([0, 1, 2, 255]);
    await store.put('raw/c1/s1/entities/a.json', '{"a":2}');
    expect((await store.get('raw/c1/s1/entities/a.json'))?.toString()).toBe('{"a":2}');
    expect(await store.get('raw/c1/s1/entities/missing.json')).toBeNull();
    await store.delete('raw/c1/s1/entities/a.json');
    await store.delete('raw/c1/s1/entities/never-there.json');
    expect(await store.get('raw/c1/s1/entities/a.json')).toBeNull();
  });

  it('lists keys under a prefix only, with keys holding spaces and non-ASCII characters', async () => {
    const store = open();
    const keys = ['raw/c1/s1/entities/docs/read me.md.json', 'raw/c1/s1/entities/é/ü.json', 'raw/c1/s2/entities/x.json', 'raw/c2/s1/entities/y.json'];
    for (const key of keys) await store.put(key, key);
    expect(await keysOf(store, 'raw/c1/s1/')).toEqual(keys.slice(0, 2).sort());
    expect(await keysOf(store, 'raw/c1/')).toEqual(keys.slice(0, 3).sort());
    for (const key of keys) expect((await store.get(key))?.toString()).toBe(key);
  });

  it('deletes everything under a prefix, and nothing else', async () => {
    const store = open();
    for (let i = 0; i < 30; i++) await store.put(`raw/c1/s1/entities/${i}.json`, String(i));
    await store.put('raw/c1/s10/entities/keep.json', 'kept');
    await store.deletePrefix('raw/c1/s1/');
    expect(await keysOf(store, 'raw/c1/s1/')).toEqual([]);
    expect((await store.get('raw/c1/s10/entities/keep.json'))?.toString()).toBe('kept');
  });
});

describe('raw data store on S3-compatible object storage (against a local server speaking the S3 REST API)', () => {
  it('keeps its keys under the configured prefix of the bucket', async () => {
    const store = objectStore('tenant-a/raw');
    await store.put('raw/c/s/entities/1.json', 'one');
    expect([...s3.buckets.get('raw')!.keys()]).toContain('tenant-a/raw/raw/c/s/entities/1.json');
    expect(await keysOf(objectStore('tenant-b/raw'), 'raw/')).toEqual([]);
  });

  it('pages listings by continuation token and deletes more than one DeleteObjects batch', async () => {
    const store = objectStore('paged');
    s3.pageSize = 400;
    try {
      // Seeded in the server directly: 1,203 PUTs would only repeat the first test.
      for (let i = 0; i < 1203; i++) s3.put('raw', `paged/raw/c/s/entities/${String(i).padStart(4, '0')}.json`, String(i));
      expect(await keysOf(store, 'raw/c/s/')).toHaveLength(1203);
      const before = s3.requests.length;
      await store.deletePrefix('raw/c/s/');
      const batches = s3.requests.slice(before).filter((request) => request.method === 'POST' && request.query.has('delete'));
      expect(batches).toHaveLength(2);
      expect(batches.every((request) => request.status === 200)).toBe(true);
      expect(await keysOf(store, 'raw/c/s/')).toEqual([]);
    } finally {
      s3.pageSize = 1000;
    }
  });

  it('retries a busy store (503 SlowDown with Retry-After) and then succeeds', async () => {
    const store = objectStore('busy');
    s3.interruptions.push({ status: 503, code: 'SlowDown', retryAfter: '0' }, { status: 500, code: 'InternalError' });
    const before = s3.requests.length;
    await store.put('raw/c/s/entities/1.json', 'after the storm');
    expect(s3.requests.slice(before).map((request) => request.status)).toEqual([503, 500, 200]);
    expect((await store.get('raw/c/s/entities/1.json'))?.toString()).toBe('after the storm');
  });

  it('sends a request again after the connection dropped without an answer', async () => {
    const store = objectStore('dropped');
    s3.interruptions.push({ drop: true });
    const before = s3.requests.length;
    await store.put('raw/c/s/entities/1.json', 'sent twice');
    expect(s3.requests.slice(before).map((request) => `${request.method} ${request.status}`)).toEqual(['PUT 0', 'PUT 200']);
    expect((await store.get('raw/c/s/entities/1.json'))?.toString()).toBe('sent twice');
  });

  it('fails with S3 code and message, never the secret, when the keys are refused', async () => {
    const store = new S3BlobStore({ endpoint: new URL(s3.url), region: 'us-east-1', bucket: 'raw', prefix: '', pathStyle: true, keys: { accessKeyId: KEYS.accessKeyId, secretAccessKey: 'wrong-secret-value' } });
    const error = await store.put('raw/x.json', 'x').then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(ObjectStorageError);
    expect((error as ObjectStorageError).code).toBe('SignatureDoesNotMatch');
    expect((error as Error).message).not.toContain('wrong-secret-value');
    const missing = await objectStore().get('raw/../escape').then(() => null, (caught: unknown) => caught);
    expect((missing as Error).message).toMatch(/escapes/);
  });
});
