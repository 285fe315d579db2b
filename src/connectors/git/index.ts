import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { httpOrigins, SourceConfigError, type Breadcrumb, type Connector, type SourceItem, type SyncContext } from '../connector.js';
import { nonBlankString } from '../contract/schemas.js';
import { EXTRACTION_VERSION, extractText, isSupported } from '../text-extraction/extract-text.js';
import { BlobReader, git, GitError, gitLines, type GitAccess } from './git-cli.js';
import { gitAccess, gitCredentials, resolveRemote, type GitCredentials, type Remote } from './remote.js';

/**
 * `git`: a repository by HTTPS (or HTTP) URL, `file://` URL or local path, and a branch (the
 * remote's default branch when empty). Files at the branch's head become `file` entities (code
 * files with their language, so they are chunked along declarations), their folders `folder`
 * entities and breadcrumbs, and the latest commits `commit` entities.
 *
 * Each run clones the branch (bare, single branch, no tags) into a fresh temporary directory and
 * removes it afterwards. A cache kept between runs would save transfer on large repositories, but
 * it would be state shared by every connection of the server: a private repository fetched with
 * one organization's token must not be readable by another connection of the same URL, two
 * workers must not fetch into one directory at once, and a crashed run must not leave a
 * half-fetched cache behind. A clone of its own per run has none of these problems.
 *
 * Incremental runs start from the cursor's commit: `git diff --name-status <cursor> HEAD` names the
 * files that changed, which alone are read again; the others are keep markers and deleted files
 * are delete markers. Runs stay `complete` (every file, folder and commit in the window is
 * mentioned), so whatever the diff cannot know about (a cancelled run, a config change, history
 * rewritten by a force-push: then the cursor's commit is gone and the run reads everything) is
 * still swept by the pipeline.
 *
 * Local paths and `file://` URLs must be inside CATCHMENT_LOCAL_FOLDER_ROOTS, as for local_folder:
 * otherwise any API user could read any repository on the server's disks.
 */

const config = z.strictObject({
  url: nonBlankString()
    .transform((url) => url.trim())
    .meta({ title: 'Repository', description: 'https:// URL, file:// URL or absolute local path (local repositories must be inside CATCHMENT_LOCAL_FOLDER_ROOTS).' }),
  branch: z
    .string()
    .default('')
    .transform((branch) => branch.trim())
    .meta({ title: 'Branch', description: "Branch to read; empty for the repository's default branch." }),
  max_file_bytes: z.int().min(1).default(2 * 1024 * 1024).meta({ title: 'Largest file read (bytes)', description: 'Larger files are skipped.' }),
  max_commits: z.int().min(0).max(100_000).default(200).meta({ title: 'Commits kept', description: 'The latest commits of the branch kept as entities (0: none).' }),
  timeout_seconds: z.int().min(1).max(86_400).default(300).meta({ title: 'Timeout (seconds)', description: 'Longest a git command (the clone above all) may take.' }),
});

type GitConfig = z.output<typeof config>;

const cursor = z.object({
  version: z.literal(1),
  /** Where the commit came from and what was read of it: another source or settings mean a full read. */
  source: z.string(),
  settings: z.string(),
  commit: z.string(),
  /** Supported files whose content turned out binary or empty (not entities, so never kept). */
  unindexed: z.array(z.string()),
});

export type GitCursor = z.infer<typeof cursor>;

/** Git failures reaching the remote, as the config error validation reports. */
function unreachable(error: unknown): never {
  if (error instanceof GitError) throw new SourceConfigError('url', `Cannot read the repository: ${error.message}`);
  throw error;
}

const sanitizeBranch = (branch: string) => {
  // git check-ref-format's rules, in short: no option-like, relative or special names.
  if (branch && (branch.startsWith('-') || /(^|\/)\.|\.\.|[\s~^:?*[\\]|@\{|\.lock$|\/$/.test(branch))) throw new SourceConfigError('branch', `"${branch}" is not a valid branch name`);
  return branch;
};

interface TreeFile {
  blob: string;
  size: number;
  path: string;
}

/** Regular files at HEAD (no symbolic links, no submodules), from `git ls-tree -r -z --long`. */
async function listFiles(cwd: string, access: GitAccess): Promise<TreeFile[]> {
  const out = (await git(['ls-tree', '-r', '-z', '--long', 'HEAD'], access, { cwd })).toString('utf8');
  const files: TreeFile[] = [];
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, blob, size] = record.slice(0, tab).split(/\s+/);
    if (type !== 'blob' || (mode !== '100644' && mode !== '100755')) continue;
    files.push({ blob: blob!, size: Number(size), path: record.slice(tab + 1) });
  }
  return files;
}

