import type { Breadcrumb, SourceEntity, SourceItem, SourceRun, SyncContext } from '../connector.js';
import { TemporarilyUnavailableError } from '../contract/errors.js';
import { EXTRACTION_VERSION } from '../text-extraction/extract-text.js';
import { type Corpus, type DriveApi, type DriveChange, type DriveFile, PageTokenRefusedError, type SharedDrive, UnreadableContent } from './drive-api.js';
import { FOLDER_MIME_TYPE, readFileText } from './file-content.js';
import { FolderTree, MY_DRIVE } from './folder-tree.js';
import type { DriveConfig, DriveCursor, ListingPosition, PastedToken } from './schemas.js';

type DriveContext = SyncContext<DriveConfig, PastedToken, DriveCursor>;

const FOLDERS_QUERY = `trashed = false and mimeType = '${FOLDER_MIME_TYPE}'`;
const FILES_QUERY = `trashed = false and mimeType != '${FOLDER_MIME_TYPE}'`;
const STAGES = ['folders', 'files'] as const;

/** The API origin, corpora and drive a cursor was taken for. */
export const targetOf = (config: DriveConfig) => `${new URL(config.api_url).origin}|${config.corpora}|${config.drive_id ?? ''}`;

/**
 * One run. Without a usable cursor it lists everything (shared drives, then each corpus's folders,
 * then its files) and is `complete`; it takes the changes start token first, so what changes during
 * the listing comes with the next run. With a cursor it reads the changes since (`changes.list`):
 * removed or trashed items are deleted, others read again. A checkpoint follows every page.
 */
export class DriveRun implements SourceRun<DriveCursor> {
  /** Decided before the first item: a full listing (unless it resumes one) sees everything. */
  complete: boolean;
  private next: DriveCursor | null = null;
  private readonly tree: FolderTree;
  private readonly target: string;
  private readonly start: DriveCursor | null;
  /** Items read in this run (a change listed after its folder's subtree was read again is not read twice). */
  private readonly itemsRead = new Set<string>();
  readonly items: AsyncIterable<SourceItem>;

  constructor(
    private readonly api: DriveApi,
    private readonly context: DriveContext,
  ) {
    this.tree = new FolderTree(api);
    this.target = targetOf(context.config);
    const { cursor } = context;
    this.start = cursor && cursor.target === this.target && cursor.extraction === EXTRACTION_VERSION ? cursor : null;
    this.complete = this.start === null;
    this.items = this.read();
  }

  nextCursor(): DriveCursor | null {
    return this.next;
  }

  private async *read(): AsyncGenerator<SourceItem> {
    const { start } = this;
    if (!start) yield* this.listEverything(await this.api.startPageToken(this.changesScope().corpus), null);
    else if (start.listing) yield* this.listEverything(start.changes_token, start.listing);
    else yield* this.readChanges(start.changes_token);
  }

  private cursorAt(changesToken: string, listing: ListingPosition | null): DriveCursor {
    return { version: 1, target: this.target, extraction: EXTRACTION_VERSION, changes_token: changesToken, listing };
  }

  private changesScope(): { corpus: Corpus; allDrives: boolean } {
    const { config } = this.context;
    return { corpus: config.corpora === 'drive' ? { kind: 'drive', driveId: config.drive_id! } : { kind: 'user' }, allDrives: config.corpora === 'allDrives' };
  }

