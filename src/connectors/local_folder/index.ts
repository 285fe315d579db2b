import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { access, lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import picomatch from 'picomatch';
import { z } from 'zod';
import type { Logger } from '../../platform/logger.js';
import { SourceConfigError, type Breadcrumb, type Connector, type ConnectorEnvironment, type SourceEntity, type SourceItem, type SyncContext } from '../connector.js';
import { nonBlankString } from '../contract/schemas.js';
import { EXTRACTION_VERSION, extractText, isSupported } from '../text-extraction/extract-text.js';

/**
 * `local_folder`: a directory on the server, inside one of the roots the operator allows
 * (CATCHMENT_LOCAL_FOLDER_ROOTS). Folders become `folder` entities and the breadcrumbs of what
 * they hold; supported files become `file` entities whose id is their path relative to the
 * folder ('/'-separated), so ids are stable across runs and renames are a delete plus an insert.
 *
 * Incremental runs use the cursor of the previous run: a file whose size, mtime and ctime are
 * unchanged is not read (a keep marker); a changed one is read and hashed, and kept when its
 * SHA-256 is the same. Runs are always `complete` (see `sync`).
 */

const DEFAULT_INCLUDE = ['**/*'];
const DEFAULT_EXCLUDE = ['**/node_modules/**', '**/.git/**', '**/.hg/**', '**/.svn/**', '**/__pycache__/**', '**/.DS_Store', '**/Thumbs.db'];
const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;

const config = z.strictObject({
  path: nonBlankString().meta({ title: 'Folder path', description: 'Absolute path of a folder inside one of the roots the operator allows (CATCHMENT_LOCAL_FOLDER_ROOTS).' }),
  include: z
    .array(z.string())
    .default(DEFAULT_INCLUDE)
    .meta({ title: 'Include globs', description: 'Files to read, as globs on the path relative to the folder (dot files included; a pattern without "/" matches the file name at any depth).' }),
  exclude: z.array(z.string()).default(DEFAULT_EXCLUDE).meta({ title: 'Exclude globs', description: 'Files and folders to skip, as globs on the path relative to the folder; an excluded folder is not entered.' }),
  max_file_bytes: z.int().min(1).default(DEFAULT_MAX_FILE_BYTES).meta({ title: 'Largest file read (bytes)', description: 'Larger files are skipped.' }),
});

type FolderConfig = z.infer<typeof config>;

/** What the last successful run saw of one file. `indexed` is false for files read but not made searchable (binary, unparsable). */
const fileState = z.object({ mtimeMs: z.number(), ctimeMs: z.number(), size: z.number(), sha256: z.string(), indexed: z.boolean() });

type FileState = z.infer<typeof fileState>;

const cursor = z.object({
  version: z.literal(1),
  /** EXTRACTION_VERSION of the run: other text for the same bytes means every file is read again. */
  extraction: z.number(),
  /** Real path of the folder: a cursor of another folder says nothing about this one. */
  root: z.string(),
  /** By relative path. */
  files: z.record(z.string(), fileState),
  /** Relative paths of the folder entities the run yielded. */
  folders: z.array(z.string()),
});

export type FolderCursor = z.infer<typeof cursor>;

/** The previous run's cursor when it describes this folder with this extraction, else null (a full read). */
function usableCursor(previous: FolderCursor | null, root: string): FolderCursor | null {
  return previous && previous.extraction === EXTRACTION_VERSION && previous.root === root ? previous : null;
}

/** `candidate` is `root` or below it (both real, absolute paths). Works for the filesystem root too. */
function inside(root: string, candidate: string): boolean {
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
const skippable = (error: unknown) => SKIPPABLE.has(errorCode(error) ?? '');

/** The real path of the configured folder; refused unless it is a readable directory inside an allowed root. */
async function resolveRoot(configured: string, environment: ConnectorEnvironment): Promise<string> {
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
function matcher(field: 'include' | 'exclude', patterns: string[]): (relative: string) => boolean {
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
async function readRegularFile(file: string, limit: number): Promise<{ bytes: Buffer; info: Stats } | null> {
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

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const dateOrNull = (ms: number) => (ms > 0 ? new Date(ms) : null); // filesystems without birth times report 0

const connector: Connector<FolderConfig, null, FolderCursor> = {
  shortName: 'local_folder',
  name: 'Local folder',
  description:
    'A folder on the server, inside the roots the operator allows: Markdown, plain text, HTML, PDF, DOCX and source code, with folders as breadcrumbs. Incremental by modification time and content hash; files removed from the folder are removed from the collection.',
  auth: { kind: 'none' },
  config,
  cursor,
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['files'],
  outputEntityDefinitions: ['LocalFolderEntity', 'LocalFileEntity'],
  credentialTargets: () => [],

  async validate({ config }, environment) {
    matcher('include', config.include);
    matcher('exclude', config.exclude);
    await resolveRoot(config.path, environment);
  },

  /**
   * Always `complete: true`. The walk enumerates the whole folder on every run — unchanged files
   * and folders as keep markers — so "not mentioned" reliably means "gone", and the pipeline's
   * end-of-run sweep deletes it. That sweep works from the collection's entity table, not from
   * the cursor, so it also removes what the cursor cannot know about: entities of a run that
   * was cancelled or failed (committed batches, no cursor stored), files newly excluded or over
   * `max_file_bytes` after a config change, and everything on a full (cursor-less) run.
   * Incremental runs also yield explicit `delete` markers for cursor entries that are gone;
   * they are redundant with the sweep but make the stream say what happened.
   */
  sync({ config, cursor: previous, signal, logger, expectTotal, reportSkipped }, environment) {
    const next: FolderCursor = { version: 1, extraction: EXTRACTION_VERSION, root: '', files: {}, folders: [] };
    return {
      complete: true,
      nextCursor: () => next,
      items: stopWhenAborted(walkFolder(config, previous, next, signal, logger, environment, { expectTotal, reportSkipped }), signal),
    };
  },
};

/** Checks the signal as soon as the consumer asks for the next item, before any more work is done. */
async function* stopWhenAborted(items: AsyncGenerator<SourceItem>, signal: AbortSignal): AsyncGenerator<SourceItem> {
  signal.throwIfAborted();
  for await (const item of items) {
    yield item;
    signal.throwIfAborted();
  }
}

/**
 * The files the walk will consider and the folders holding them, from a listing alone (no file is
 * opened): the run's expected total. An estimate: links are not followed, and a file found too
 * large, unreadable or without text is counted.
 */
async function countListed(directory: string, relativeDirectory: string, included: (relative: string) => boolean, excluded: (relative: string) => boolean, signal: AbortSignal): Promise<number> {
  let entries;
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (!skippable(error)) throw error;
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    signal.throwIfAborted();
    const relative = relativeDirectory ? `${relativeDirectory}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (excluded(relative) || excluded(`${relative}/`)) continue;
      const below = await countListed(path.join(directory, entry.name), relative, included, excluded, signal);
      if (below > 0) total += below + 1;
    } else if (entry.isFile()) {
      // Every file is either yielded or reported skipped (excluded, unsupported…), so each counts towards progress.
      total++;
    }
  }
  return total;
}

interface Frame {
  crumb: Breadcrumb;
  entity: SourceEntity;
  emitted: boolean;
}

/** The detail a skipped file is listed with: the size that was too large, or the error's message. */
function skipDetail({ err, size }: { err?: unknown; size?: number }): { detail?: string } {
  if (size !== undefined) return { detail: `${size} bytes` };
  if (err !== undefined) return { detail: err instanceof Error ? err.message : String(err) };
  return {};
}

async function* walkFolder(
  config: FolderConfig,
  cursor: FolderCursor | null,
  next: FolderCursor,
  signal: AbortSignal,
  logger: Logger,
  environment: ConnectorEnvironment,
  { expectTotal, reportSkipped }: Pick<SyncContext, 'expectTotal' | 'reportSkipped'>,
): AsyncGenerator<SourceItem> {
  signal.throwIfAborted();
  // Checked again at every run: the folder or the allowed roots may have changed since validation,
  // and a vanished folder must fail the run rather than look empty (which would delete everything).
  const root = await resolveRoot(config.path, environment);
  const included = matcher('include', config.include);
  const excluded = matcher('exclude', config.exclude);
  const previous = usableCursor(cursor, root);
  const previousFolders = new Set(previous?.folders ?? []);
  next.root = root;
  const yielded = new Set<string>(); // ids of entities and keep markers of this run
  const visited = new Set<string>(); // device:inode of folders walked, so links cannot loop
  const skippedByReason = new Map<string, number>();
  const skip = (relative: string, reason: string, extra: { err?: unknown; size?: number; max_file_bytes?: number } = {}) => {
    skippedByReason.set(reason, (skippedByReason.get(reason) ?? 0) + 1);
    logger.debug({ source: 'local_folder', file: relative, reason, ...extra }, 'local_folder: file skipped');
    reportSkipped?.({ entityId: relative, reason, ...skipDetail(extra) });
  };
  const urlOf = (relative: string) => pathToFileURL(path.join(root, ...relative.split('/'))).href;

  /** Folders are yielded just before the first item below them, so folders with nothing searchable stay out. */
  function* ancestors(frames: Frame[]): Generator<SourceItem> {
    for (const frame of frames) {
      if (frame.emitted) continue;
      signal.throwIfAborted();
      frame.emitted = true;
      const id = frame.crumb.entityId;
      next.folders.push(id);
      yielded.add(id);
      yield previousFolders.has(id) ? { keep: id } : frame.entity;
    }
  }

  async function* walk(directory: string, relativeDirectory: string, frames: Frame[]): AsyncGenerator<SourceItem> {
    let entries;
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      if (!skippable(error)) throw error;
      logger.debug({ source: 'local_folder', folder: relativeDirectory, err: error }, 'local_folder: folder skipped');
      return;
    }
    // Code-unit order: the same on every machine, whatever the locale.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      signal.throwIfAborted();
      const relative = relativeDirectory ? `${relativeDirectory}/${entry.name}` : entry.name;
      let real = path.join(directory, entry.name);
      let info: Stats;
      try {
        info = await lstat(real);
        if (info.isSymbolicLink()) {
          // Followed only while the target stays inside the folder.
          const target = await realpath(real);
          if (!inside(root, target)) {
            skip(relative, 'symbolic link leading outside the folder');
            continue;
          }
          real = target;
          info = await stat(target);
        }
      } catch (error) {
        if (!skippable(error)) throw error;
        skip(relative, 'unreadable', { err: error });
        continue;
      }

      if (info.isDirectory()) {
        if (excluded(relative) || excluded(`${relative}/`)) continue;
        const key = `${info.dev}:${info.ino}`;
        if (visited.has(key)) {
          skip(relative, 'folder already walked through another path');
          continue;
        }
        visited.add(key);
        const crumb: Breadcrumb = { entityId: relative, name: entry.name, entityType: 'folder' };
        const entity: SourceEntity = {
          ...crumb,
          breadcrumbs: frames.map((frame) => frame.crumb),
          createdAt: dateOrNull(info.birthtimeMs),
          // A folder's mtime moves whenever a child is added or removed: not a change of the folder.
          updatedAt: null,
          text: entry.name,
          fields: { relative_path: relative },
          webUrl: urlOf(relative),
        };
        yield* walk(real, relative, [...frames, { crumb, entity, emitted: false }]);
        continue;
      }

      if (!info.isFile()) continue; // sockets, FIFOs, devices
      if (!included(relative) || excluded(relative)) {
        skip(relative, 'excluded by include/exclude');
        continue;
      }
      if (!isSupported(entry.name)) {
        skip(relative, 'unsupported file type');
        continue;
      }
      if (info.size > config.max_file_bytes) {
        skip(relative, 'larger than max_file_bytes', { size: info.size, max_file_bytes: config.max_file_bytes });
        continue;
      }

      const before = previous?.files[relative];
      // ctime too: it moves when content is replaced with the old mtime kept (cp -p, rsync -t, tar).
      if (before && before.size === info.size && before.mtimeMs === info.mtimeMs && before.ctimeMs === info.ctimeMs) {
        next.files[relative] = before;
        if (before.indexed) {
          yield* ancestors(frames);
          yielded.add(relative);
          yield { keep: relative };
        } else {
          // Read before and found without text (binary, or its extraction failed): still left out.
          skip(relative, 'binary content or no text');
        }
        continue;
      }

      let read: Awaited<ReturnType<typeof readRegularFile>>;
      try {
        read = await readRegularFile(real, config.max_file_bytes);
      } catch (error) {
        if (!skippable(error)) throw error;
        skip(relative, 'unreadable', { err: error });
        continue;
      }
      if (!read) {
        skip(relative, 'changed while read (no longer a regular file, or too large)');
        continue;
      }
      signal.throwIfAborted();
      const { bytes, info: current } = read;
      const hash = sha256(bytes);
      const state = (indexed: boolean): FileState => ({ mtimeMs: current.mtimeMs, ctimeMs: current.ctimeMs, size: current.size, sha256: hash, indexed });
      if (before && before.sha256 === hash) {
        // Touched, not changed.
        next.files[relative] = state(before.indexed);
        if (before.indexed) {
          yield* ancestors(frames);
          yielded.add(relative);
          yield { keep: relative };
        } else {
          // Read before and found without text (binary, or its extraction failed): still left out.
          skip(relative, 'binary content or no text');
        }
        continue;
      }

      let extracted: Awaited<ReturnType<typeof extractText>>;
      try {
        extracted = await extractText({ name: entry.name, bytes });
      } catch (error) {
        // Left out once, for this reason (not also as "no text" below).
        skip(relative, 'text extraction failed', { err: error });
        next.files[relative] = state(false);
        continue;
      }
      signal.throwIfAborted();
      next.files[relative] = state(extracted !== null);
      if (!extracted) {
        skip(relative, 'binary content or no text');
        continue;
      }
      yield* ancestors(frames);
      yielded.add(relative);
      yield {
        entityId: relative,
        entityType: 'file',
        name: entry.name,
        breadcrumbs: frames.map((frame) => frame.crumb),
        createdAt: dateOrNull(current.birthtimeMs),
        updatedAt: current.mtime,
        text: extracted.text,
        fields: {
          relative_path: relative,
          extension: path.extname(entry.name).toLowerCase(),
          size: bytes.length,
          mime_type: extracted.mimeType,
          modified_at: current.mtime.toISOString(),
          sha256: hash,
        },
        webUrl: urlOf(relative),
        file: { name: entry.name, mimeType: extracted.mimeType, size: bytes.length, bytes },
        ...(extracted.language ? { language: extracted.language } : {}),
      };
    }
  }

  const rootInfo = await stat(root);
  visited.add(`${rootInfo.dev}:${rootInfo.ino}`);
  if (expectTotal) expectTotal(await countListed(root, '', included, excluded, signal));
  yield* walk(root, '', []);

  if (previous) {
    const gone = [...previousFolders, ...Object.entries(previous.files).filter(([, state]) => state.indexed).map(([id]) => id)].filter((id) => !yielded.has(id));
    for (const id of new Set(gone)) yield { delete: id };
  }
  // What was left out, counted by reason, where an operator looks (each file is named at debug level).
  const skipped = Object.fromEntries(skippedByReason);
  logger[skippedByReason.size > 0 ? 'info' : 'debug']({ source: 'local_folder', root, files: Object.keys(next.files).length, folders: next.folders.length, skipped }, 'local_folder: walk finished');
}

export default connector;