/** Paths added or modified, and paths deleted, between two commits (a rename is a delete and an add). */
async function changesSince(commit: string, cwd: string, access: GitAccess): Promise<{ changed: Set<string>; deleted: Set<string> }> {
  const out = (await git(['diff', '--name-status', '-z', '--no-renames', commit, 'HEAD'], access, { cwd })).toString('utf8');
  const fields = out.split('\0');
  const changed = new Set<string>();
  const deleted = new Set<string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!;
    const file = fields[i + 1]!;
    if (status === 'D') deleted.add(file);
    else changed.add(file);
  }
  return { changed, deleted };
}

/**
 * The date of the last commit that touched each of `paths`, walking history from HEAD (back to
 * `since` when given) and stopping as soon as every path is dated.
 */
async function lastChanged(paths: Set<string>, since: string | null, cwd: string, access: GitAccess): Promise<Map<string, Date>> {
  const dates = new Map<string, Date>();
  if (paths.size === 0) return dates;
  let current: Date | null = null;
  for await (const line of gitLines(['log', '--no-renames', '--name-only', '--format=%x01%cI', since ? `${since}..HEAD` : 'HEAD'], access, cwd)) {
    if (line.startsWith('\x01')) current = new Date(line.slice(1));
    else if (line && current && paths.has(line) && !dates.has(line)) {
      dates.set(line, current);
      if (dates.size === paths.size) break;
    }
  }
  return dates;
}

interface Commit {
  sha: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  authoredAt: Date;
  committedAt: Date;
  message: string;
  files: string[];
}

async function readCommits(shas: string[], cwd: string, access: GitAccess): Promise<Commit[]> {
  if (shas.length === 0) return [];
  const out = (await git(['show', '--no-walk=unsorted', '--no-renames', '--name-only', '--format=%x1e%H%x00%P%x00%an%x00%ae%x00%aI%x00%cI%x00%B%x00', ...shas], access, { cwd })).toString('utf8');
  return out
    .split('\x1e')
    .filter(Boolean)
    .map((record) => {
      const [sha, parents, authorName, authorEmail, authoredAt, committedAt, message, names] = record.split('\0');
      return {
        sha: sha!,
        parents: parents ? parents.split(' ') : [],
        authorName: authorName!,
        authorEmail: authorEmail!,
        authoredAt: new Date(authoredAt!),
        committedAt: new Date(committedAt!),
        message: message!.trim(),
        files: (names ?? '').split('\n').filter(Boolean),
      };
    });
}

const fileId = (file: string) => `file:${file}`;
const folderId = (folder: string) => `folder:${folder}`;
const commitId = (sha: string) => `commit:${sha}`;

