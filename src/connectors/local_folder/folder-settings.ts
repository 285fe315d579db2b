import { z } from 'zod';
import { nonBlankString } from '../contract/schemas.js';
import { EXTRACTION_VERSION } from '../text-extraction/extract-text.js';

/** `local_folder`'s settings and cursor: what a connection configures, and what a run leaves for the next one. */

const DEFAULT_INCLUDE = ['**/*'];
const DEFAULT_EXCLUDE = ['**/node_modules/**', '**/.git/**', '**/.hg/**', '**/.svn/**', '**/__pycache__/**', '**/.DS_Store', '**/Thumbs.db'];
const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;

export const config = z.strictObject({
  path: nonBlankString().meta({ title: 'Folder path', description: 'Absolute path of a folder inside one of the roots the operator allows (CATCHMENT_LOCAL_FOLDER_ROOTS).' }),
  include: z
    .array(z.string())
    .default(DEFAULT_INCLUDE)
    .meta({ title: 'Include globs', description: 'Files to read, as globs on the path relative to the folder (dot files included; a pattern without "/" matches the file name at any depth).' }),
  exclude: z.array(z.string()).default(DEFAULT_EXCLUDE).meta({ title: 'Exclude globs', description: 'Files and folders to skip, as globs on the path relative to the folder; an excluded folder is not entered.' }),
  max_file_bytes: z.int().min(1).default(DEFAULT_MAX_FILE_BYTES).meta({ title: 'Largest file read (bytes)', description: 'Larger files are skipped.' }),
});

export type FolderConfig = z.infer<typeof config>;

/** What the last successful run saw of one file. `indexed` is false for files read but not made searchable (binary, unparsable). */
const fileState = z.object({ mtimeMs: z.number(), ctimeMs: z.number(), size: z.number(), sha256: z.string(), indexed: z.boolean() });

export type FileState = z.infer<typeof fileState>;

export const cursor = z.object({
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
export function usableCursor(previous: FolderCursor | null, root: string): FolderCursor | null {
  return previous && previous.extraction === EXTRACTION_VERSION && previous.root === root ? previous : null;
}
