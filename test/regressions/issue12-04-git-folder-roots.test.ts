import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SourceConfigError, type SourceItem } from '../../src/connectors/connector.js';
import { connectionContext, connectorEnvironment, rejection, syncContext } from '../../src/connectors/connector-testing.js';
import connector from '../../src/connectors/git/index.js';
import { TestRepository } from '../../src/connectors/git/test-repository.js';

/**
 * Issue 12, finding 4: `git` checked only that the repository folder was inside
 * CATCHMENT_LOCAL_FOLDER_ROOTS, but git reads further: a bare repository whose
 * `objects/info/alternates` points outside, or a folder whose `.git` is a symbolic link (or a
 * `gitdir:` file) to a repository outside, synced content stored only outside the roots. Every path
 * git reads is now resolved and checked; a repository that leads outside is refused, and nothing of
 * it is yielded.
 */
describe('issue 12-04: a local repository cannot lead git outside the allowed folders', () => {
  let base: string;
  let root: string;
  let outside: TestRepository;
  const outsideGitDir = () => path.join(outside.directory, '.git');

  beforeAll(() => {
    base = realpathSync(mkdtempSync(path.join(tmpdir(), 'issue12-04-')));
    root = path.join(base, 'allowed');
    mkdirSync(root);
    outside = new TestRepository(path.join(base, 'private', 'repo'));
    outside.write('secret.md', 'Payroll figures stored outside the allowed folders.\n').commit('Outside the roots');
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** Runs a sync as far as it goes: what it yielded, and the error it stopped with. */
  async function attempt(url: string): Promise<{ items: SourceItem[]; error: unknown }> {
    const run = connector.sync(syncContext(connector, { config: { url, branch: 'main' }, credentials: {} }), connectorEnvironment([root]));
    const items: SourceItem[] = [];
    try {
      for await (const item of run.items) items.push(item);
      return { items, error: null };
    } catch (error) {
      return { items, error };
    }
  }
  const validate = (url: string) => connector.validate(connectionContext(connector, { config: { url, branch: 'main' }, credentials: {} }), connectorEnvironment([root]));

  async function expectRefused(url: string, reason: RegExp) {
    const { items, error } = await attempt(url);
    expect(items).toEqual([]);
    expect(error).toBeInstanceOf(SourceConfigError);
    expect(error).toMatchObject({ field: 'url', message: expect.stringMatching(reason) });
    // The message names what leads outside, not where it leads.
    expect((error as Error).message).not.toContain(path.join(base, 'private'));
    expect(await rejection(validate(url))).toMatchObject({ field: 'url', message: expect.stringMatching(reason) });
  }

  test('a bare repository whose objects/info/alternates points outside the roots', async () => {
    const bare = path.join(root, 'shared.git');
    execFileSync('git', ['clone', '--quiet', '--bare', '--shared', outside.directory, bare], { env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: base } });
    await expectRefused(bare, /an object directory its objects\/info\/alternates names is outside the folders this server allows/);
  });

  test('an alternate inside the roots whose own alternates point outside (a chain) is refused; one that stays inside is read (its work tree may link anywhere)', async () => {
    const middle = path.join(root, 'middle.git');
    const last = path.join(root, 'last.git');
    const env = { env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: base } };
    execFileSync('git', ['clone', '--quiet', '--bare', '--shared', outside.directory, middle], env);
    execFileSync('git', ['clone', '--quiet', '--bare', '--shared', middle, last], env);
    await expectRefused(last, /objects\/info\/alternates names is outside/);

    const inner = new TestRepository(path.join(root, 'inner'));
    inner.write('notes.md', 'Notes kept inside the allowed folder.\n').commit('Inside');
    // Links in the work tree do not matter: git reads the repository, not the work tree.
    symlinkSync(outside.directory, path.join(inner.directory, 'elsewhere'));
    const borrower = path.join(root, 'borrower.git');
    execFileSync('git', ['clone', '--quiet', '--bare', '--shared', inner.directory, borrower], env);
    const { items, error } = await attempt(borrower);
    expect(error).toBeNull();
    expect(items.map((item) => ('entityId' in item ? item.entityId : null))).toContain('file:notes.md');
    expect((await attempt(inner.directory)).error).toBeNull();
  });

  test('a folder whose .git is a symbolic link to a repository outside', async () => {
    const folder = path.join(root, 'linked');
    mkdirSync(folder);
    symlinkSync(outsideGitDir(), path.join(folder, '.git'));
    await expectRefused(folder, /its "\.git" is outside the folders this server allows/);
  });

  test('a folder whose .git is a "gitdir:" file naming a repository outside', async () => {
    const folder = path.join(root, 'gitfile');
    mkdirSync(folder);
    writeFileSync(path.join(folder, '.git'), `gitdir: ${path.relative(folder, outsideGitDir())}\n`);
    await expectRefused(folder, /the directory its "\.git" file names is outside/);
  });

  test('a worktree git directory whose commondir is outside', async () => {
    const worktree = path.join(root, 'worktree-gitdir');
    mkdirSync(worktree);
    writeFileSync(path.join(worktree, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(path.join(worktree, 'commondir'), `${outsideGitDir()}\n`);
    await expectRefused(worktree, /the directory its worktree's "commondir" names is outside/);
  });

  test('an alternate object directory inside the roots whose pack folder is a symbolic link outside', async () => {
    outside.git('repack', '--quiet', '-a', '-d');
    const store = path.join(root, 'store', 'objects');
    mkdirSync(store, { recursive: true });
    symlinkSync(path.join(outsideGitDir(), 'objects', 'pack'), path.join(store, 'pack'));
    const bare = path.join(root, 'pack-link.git');
    execFileSync('git', ['init', '--quiet', '--bare', bare]);
    writeFileSync(path.join(bare, 'objects', 'info', 'alternates'), `${store}\n`);
    writeFileSync(path.join(bare, 'packed-refs'), `${outside.git('rev-parse', 'HEAD')} refs/heads/main\n`);
    await expectRefused(pathToFileURL(bare).href, /the target of the symbolic link "pack" in its git directory is outside/);
  });

  describe('with git variables in the server\'s environment', () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const name of ['GIT_DIR', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_OBJECT_DIRECTORY']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });

    test('git does not inherit them: they cannot point it at a repository outside', async () => {
      const inner = new TestRepository(path.join(root, 'plain'));
      inner.write('plain.md', 'A plain repository.\n').commit('Plain');
      process.env.GIT_DIR = outsideGitDir();
      process.env.GIT_OBJECT_DIRECTORY = path.join(outsideGitDir(), 'objects');
      process.env.GIT_ALTERNATE_OBJECT_DIRECTORIES = path.join(outsideGitDir(), 'objects');
      const { items, error } = await attempt(inner.directory);
      expect(error).toBeNull();
      const ids = items.map((item) => ('entityId' in item ? item.entityId : null));
      expect(ids).toContain('file:plain.md');
      expect(ids).not.toContain('file:secret.md');
    });
  });
});