const connector: Connector<GitConfig, GitCredentials, GitCursor> = {
  shortName: 'git',
  name: 'Git repository',
  description:
    'A git repository by https:// URL (token auth for private repositories), file:// URL or local path, and a branch: files at the head of the branch (source code, Markdown, text, HTML, PDF, DOCX) with their folders as breadcrumbs, and the latest commits. Incremental by commit: only files changed since the last synced commit are read again, deleted files are removed.',
  auth: { kind: 'fields', credentials: gitCredentials },
  config,
  cursor,
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['code'],
  outputEntityDefinitions: ['GitFileEntity', 'GitFolderEntity', 'GitCommitEntity'],
  // The token goes to the repository's origin; never to a local repository.
  credentialTargets: (config) => httpOrigins(config.url),

  async validate({ config: settings, credentials: given }, environment) {
    const branch = sanitizeBranch(settings.branch);
    const remote = await resolveRemote(settings.url, environment);
    const access = gitAccess(remote, given, Math.min(settings.timeout_seconds, 30) * 1000, new AbortController().signal);
    // --exit-code: 2 when the remote answers but has no such branch.
    const refs = await git(['ls-remote', '--exit-code', '--', remote.cloneFrom, branch ? `refs/heads/${branch}` : 'HEAD'], access).catch((error: unknown) => {
      if (error instanceof GitError && error.exitCode === 2) throw new SourceConfigError('branch', branch ? `The repository has no branch "${branch}"` : 'The repository has no commits');
      return unreachable(error);
    });
    if (refs.length === 0) throw new SourceConfigError('branch', 'The repository has no commits');
  },

  sync({ config: settings, credentials: given, cursor: previous, signal, logger, expectTotal, reportSkipped }, environment) {
    let next: GitCursor | null = null;
    async function* items(): AsyncGenerator<SourceItem> {
      const branch = sanitizeBranch(settings.branch);
      const remote = await resolveRemote(settings.url, environment);
      const access = gitAccess(remote, given, settings.timeout_seconds * 1000, signal);
      const directory = await mkdtemp(path.join(tmpdir(), 'catchment-git-'));
      try {
        await git(['clone', '--bare', '--single-branch', '--no-tags', ...(branch ? ['--branch', branch] : []), '--', remote.cloneFrom, directory], access);
        yield* readRepository(directory, branch, remote, settings, previous, access, (value) => (next = value), { expectTotal, reportSkipped });
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
      logger.debug({ source: 'git', commit: next?.commit }, 'git: repository read');
    }
    return { complete: true, items: items(), nextCursor: () => next };
  },
};

async function* readRepository(
  cwd: string,
  branch: string,
  remote: Remote,
  config: GitConfig,
  stored: GitCursor | null,
  access: GitAccess,
  done: (cursor: GitCursor) => void,
  { expectTotal, reportSkipped }: Pick<SyncContext, 'expectTotal' | 'reportSkipped'>,
): AsyncGenerator<SourceItem> {
  const head = (await git(['rev-parse', 'HEAD'], access, { cwd })).toString('utf8').trim();
  const ref = branch || head;
  const source = remote.cloneFrom;
  const settings = JSON.stringify([EXTRACTION_VERSION, config.max_file_bytes, config.max_commits]);
  let previous = stored?.source === source && stored.settings === settings ? stored : null;
  // After a force-push the cursor's commit is not in a fresh clone: everything is read again.
  if (previous && !(await git(['cat-file', '-e', `${previous.commit}^{commit}`], access, { cwd }).then(() => true, () => false))) previous = null;

  const files = await listFiles(cwd, access);
  const diff = previous ? await changesSince(previous.commit, cwd, access) : null;
  const unindexedBefore = new Set(previous?.unindexed ?? []);
  const unindexed: string[] = [];
  const indexable = (file: TreeFile) => file.size <= config.max_file_bytes && isSupported(path.posix.basename(file.path));
  const toRead = files.filter((file) => indexable(file) && (!diff || diff.changed.has(file.path)));
  const dates = await lastChanged(new Set(toRead.map((file) => file.path)), previous?.commit ?? null, cwd, access);
  const headDate = new Date((await git(['show', '-s', '--format=%cI', 'HEAD'], access, { cwd })).toString('utf8').trim());
  const link = (kind: 'blob' | 'tree', file: string) => (remote.local ? `${remote.webBase}/${file.split('/').map(encodeURIComponent).join('/')}` : `${remote.webBase}/${kind}/${encodeURIComponent(ref)}/${file.split('/').map(encodeURIComponent).join('/')}`);

  const emittedFolders = new Set<string>();
  const crumbsOf = (file: string): Breadcrumb[] => {
    const parts = file.split('/').slice(0, -1);
    return parts.map((name, index) => ({ entityId: folderId(parts.slice(0, index + 1).join('/')), name, entityType: 'folder' }));
  };
  /** A file's folders, yielded before its first file (so folders with nothing searchable stay out); unchanged folders hash the same and are skipped by the pipeline. */
  function* folders(file: string): Generator<SourceItem> {
    const crumbs = crumbsOf(file);
    for (const [index, crumb] of crumbs.entries()) {
      if (emittedFolders.has(crumb.entityId)) continue;
      emittedFolders.add(crumb.entityId);
      const folder = crumb.entityId.slice('folder:'.length);
      yield { ...crumb, breadcrumbs: crumbs.slice(0, index), createdAt: null, updatedAt: null, text: folder, fields: { path: folder }, webUrl: link('tree', folder) };
    }
  }

  const reading = new Set(toRead.map((file) => file.path));
  const window = config.max_commits > 0 ? (await git(['rev-list', `--max-count=${config.max_commits}`, 'HEAD'], access, { cwd })).toString('utf8').split('\n').filter(Boolean) : [];
  // Known from the listing before anything is read: every file (yielded, kept or reported skipped), the folders of those yielded or kept, the commits.
  const listed = files.filter((file) => indexable(file) && (reading.has(file.path) || !unindexedBefore.has(file.path)));
  const listedFolders = new Set(listed.flatMap((file) => crumbsOf(file.path).map((crumb) => crumb.entityId)));
  expectTotal?.(files.length + listedFolders.size + window.length);
  const skip = (file: TreeFile, reason: string, detail?: string) => reportSkipped?.({ entityId: fileId(file.path), reason, ...(detail ? { detail } : {}) });
  const blobs = new BlobReader(cwd, access);
  try {
    for (const file of files) {
      access.signal.throwIfAborted();
      if (file.size > config.max_file_bytes) {
        skip(file, 'larger than max_file_bytes', `${file.size} bytes`);
        continue;
      }
      if (!indexable(file)) {
        skip(file, 'unsupported file type');
        continue;
      }
      if (!reading.has(file.path)) {
        if (unindexedBefore.has(file.path)) {
          unindexed.push(file.path);
          skip(file, 'binary content or no text');
        } else {
          yield* folders(file.path);
          yield { keep: fileId(file.path) };
        }
        continue;
      }
      const bytes = await blobs.read(file.blob);
      const name = path.posix.basename(file.path);
      const extracted = bytes ? await extractText({ name, bytes }).catch(() => null) : null;
      if (!bytes || !extracted || !extracted.text.trim()) {
        unindexed.push(file.path);
        skip(file, bytes ? 'binary content or no text' : 'unreadable');
        continue;
      }
      yield* folders(file.path);
      yield {
        entityId: fileId(file.path),
        entityType: 'file',
        name,
        breadcrumbs: crumbsOf(file.path),
        createdAt: null,
        updatedAt: dates.get(file.path) ?? headDate,
        text: extracted.text,
        fields: { path: file.path, blob_sha: file.blob, size: bytes.length, mime_type: extracted.mimeType, extension: path.posix.extname(name).toLowerCase(), branch: branch || null },
        webUrl: link('blob', file.path),
        file: { name, mimeType: extracted.mimeType, size: bytes.length, bytes },
        ...(extracted.language ? { language: extracted.language } : {}),
      };
    }
  } finally {
    blobs.close();
  }
  for (const gone of diff?.deleted ?? []) yield { delete: fileId(gone) };

  if (window.length > 0) {
    const fresh = previous ? new Set((await git(['rev-list', `${previous.commit}..HEAD`], access, { cwd })).toString('utf8').split('\n').filter(Boolean)) : new Set(window);
    for (const sha of window) if (!fresh.has(sha)) yield { keep: commitId(sha) };
    const toReadCommits = window.filter((sha) => fresh.has(sha));
    for (let start = 0; start < toReadCommits.length; start += 100) {
      for (const commit of await readCommits(toReadCommits.slice(start, start + 100), cwd, access)) {
        const subject = commit.message.split('\n')[0] || commit.sha.slice(0, 12);
        yield {
          entityId: commitId(commit.sha),
          entityType: 'commit',
          name: subject,
          breadcrumbs: [],
          createdAt: commit.authoredAt,
          updatedAt: commit.committedAt,
          text: `${commit.message}\n\nAuthor: ${commit.authorName}\nFiles: ${commit.files.join(', ')}`,
          fields: {
            sha: commit.sha,
            parents: commit.parents,
            author_name: commit.authorName,
            author_email: commit.authorEmail,
            authored_at: commit.authoredAt.toISOString(),
            committed_at: commit.committedAt.toISOString(),
            files: commit.files,
          },
          webUrl: remote.local ? `${remote.webBase}#commit-${commit.sha}` : `${remote.webBase}/commit/${commit.sha}`,
        };
      }
    }
  }
  done({ version: 1, source, settings, commit: head, unindexed });
}

export default connector;
