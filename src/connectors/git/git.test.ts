import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CredentialsRejectedError, SourceConfigError } from '../connector.js';
import { collectRun, connectionContext, rejection } from '../connector-testing.js';
import connector, { type GitCursor } from './index.js';
import { git, type GitAccess } from './git-cli.js';
import { serveOverHttp, TestRepository } from './test-repository.js';
import { connectorEnvironment } from '../connector-testing.js';
import { WebClient } from '../../platform/http/web-client.js';

let root: string;
let repository: TestRepository;
const environment = () => connectorEnvironment([root]);

const sync = (config: Record<string, unknown>, cursor: GitCursor | null = null, credentials: Record<string, unknown> = {}) =>
  collectRun(connector, { config, cursor, credentials, environment: environment() });

const validate = async (config: Record<string, unknown>, credentials: Record<string, unknown> = {}) => connector.validate(connectionContext(connector, { config, credentials }), environment());

beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'git-connector-')));
  repository = new TestRepository(path.join(root, 'repo'));
  repository
    .write('README.md', '# Orbit\n\nOrbit computes satellite passes.\n')
    .write('src/orbit.ts', 'export function period(radius: number): number {\n  return 2 * Math.PI * Math.sqrt(radius ** 3);\n}\n')
    .write('src/util/format.py', 'def fmt(value):\n    return f"{value:.2f}"\n')
    .write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]))
    .write('data.bin', Buffer.from([0, 1, 2, 3]))
    .commit('Initial orbit model');
  repository.write('docs/guide.md', 'Guide to the launch window calculator.\n').commit('Add the guide');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('git connector', () => {
  test('a full sync yields files with language and breadcrumbs, their folders, and commits; an unchanged re-sync keeps everything', async () => {
    const first = await sync({ url: repository.directory, branch: 'main' });
    expect(first.complete).toBe(true);
    expect(first.ids).toEqual(
      ['file:README.md', 'file:docs/guide.md', 'file:src/orbit.ts', 'file:src/util/format.py', 'folder:docs', 'folder:src', 'folder:src/util', ...first.entities.filter((e) => e.entityType === 'commit').map((e) => e.entityId)].sort(),
    );
    expect(first.entities.filter((e) => e.entityType === 'commit')).toHaveLength(2);
    const orbit = first.byId.get('file:src/orbit.ts')!;
    expect(orbit).toMatchObject({
      entityType: 'file',
      name: 'orbit.ts',
      language: 'typescript',
      breadcrumbs: [{ entityId: 'folder:src', name: 'src', entityType: 'folder' }],
      webUrl: `${pathToFileURL(repository.directory).href}/src/orbit.ts`,
      fields: expect.objectContaining({ path: 'src/orbit.ts', branch: 'main' }),
    });
    expect(orbit.text).toContain('Math.sqrt');
    expect(orbit.updatedAt!.toISOString()).toBe('2025-03-01T11:00:00.000Z'); // its own commit, not the later one
    expect(first.byId.get('file:docs/guide.md')!.updatedAt!.toISOString()).toBe('2025-03-01T12:00:00.000Z');
    expect(first.byId.get('file:src/util/format.py')!.breadcrumbs.map((b) => b.entityId)).toEqual(['folder:src', 'folder:src/util']);
    const guideCommit = first.entities.find((e) => e.name === 'Add the guide')!;
    expect(guideCommit).toMatchObject({ entityType: 'commit', fields: expect.objectContaining({ author_name: 'Ada Lovelace', files: ['docs/guide.md'] }) });
    expect(guideCommit.text).toContain('docs/guide.md');

    // What is not indexed is reported with its reason, on every run.
    const leftOut = [
      { entityId: 'file:assets/logo.png', reason: 'unsupported file type' },
      { entityId: 'file:data.bin', reason: 'unsupported file type' },
    ];
    expect(first.skipped).toEqual(leftOut);

    const again = await sync({ url: repository.directory, branch: 'main' }, first.cursor);
    expect(again.skipped).toEqual(leftOut);
    expect(again.entities.filter((e) => e.entityType !== 'folder')).toEqual([]);
    expect(again.keeps).toEqual(first.ids.filter((id) => !id.startsWith('folder:')));
    expect(again.deletes).toEqual([]);
  });

  test('an incremental sync reads only what changed since the cursor commit, and deletes removed files', async () => {
    const before = await sync({ url: pathToFileURL(repository.directory).href, branch: 'main' });
    repository.write('src/orbit.ts', 'export const G = 6.674e-11; // gravitational constant\n').write('src/new.go', 'package orbit\n\nfunc Apogee() {}\n').remove('docs/guide.md');
    const sha = repository.commit('Gravity constant, apogee, no guide');
    try {
      const after = await sync({ url: pathToFileURL(repository.directory).href, branch: 'main' }, before.cursor);
      expect(after.cursor).toMatchObject({ commit: sha });
      // Folders are always yielded (the pipeline skips them when their hash is unchanged).
      expect(after.ids.filter((id) => !id.startsWith('folder:'))).toEqual([`commit:${sha}`, 'file:src/new.go', 'file:src/orbit.ts']);
      expect(after.deletes).toEqual(['file:docs/guide.md']);
      expect(after.keeps).toEqual(expect.arrayContaining(['file:README.md', 'file:src/util/format.py']));
      expect(after.keeps).not.toContain('file:docs/guide.md');
      expect(after.byId.get('file:src/new.go')!.language).toBe('go');
      expect(after.byId.get('file:src/orbit.ts')!.text).toContain('gravitational constant');
    } finally {
      // Restore the fixture for the other tests.
      repository.git('reset', '--quiet', '--hard', 'HEAD~1');
    }
  });

  test('files too large or without text are reported left out, with their reason, also while unchanged', async () => {
    const other = new TestRepository(path.join(root, 'skips'));
    other.write('notes.md', 'Short notes.\n').write('big.txt', 'word '.repeat(100)).write('blob', Buffer.from([0, 1, 2, 0xff, 0xfe, 0, 7])).commit('Files of every kind');
    const first = await sync({ url: other.directory, branch: 'main', max_file_bytes: 100 });
    const leftOut = [
      { entityId: 'file:big.txt', reason: 'larger than max_file_bytes', detail: '500 bytes' },
      { entityId: 'file:blob', reason: 'binary content or no text' },
    ];
    expect(first.ids.filter((id) => id.startsWith('file:'))).toEqual(['file:notes.md']);
    expect(first.skipped).toEqual(leftOut);
    const again = await sync({ url: other.directory, branch: 'main', max_file_bytes: 100 }, first.cursor);
    expect(again.skipped).toEqual(leftOut);
  });

  test('a cursor whose commit no longer exists (force-push) means a full read', async () => {
    const stale = { ...(await sync({ url: repository.directory, branch: 'main', max_commits: 0 })).cursor!, commit: 'f'.repeat(40) };
    const run = await sync({ url: repository.directory, branch: 'main', max_commits: 0 }, stale);
    expect(run.ids.filter((id) => id.startsWith('file:'))).toHaveLength(4);
    expect(run.keeps).toEqual([]);
  });

  test('validation reaches the repository: missing branch, missing repository, outside the allowed roots, bad schemes', async () => {
    await expect(validate({ url: repository.directory, branch: 'main' })).resolves.toBeUndefined();
    await expect(validate({ url: repository.directory, branch: '' })).resolves.toBeUndefined();
    const noBranch = await rejection(validate({ url: repository.directory, branch: 'nope' }));
    expect(noBranch).toBeInstanceOf(SourceConfigError);
    expect(noBranch).toMatchObject({ field: 'branch', message: 'The repository has no branch "nope"' });
    expect(await rejection(validate({ url: path.join(root, 'missing') }))).toMatchObject({ field: 'url', message: expect.stringContaining('does not exist') });
    expect(await rejection(validate({ url: tmpdir() }))).toMatchObject({ field: 'url', message: expect.stringContaining('outside the folders') });
    expect(await rejection(validate({ url: 'ssh://example.com/repo.git' }))).toMatchObject({ field: 'url', message: expect.stringContaining('Unsupported') });
    expect(await rejection(validate({ url: 'https://user:pw@example.com/repo.git' }))).toMatchObject({ field: 'url', message: expect.stringContaining('not in the URL') });
    expect(await rejection(validate({ url: repository.directory, branch: '--upload-pack=touch' }))).toMatchObject({ field: 'branch' });
    const notARepository = await rejection(validate({ url: root }));
    expect(notARepository).toMatchObject({ field: 'url', message: expect.stringMatching(/^Cannot read the repository: .*not appear to be a git repository/) });
  });

  test('a failing sync reports git\'s reason', async () => {
    const error = await rejection(sync({ url: repository.directory, branch: 'gone' }));
    expect(error.message).toMatch(/gone/);
  });

  describe('over smart HTTP with a token', () => {
    const token = 'glpat-very-secret-token-123';
    let http: Awaited<ReturnType<typeof serveOverHttp>>;
    beforeAll(async () => {
      http = await serveOverHttp(root, token);
    });
    afterAll(() => http.close());

    test('the token is sent as HTTP Basic auth; a wrong or missing token is a credentials rejection whose message holds no token', async () => {
      const url = `${http.url}/repo`;
      await expect(validate({ url, branch: 'main' }, { token })).resolves.toBeUndefined();
      const run = await sync({ url, branch: 'main' }, null, { token });
      expect(run.ids).toContain('file:src/orbit.ts');
      expect(run.byId.get('file:src/orbit.ts')!.webUrl).toBe(`${url}/blob/main/src/orbit.ts`);
      expect(http.authorizations).toContain(`Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`);

      const refused = await rejection(validate({ url, branch: 'main' }, { token: 'wrong-token-value' }));
      expect(refused).toBeInstanceOf(CredentialsRejectedError);
      expect(refused.message).not.toContain('wrong-token-value');
      expect(await rejection(sync({ url, branch: 'main' }, null, { token: 'wrong-token-value' }))).toBeInstanceOf(CredentialsRejectedError);
      const anonymous = await rejection(validate({ url, branch: 'main' }));
      expect(anonymous).toBeInstanceOf(CredentialsRejectedError);
    });

    test('git connects to the addresses checked for the host, not to a later DNS answer; a token-bearing remote by name works', async () => {
      const port = new URL(http.url).port;
      // `.invalid` never resolves: only the pin can lead git to the server.
      const url = `http://repository.invalid:${port}/repo`;
      const header = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
      const access = (pinnedAddresses: string | null): GitAccess => ({ protocol: 'http', authorization: { url, header }, pinnedAddresses, timeoutMs: 10_000, signal: new AbortController().signal });
      expect((await git(['ls-remote', '--', url, 'HEAD'], access(`repository.invalid:${port}:127.0.0.1`))).toString('utf8')).toMatch(/^[0-9a-f]{40}\tHEAD/);
      expect(await rejection(git(['ls-remote', '--', url, 'HEAD'], access(null)))).toMatchObject({ message: expect.stringMatching(/resolve host/i) });
      // The header goes with requests under its URL only.
      const elsewhere = { ...access(null), authorization: { url: `${http.url}/other`, header } };
      expect(await rejection(git(['ls-remote', '--', `${http.url}/repo`, 'HEAD'], elsewhere))).toBeInstanceOf(CredentialsRejectedError);
      const run = await sync({ url: `http://localhost:${port}/repo`, branch: 'main', max_commits: 0 }, null, { token });
      expect(run.ids).toContain('file:src/orbit.ts');
    });

    test('git may use only the remote\'s own transport', async () => {
      const access: GitAccess = { protocol: 'https', authorization: null, pinnedAddresses: null, timeoutMs: 10_000, signal: new AbortController().signal };
      expect(await rejection(git(['ls-remote', '--', repository.directory, 'HEAD'], access))).toMatchObject({ message: expect.stringMatching(/transport 'file' not allowed/) });
      expect(await rejection(git(['ls-remote', '--', 'ext::sh -c touch% /tmp/pwned', 'HEAD'], access))).toMatchObject({ message: expect.stringMatching(/transport 'ext' not allowed/) });
    });

    test('a token is refused over plain HTTP to another host', async () => {
      expect(await rejection(validate({ url: 'http://10.0.0.1/repo.git' }, { token }))).toMatchObject({ field: 'url', message: expect.stringContaining('only sent over https') });
    });

    test('the network policy of web sources applies: link-local never, intranet only when allowed', async () => {
      expect(await rejection(validate({ url: 'https://169.254.169.254/latest/repo.git' }))).toMatchObject({ field: 'url', message: expect.stringMatching(/link-local address/) });
      const closed = new WebClient({ allowPrivateNetworks: false });
      try {
        const refused = await rejection(connector.validate(connectionContext(connector, { config: { url: `${http.url}/repo`, branch: 'main' }, credentials: { token } }), { localFolderRoots: [root], webClient: closed }));
        expect(refused).toMatchObject({ field: 'url', message: expect.stringMatching(/private, loopback or link-local address.*CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS/) });
      } finally {
        await closed.close();
      }
    });

    test('an unreachable server is a config error at validation', async () => {
      const closed = await serveOverHttp(root, null);
      await closed.close();
      const error = await rejection(validate({ url: `${closed.url}/repo`, timeout_seconds: 5 }));
      expect(error).toMatchObject({ field: 'url', message: expect.stringMatching(/^Cannot read the repository: .*(connect|Connection refused)/i) });
    });
  });
});
