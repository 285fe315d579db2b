import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../../platform/logger.js';
import type { Breadcrumb, ConnectorEnvironment, SourceEntity, SourceItem, SyncContext } from '../connector.js';
import { extractText, isSupported } from '../text-extraction/extract-text.js';
import { inside, matcher, readRegularFile, resolveRoot, skippable } from './folder-access.js';
import { usableCursor, type FileState, type FolderConfig, type FolderCursor } from './folder-settings.js';

/**
 * One `local_folder` run: the walk of the folder that yields its folders and files (keep markers for
 * what the cursor shows unchanged, deletions for what is gone) and reports what it leaves out.
 */

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const dateOrNull = (ms: number) => (ms > 0 ? new Date(ms) : null); // filesystems without birth times report 0

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

export async function* walkFolder(
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

  /** A file as the previous run left it: kept when it was indexed, else reported left out again. */
  function* unchanged(relative: string, indexed: boolean, frames: Frame[]): Generator<SourceItem> {
    if (indexed) {
      yield* ancestors(frames);
      yielded.add(relative);
      yield { keep: relative };
    } else {
      // Read before and found without text (binary, or its extraction failed): still left out.
      skip(relative, 'binary content or no text');
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
        yield* unchanged(relative, before.indexed, frames);
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
        yield* unchanged(relative, before.indexed, frames);
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
