import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import picomatch from 'picomatch';
import { SourceConfigError, type Connector, type ConnectorEnvironment, type SourceItem } from '../connector.js';
import { extractText } from '../text-extraction/extract-text.js';

interface FolderConfig {
  path: string;
  include: string[];
  exclude: string[];
  max_file_bytes: number;
}

/** Per relative path, what the last run saw: unchanged size and mtime mean the file is not read again. */
type FolderCursor = Record<string, { mtimeMs: number; size: number; sha256: string }>;

const inside = (root: string, candidate: string) => candidate === root || candidate.startsWith(root + path.sep);

/** The real path of the configured folder, refused unless it lies inside an allowed root. */
async function resolveRoot(config: FolderConfig, environment: ConnectorEnvironment): Promise<string> {
  if (environment.localFolderRoots.length === 0) {
    throw new SourceConfigError('path', 'local_folder is disabled: the operator has not set CATCHMENT_LOCAL_FOLDER_ROOTS');
  }
  let real: string;
  try {
    real = await realpath(path.resolve(config.path));
  } catch {
    throw new SourceConfigError('path', `Folder "${config.path}" does not exist or cannot be read`);
  }
  const roots = await Promise.all(environment.localFolderRoots.map((root) => realpath(root).catch(() => null)));
  if (!roots.some((root) => root !== null && inside(root, real))) {
    throw new SourceConfigError('path', `Folder "${config.path}" is outside the allowed roots (CATCHMENT_LOCAL_FOLDER_ROOTS)`);
  }
  if (!(await stat(real)).isDirectory()) throw new SourceConfigError('path', `"${config.path}" is not a folder`);
  return real;
}

const connector: Connector = {
  shortName: 'local_folder',
  name: 'Local folder',
  description: 'A folder on the server: Markdown, text, HTML, PDF, DOCX and source code, with folders as breadcrumbs. Incremental by modification time and content hash.',
  authMethods: ['direct'],
  authFields: null,
  configFields: [
    { name: 'path', title: 'Folder path', description: 'Absolute path inside one of the roots the operator allows.', type: 'string', required: true, isSecret: false },
    { name: 'include', title: 'Include globs', type: 'array', itemsType: 'string', required: false, isSecret: false, default: ['**/*'] },
    { name: 'exclude', title: 'Exclude globs', type: 'array', itemsType: 'string', required: false, isSecret: false, default: ['**/node_modules/**', '**/.git/**'] },
    { name: 'max_file_bytes', title: 'Largest file read (bytes)', type: 'integer', required: false, isSecret: false, default: 20 * 1024 * 1024, minimum: 1 },
  ],
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['files'],
  outputEntityDefinitions: ['LocalFolderEntity', 'LocalFileEntity'],

  async validate({ config }, environment) {
    await resolveRoot(config as unknown as FolderConfig, environment);
  },

  sync({ config: raw, cursor, signal, logger }, environment) {
    const config = raw as unknown as FolderConfig;
    const previous = (cursor ?? {}) as FolderCursor;
    const next: FolderCursor = {};
    const included = picomatch(config.include, { dot: true });
    const excluded = picomatch(config.exclude, { dot: true });
    return {
      // The walk enumerates every file and folder (unchanged ones as keep markers), so whatever it
      // does not mention is gone: the run is complete, incremental or not.
      complete: true,
      nextCursor: () => next,
      items: (async function* (): AsyncGenerator<SourceItem> {
        const root = await resolveRoot(config, environment);
        const walk = async function* (directory: string, crumbs: { entityId: string; name: string; entityType: string }[]): AsyncGenerator<SourceItem> {
          const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
          entries.sort((a, b) => a.name.localeCompare(b.name));
          for (const entry of entries) {
            signal.throwIfAborted();
            const absolute = path.join(directory, entry.name);
            const relative = path.relative(root, absolute).split(path.sep).join('/');
            if (excluded(relative) || excluded(`${relative}/`)) continue;
            let info = await lstat(absolute).catch(() => null);
            if (info?.isSymbolicLink()) {
              // Follow links only while they stay inside the root.
              const target = await realpath(absolute).catch(() => null);
              if (!target || !inside(root, target)) continue;
              info = await stat(target).catch(() => null);
            }
            if (!info) continue;
            if (info.isDirectory()) {
              const folder = { entityId: relative, name: entry.name, entityType: 'folder' };
              yield {
                ...folder,
                breadcrumbs: crumbs,
                createdAt: info.birthtime,
                // A folder's mtime moves whenever a child is added or removed: not a change of the folder.
                updatedAt: null,
                text: entry.name,
                fields: { relative_path: relative },
                webUrl: pathToFileURL(absolute).href,
              };
              yield* walk(absolute, [...crumbs, folder]);
              continue;
            }
            if (!info.isFile() || !included(relative)) continue;
            if (info.size > config.max_file_bytes) {
              logger.debug({ file: relative, size: info.size }, 'local_folder: file larger than max_file_bytes skipped');
              continue;
            }
            const seen = previous[relative];
            if (seen && seen.mtimeMs === info.mtimeMs && seen.size === info.size) {
              next[relative] = seen;
              yield { keep: relative };
              continue;
            }
            const bytes = await readFile(absolute).catch(() => null);
            if (!bytes) continue;
            const sha256 = createHash('sha256').update(bytes).digest('hex');
            next[relative] = { mtimeMs: info.mtimeMs, size: info.size, sha256 };
            if (seen && seen.sha256 === sha256) {
              yield { keep: relative }; // touched, not changed
              continue;
            }
            const extracted = await extractText({ name: entry.name, bytes }).catch((error: unknown) => {
              logger.debug({ file: relative, err: error }, 'local_folder: text extraction failed');
              return null;
            });
            if (!extracted) continue;
            yield {
              entityId: relative,
              entityType: 'file',
              name: entry.name,
              breadcrumbs: crumbs,
              createdAt: info.birthtime,
              updatedAt: info.mtime,
              text: extracted.text,
              fields: { relative_path: relative, extension: path.extname(entry.name).toLowerCase(), size: info.size, mime_type: extracted.mimeType, modified_at: info.mtime.toISOString(), sha256 },
              webUrl: pathToFileURL(absolute).href,
              file: { name: entry.name, mimeType: extracted.mimeType, size: info.size, bytes },
              ...(extracted.language ? { language: extracted.language } : {}),
            };
          }
        };
        yield* walk(root, []);
      })(),
    };
  },
};

export default connector;
