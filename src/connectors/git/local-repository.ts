import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { SourceConfigError } from '../connector.js';

/**
 * A repository on this server's disks, checked against CATCHMENT_LOCAL_FOLDER_ROOTS the way git
 * will read it. The folder being inside a root is not enough: git follows a `.git` symbolic link
 * or `gitdir:` file, a worktree's `commondir`, symbolic links inside the git directory, and
 * `objects/info/alternates` (recursively; a local clone even copies them into the clone), any of
 * which can lead to a repository elsewhere on the disk. Every one of these is resolved to its real
 * path here and must be inside a root, or the repository is refused.
 *
 * Git's own environment variables (GIT_DIR, GIT_ALTERNATE_OBJECT_DIRECTORIES, …) cannot redirect it
 * either: git-cli.ts gives git an environment of its own, without them.
 */
export interface LocalRepository {
  /** The folder's real path (the base of the entities' links). */
  folder: string;
  /** The real path of its git directory, which git is given (so it does not guess `<path>.git` or `<path>/.git`). */
  gitDir: string;
}

/** What git reads in a git directory, besides the pointer files (`.git`, `commondir`) checked on their own. */
const READ_BY_GIT: readonly string[] = ['HEAD', 'config', 'packed-refs', 'shallow', 'info', 'refs', 'objects'];

/** A file git reads a path from (`.git`, `commondir`) is a line, not a large file. */
const POINTER_MAX_BYTES = 4096;

export const inside = (root: string, candidate: string) => {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
};

export async function resolveLocalRepository(localPath: string, allowedRoots: string[]): Promise<LocalRepository> {
  if (allowedRoots.length === 0) {
    throw new SourceConfigError('url', 'Local repositories are disabled on this server: the operator has not allowed any folder (set CATCHMENT_LOCAL_FOLDER_ROOTS)');
  }
  const folder = await realpath(localPath).catch(() => null);
  if (!folder || !(await stat(folder)).isDirectory()) throw new SourceConfigError('url', `The repository folder "${localPath}" does not exist`);
  const roots = (await Promise.all(allowedRoots.map((root) => realpath(path.resolve(root)).catch(() => null)))).filter((root): root is string => root !== null);
  const check = new RootCheck(roots, localPath);
  check.require(folder, 'it');
  const gitDir = await findGitDir(folder, check);
  if (await exists(path.join(gitDir, '.git'))) throw check.refusal(`its git directory holds another ".git", which git would read instead`);
  const commonDir = await readPointer(path.join(gitDir, 'commondir'), gitDir, check, 'its worktree\'s "commondir"');
  const checked = new Set<string>();
  await check.tree(gitDir, checked, READ_BY_GIT);
  if (commonDir) await check.tree(commonDir, checked, READ_BY_GIT);
  const objects = await realpath(path.join(commonDir ?? gitDir, 'objects')).catch(() => null);
  if (objects) await checkAlternates(objects, check, checked);
  return { folder, gitDir };
}

/** `<folder>/.git` (a directory, a symbolic link to one, or a `gitdir:` file) when present; otherwise the folder itself (a bare repository). */
async function findGitDir(folder: string, check: RootCheck): Promise<string> {
  const dotGit = path.join(folder, '.git');
  const real = await realpath(dotGit).catch(() => null);
  if (!real) return folder;
  check.require(real, 'its ".git"');
  const info = await stat(real);
  if (info.isDirectory()) return real;
  const target = await readPointer(dotGit, folder, check, 'its ".git" file', /^gitdir: (.+)$/);
  if (!target) throw check.refusal('its ".git" is neither a directory nor a "gitdir:" file');
  return target;
}

/**
 * The real path a pointer file (`.git`, `commondir`) names, relative to `base` unless absolute, checked
 * to be inside a root; null when the file does not exist.
 */
async function readPointer(file: string, base: string, check: RootCheck, what: string, format = /^(.+)$/): Promise<string | null> {
  const real = await realpath(file).catch(() => null);
  if (!real) return null;
  check.require(real, what);
  const info = await stat(real);
  if (!info.isFile() || info.size > POINTER_MAX_BYTES) throw check.refusal(`${what} is not a small file naming a directory`);
  const match = format.exec((await readFile(real, 'utf8')).split('\n')[0]!.trim());
  if (!match) return null;
  const target = await realpath(path.resolve(base, match[1]!)).catch(() => null);
  if (!target) throw check.refusal(`${what} names a directory that does not exist`);
  check.require(target, `the directory ${what} names`);
  return target;
}

/** The object directories `objects/info/alternates` names, each checked and walked, and theirs in turn. */
async function checkAlternates(objects: string, check: RootCheck, checked: Set<string>, seen = new Set<string>()): Promise<void> {
  if (seen.has(objects)) return;
  seen.add(objects);
  const list = await readFile(path.join(objects, 'info', 'alternates'), 'utf8').catch(() => '');
  for (const line of list.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    if (line.startsWith('"')) throw check.refusal('its objects/info/alternates names a quoted path, which is not supported');
    const alternate = await realpath(path.resolve(objects, line.trim())).catch(() => null);
    if (!alternate) continue; // git skips a missing alternate too
    check.require(alternate, 'an object directory its objects/info/alternates names');
    await check.tree(alternate, checked);
    await checkAlternates(alternate, check, checked, seen);
  }
}

const exists = (file: string) => stat(file).then(
  () => true,
  () => false,
);

/** The allowed roots, and the refusals of paths outside them as the job's and validation's error. */
class RootCheck {
  constructor(
    private readonly roots: string[],
    private readonly localPath: string,
  ) {}

  refusal(reason: string): SourceConfigError {
    return new SourceConfigError('url', `The repository "${this.localPath}" cannot be read: ${reason}`);
  }

  /** `real` (the real path of `what`) must be inside a root. The message does not show where it leads. */
  require(real: string, what: string): void {
    if (!this.roots.some((root) => inside(root, real))) throw this.refusal(`${what} is outside the folders this server allows (CATCHMENT_LOCAL_FOLDER_ROOTS)`);
  }

  /**
   * Every symbolic link under `directory` (a real path inside a root; only its entries named `only`,
   * when given) must lead inside a root; directories they lead to are walked too.
   */
  async tree(directory: string, checked: Set<string>, only?: readonly string[]): Promise<void> {
    if (checked.has(directory)) return;
    checked.add(directory);
    for (const entry of await readdir(directory, { withFileTypes: true }).catch(() => [])) {
      if (only && !only.includes(entry.name)) continue;
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) await this.tree(full, checked);
      else if (entry.isSymbolicLink()) {
        const target = await realpath(full).catch(() => null);
        if (!target) continue; // dangling: git cannot read through it either
        this.require(target, `the target of the symbolic link "${entry.name}" in its git directory`);
        if ((await stat(target)).isDirectory()) await this.tree(target, checked);
      }
    }
  }
}