  /**
   * Shared drives and My Drive first (also when resuming: they are few, and their ids say which
   * corpora there are), then the folders and files of each corpus from `from` on.
   */
  private async *listEverything(changesToken: string, from: ListingPosition | null): AsyncGenerator<SourceItem> {
    const { config, signal, logger } = this.context;
    const corpora: string[] = [];
    if (config.corpora === 'drive') {
      const drive = await this.api.requireDrive(config.drive_id!);
      this.tree.rememberDrive(drive);
      corpora.push(drive.id);
      yield driveEntity(drive);
    } else {
      corpora.push('user');
      const myDrive = await this.tree.myDrive();
      if (myDrive) yield myDriveEntity(myDrive);
    }
    if (config.corpora === 'allDrives') {
      let pageToken: string | null = null;
      do {
        const page = await this.api.listDrives(pageToken);
        for (const drive of page.drives) {
          this.tree.rememberDrive(drive);
          corpora.push(drive.id);
          yield driveEntity(drive);
        }
        pageToken = page.nextPageToken ?? null;
      } while (pageToken);
    }

    // A corpus gone since the checkpoint (a shared drive left) cannot be found: start over at the first.
    const first = from ? Math.max(0, corpora.indexOf(from.corpus)) : 0;
    for (let index = first; index < corpora.length; index++) {
      const corpusId = corpora[index]!;
      const corpus: Corpus = corpusId === 'user' ? { kind: 'user' } : { kind: 'drive', driveId: corpusId };
      const resumed = from?.corpus === corpusId ? from : null;
      for (const stage of STAGES) {
        if (resumed && stage === 'folders' && resumed.stage === 'files') continue;
        let pageToken = resumed?.stage === stage ? resumed.page_token : null;
        do {
          const query = stage === 'folders' ? FOLDERS_QUERY : FILES_QUERY;
          const page = await this.api.listFiles(corpus, query, config.page_size, pageToken).catch((error: unknown) => {
            // A checkpoint's page token may have expired since: its stage starts over at the first page.
            if (!(error instanceof PageTokenRefusedError) || pageToken !== resumed?.page_token) throw error;
            logger.info({ source: 'google_drive', corpus: corpusId, stage }, 'google_drive: the checkpoint\'s page token was refused; listing its stage from the start');
            return this.api.listFiles(corpus, query, config.page_size, null);
          });
          // Only the allDrives corpus searches incompletely (each corpus is listed on its own here): deleting what it missed would be wrong.
          if (page.incompleteSearch) throw new TemporarilyUnavailableError('Google Drive answered with an incomplete listing', 60);
          if (stage === 'folders') for (const folder of page.files) this.tree.rememberFolder(folder);
          for (const item of page.files) {
            signal.throwIfAborted();
            const entity = await this.entityOf(item);
            if (entity) yield entity;
          }
          pageToken = page.nextPageToken ?? null;
          const position: ListingPosition | null = pageToken
            ? { corpus: corpusId, stage, page_token: pageToken }
            : stage === 'folders'
              ? { corpus: corpusId, stage: 'files', page_token: null }
              : index + 1 < corpora.length
                ? { corpus: corpora[index + 1]!, stage: 'folders', page_token: null }
                : null;
          this.context.checkpoint(this.cursorAt(changesToken, position));
        } while (pageToken);
      }
    }
    this.next = this.cursorAt(changesToken, null);
  }

  private async *readChanges(changesToken: string): AsyncGenerator<SourceItem> {
    const { config, logger } = this.context;
    let pageToken = changesToken;
    for (let first = true; ; first = false) {
      const page = await this.api.listChanges(pageToken, this.changesScope(), config.page_size);
      if (!page) {
        if (!first) throw new TemporarilyUnavailableError('Google Drive refused the page token of its own changes list', 60);
        // Nothing was yielded yet, so this run can still be the full listing Google asks for.
        logger.info({ source: 'google_drive' }, 'google_drive: the stored changes token was refused; listing everything again');
        this.complete = true;
        yield* this.listEverything(await this.api.startPageToken(this.changesScope().corpus), null);
        return;
      }
      for (const change of page.changes) yield* this.changeItems(change);
      if (!page.nextPageToken) {
        this.next = this.cursorAt(page.newStartPageToken ?? pageToken, null);
        return;
      }
      pageToken = page.nextPageToken;
      this.context.checkpoint(this.cursorAt(pageToken, null));
    }
  }

  private async *changeItems(change: DriveChange): AsyncGenerator<SourceItem> {
    const { config } = this.context;
    if (change.changeType === 'drive') {
      if (!change.driveId || !(config.corpora === 'allDrives' || change.driveId === config.drive_id)) return;
      if (change.removed || !change.drive) yield { delete: change.driveId };
      else {
        this.tree.rememberDrive(change.drive);
        yield driveEntity(change.drive);
      }
      return;
    }
    const id = change.fileId ?? change.file?.id;
    if (!id) return;
    const { file } = change;
    // Moved out of the drive this connection reads (or into a shared drive, for `user`): gone from here.
    const outside = file && (config.corpora === 'drive' ? file.driveId !== config.drive_id : config.corpora === 'user' && file.driveId !== undefined);
    if (change.removed || !file || file.trashed || outside) {
      yield { delete: id };
      return;
    }
    if (this.itemsRead.has(id)) return; // read already, below a folder that changed earlier in this run
    if (file.mimeType === FOLDER_MIME_TYPE) this.tree.rememberFolder(file);
    const entity = await this.entityOf(file);
    // A file that can no longer be read (grown too large…) leaves its older text behind otherwise.
    yield entity ?? { delete: id };
    if (file.mimeType === FOLDER_MIME_TYPE) yield* this.readSubtree(file);
  }

