import { constants, type Stats } from 'node:fs';
import { access, open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { SourceConfigError, type ConnectorEnvironment } from '../connector.js';

/**
 * What `local_folder` may read and how: the configured folder checked against the operator's roots,
 * the include/exclude globs, the file-system errors that skip an entry rather than fail the run, and
 * files read without following a link or blocking.
 */

/** `candidate` is `root` or below it (both real, absolute paths). Works for the filesystem root too. */
export function inside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException | null)?.code;

/**
 * Errors that mean "this entry is not there or not ours to read" (skipped, so what it held is
 * deleted). Anything else (EIO, ESTALE, EMFILE…) fails the run instead: a complete run that
 * silently skipped a folder on a flaky mount would delete everything in it.
 */
const SKIPPABLE = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'ELOOP', 'ENAMETOOLONG', 'ENXIO', 'EINVAL']);
export const skippable = (error: unknown) => SKIPPABLE.has(errorCode(error) ?? '');

/** The real path of the configured folder; refused unless it is a readable directory inside an allowed root. */
export async function resolveRoot(configured: string, environment: ConnectorEnvironment): Promise<string> {
  if (environment.localFolderRoots.length === 0) {
    throw new SourceConfigError('path', 'The local_folder source is disabled on this server: the operator has not allowed any folder (set CATCHMENT_LOCAL_FOLDER_ROOTS)');
  }
  if (!configured.trim()) throw new SourceConfigError('path', 'A folder path is required');
  if (!path.isAbsolute(configured)) throw new SourceConfigError('path', `The folder path must be absolute: "${configured}"`);
  let real: string;
  try {
    real = await realpath(configured);
  } catch (error) {
    const reason = errorCode(error) === 'ENOENT' ? 'does not exist' : errorCode(error) === 'ENOTDIR' ? 'is not a folder' : 'cannot be read';
    throw new SourceConfigError('path', `The folder "${configured}" ${reason}`);
  }
  // Roots are compared by real path too, so a symlink can lead neither out of nor into them.
  const roots = await Promise.all(environment.localFolderRoots.map((root) => realpath(path.resolve(root)).catch(() => null)));
  if (!roots.some((root) => root !== null && inside(root, real))) {
    throw new SourceConfigError('path', `The folder "${configured}" is outside the folders this server allows (CATCHMENT_LOCAL_FOLDER_ROOTS)`);
  }
  const info = await stat(real).catch(() => null);
  if (!info?.isDirectory()) throw new SourceConfigError('path', `"${configured}" is not a folder`);
  try {
    await access(real, constants.R_OK | constants.X_OK);
  } catch {
    throw new SourceConfigError('path', `The folder "${configured}" cannot be read by the server`);
  }
  return real;
}

/**
 * A matcher of '/'-separated relative paths (dot files included). As in .gitignore, a pattern
 * without a slash (`*.md`, `build`) matches the name at any depth; others match the whole path.
 */
export function matcher(field: 'include' | 'exclude', patterns: string[]): (relative: string) => boolean {
  const compile = (list: string[]) => (list.length === 0 ? () => false : picomatch(list, { dot: true }));
  try {
    const byName = compile(patterns.filter((pattern) => !pattern.includes('/')));
    const byPath = compile(patterns.filter((pattern) => pattern.includes('/')));
    return (relative) => byPath(relative) || byName(path.posix.basename(relative));
  } catch (error) {
    throw new SourceConfigError(field, `Invalid glob pattern: ${(error as Error).message}`);
  }
}

/**
 * Reads a regular file without following a symlink in its last component (the walk resolved and
 * checked links already; this stops one swapped in since), without blocking on a FIFO swapped in,
 * and without reading more than `limit` bytes. Null when it is no longer a regular file or too large.
 */
export async function readRegularFile(file: string, limit: number): Promise<{ bytes: Buffer; info: Stats } | null> {
  const handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > limit) return null;
    const bytes = Buffer.alloc(info.size);
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, filled);
      if (bytesRead === 0) break; // truncated meanwhile
      filled += bytesRead;
    }
    return { bytes: filled === bytes.length ? bytes : bytes.subarray(0, filled), info };
  } finally {
    await handle.close();
  }
}
