import path from 'node:path';
import type { SkippedItem, SourceItem } from '../connector.js';
import { EXTRACTION_VERSION, extractText, isSupported } from '../text-extraction/extract-text.js';
import type { RepositoryScope } from './entities.js';
import { type GitHubApi, treeSchema } from './github-api.js';
import type { RepositoryState } from './schemas.js';

/**
 * The files of the default branch: its tree in one listing (GET /repos/{owner}/{repo}/git/trees/{branch}?recursive=1,
 * docs.github.com/rest/git/trees#get-a-tree) and each new or changed blob's bytes (git/blobs, raw),
 * read by the shared text extraction. A path whose blob sha is the one indexed is kept without
 * being read; a path gone from the tree is deleted.
 */

/** Files read between two checkpoints. */
const FILES_PER_CHECKPOINT = 25;
/** Git's mode for a symbolic link: its "content" is the target path. */
const SYMLINK_MODE = '120000';

export const fileEntityId = (fullName: string, filePath: string) => `${fullName}/files/${filePath}`;

function blobUrl(scope: RepositoryScope, branch: string, filePath: string): string {
  const encoded = filePath.split('/').map(encodeURIComponent).join('/');
  return `${scope.repository.html_url}/blob/${encodeURIComponent(branch)}/${encoded}`;
}

export interface FileOptions {
  maxBytes: number;
  checkpoint(): void;
  reportSkipped?(item: SkippedItem): void;
}

export async function* readFiles(api: GitHubApi, scope: RepositoryScope, state: RepositoryState, options: FileOptions): AsyncGenerator<SourceItem> {
  const { repository } = scope;
  const branch = repository.default_branch;
  // 409: an empty repository has no tree yet.
  const tree = branch ? await api.get(`/repos/${repository.full_name}/git/trees/${encodeURIComponent(branch)}`, treeSchema, { query: { recursive: 1 }, missing: [404, 409] }) : null;
  const previous = state.files;
  // Shas read with another extraction or size limit say nothing of what would be indexed now.
  const reusable = previous?.extraction === EXTRACTION_VERSION && previous.max_bytes === options.maxBytes;
  const indexed: Record<string, string> = reusable ? { ...previous.paths } : {};
  state.files = { extraction: EXTRACTION_VERSION, max_bytes: options.maxBytes, paths: indexed };

  const listed = new Set<string>();
  let sinceCheckpoint = 0;
  for (const entry of tree?.tree ?? []) {
    if (entry.type !== 'blob') continue; // folders, and submodules (type commit)
    listed.add(entry.path);
    const entityId = fileEntityId(repository.full_name, entry.path);
    const skip = (reason: string, detail?: string) => {
      options.reportSkipped?.({ entityId, reason, ...(detail ? { detail } : {}) });
      delete indexed[entry.path];
      return previous?.paths[entry.path] !== undefined ? { delete: entityId } : null;
    };
    const name = path.posix.basename(entry.path);
    let gone: { delete: string } | null = null;
    if (entry.mode === SYMLINK_MODE) gone = skip('symbolic link');
    else if (!isSupported(name)) gone = skip('unsupported file type');
    else if ((entry.size ?? 0) > options.maxBytes) gone = skip('larger than max_file_bytes', `${entry.size} bytes`);
    else if (indexed[entry.path] === entry.sha) {
      yield { keep: entityId };
      continue;
    } else {
      const bytes = await api.blob(repository.full_name, entry.sha, options.maxBytes);
      let extracted: Awaited<ReturnType<typeof extractText>>;
      try {
        extracted = await extractText({ name, bytes });
      } catch (error) {
        gone = skip('unreadable', (error as Error).message);
        extracted = null;
      }
      if (extracted) {
        yield {
          entityId,
          entityType: 'file',
          name,
          breadcrumbs: scope.breadcrumbs,
          createdAt: null,
          updatedAt: null,
          text: extracted.text,
          fields: { path: entry.path, sha: entry.sha, size: bytes.length, branch },
          webUrl: blobUrl(scope, branch!, entry.path),
          file: { name, mimeType: extracted.mimeType, size: bytes.length, bytes },
          ...(extracted.language ? { language: extracted.language } : {}),
          access: scope.access,
        };
        indexed[entry.path] = entry.sha;
      } else if (!gone) gone = skip('binary content');
      if (++sinceCheckpoint === FILES_PER_CHECKPOINT) {
        sinceCheckpoint = 0;
        options.checkpoint();
      }
    }
    if (gone) yield gone;
  }
  // A truncated tree (over 100,000 entries) lists only part of the files: none is known gone.
  if (tree?.truncated) return;
  for (const filePath of Object.keys({ ...previous?.paths, ...indexed })) {
    if (listed.has(filePath)) continue;
    delete indexed[filePath];
    yield { delete: fileEntityId(repository.full_name, filePath) };
  }
}
