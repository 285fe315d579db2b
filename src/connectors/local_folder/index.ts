import type { Connector, SourceItem } from '../connector.js';
import { EXTRACTION_VERSION } from '../text-extraction/extract-text.js';
import { matcher, resolveRoot } from './folder-access.js';
import { config, cursor, type FolderConfig, type FolderCursor } from './folder-settings.js';
import { walkFolder } from './walk-folder.js';

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

export default connector;