  /**
   * Everything below a folder that changed, read again: a rename or a move changes their breadcrumbs
   * and a new sharing their access, and Google lists a change for the folder alone.
   */
  private async *readSubtree(folder: DriveFile): AsyncGenerator<SourceItem> {
    const corpus: Corpus = folder.driveId ? { kind: 'drive', driveId: folder.driveId } : { kind: 'user' };
    const pending = [folder.id];
    for (let parent = pending.shift(); parent !== undefined; parent = pending.shift()) {
      let pageToken: string | null = null;
      do {
        const page = await this.api.listFiles(corpus, `'${quoted(parent)}' in parents and trashed = false`, this.context.config.page_size, pageToken);
        for (const item of page.files) {
          this.context.signal.throwIfAborted();
          if (item.mimeType === FOLDER_MIME_TYPE) {
            this.tree.rememberFolder(item);
            pending.push(item.id);
          }
          if (this.itemsRead.has(item.id)) continue;
          const entity = await this.entityOf(item);
          if (entity) yield entity;
        }
        pageToken = page.nextPageToken ?? null;
      } while (pageToken);
    }
  }

  /** The folder or file entity of an item; null (reported as skipped) when its content cannot be read. */
  private async entityOf(item: DriveFile): Promise<SourceEntity | null> {
    this.itemsRead.add(item.id);
    const breadcrumbs = await this.tree.breadcrumbs(item);
    if (item.mimeType === FOLDER_MIME_TYPE) return folderEntity(item, breadcrumbs);
    const content = await readFileText(this.api, item, this.context.config.max_file_bytes, this.context.logger);
    if (content instanceof UnreadableContent) {
      this.context.reportSkipped?.({ entityId: item.id, reason: content.reason, ...(content.detail ? { detail: content.detail } : {}) });
      return null;
    }
    return {
      ...itemBase(item, 'file', breadcrumbs),
      text: content.text,
      fields: {
        ...itemFields(item),
        md5_checksum: item.md5Checksum ?? null,
        size: item.size === undefined ? null : Number(item.size),
        exported_as: content.exportedAs ?? null,
      },
      webUrl: item.webViewLink ?? `https://drive.google.com/file/d/${item.id}/view`,
      ...(content.file ? { file: content.file } : {}),
      ...(content.language ? { language: content.language } : {}),
    };
  }
}

/** A value inside a quoted query term (ref-search-terms: quotes and backslashes escaped with a backslash). */
const quoted = (value: string) => value.replace(/[\\']/g, '\\$&');

const date = (value: string | undefined) => (value ? new Date(value) : null);

function itemBase(item: DriveFile, entityType: 'file' | 'folder', breadcrumbs: Breadcrumb[]) {
  return {
    entityId: item.id,
    entityType,
    name: item.name,
    breadcrumbs,
    createdAt: date(item.createdTime),
    updatedAt: date(item.modifiedTime),
    ...(item.permissions ? { access: accessOf(item.permissions) } : {}),
  };
}

function itemFields(item: DriveFile) {
  return {
    mime_type: item.mimeType,
    owners: (item.owners ?? []).map((owner) => owner.emailAddress ?? owner.displayName).filter((owner) => owner !== undefined),
    modified_time: item.modifiedTime ?? null,
    drive_id: item.driveId ?? null,
  };
}

/**
 * Who may see an item, from its permissions: users and groups by email, a domain as `domain:<name>`;
 * public when anyone (with the link) may. Google returns permissions only to users who may see them.
 */
function accessOf(permissions: NonNullable<DriveFile['permissions']>): NonNullable<SourceEntity['access']> {
  const viewers = permissions.flatMap((permission) => (permission.emailAddress ? [permission.emailAddress] : permission.type === 'domain' && permission.domain ? [`domain:${permission.domain}`] : []));
  return { viewers: [...new Set(viewers)].sort(), isPublic: permissions.some((permission) => permission.type === 'anyone') };
}

function folderEntity(folder: DriveFile, breadcrumbs: Breadcrumb[]): SourceEntity {
  return { ...itemBase(folder, 'folder', breadcrumbs), text: folder.name, fields: itemFields(folder), webUrl: folder.webViewLink ?? `https://drive.google.com/drive/folders/${folder.id}` };
}

function driveEntity(drive: SharedDrive): SourceEntity {
  return {
    entityId: drive.id,
    entityType: 'shared_drive',
    name: drive.name,
    breadcrumbs: [],
    createdAt: date(drive.createdTime),
    updatedAt: null,
    text: drive.name,
    fields: { drive_id: drive.id },
    webUrl: `https://drive.google.com/drive/folders/${drive.id}`,
  };
}

function myDriveEntity(rootId: string): SourceEntity {
  return { entityId: rootId, entityType: 'folder', name: MY_DRIVE, breadcrumbs: [], createdAt: null, updatedAt: null, text: MY_DRIVE, fields: { drive_id: null }, webUrl: 'https://drive.google.com/drive/my-drive' };
}
