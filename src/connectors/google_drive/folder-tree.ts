import type { Breadcrumb } from '../connector.js';
import type { DriveApi, DriveFile, SharedDrive } from './drive-api.js';

/** What an item's place in the hierarchy depends on. */
type Placed = Pick<DriveFile, 'parents' | 'driveId'>;

/** The name Google gives the root of a user's own drive. */
export const MY_DRIVE = 'My Drive';

/**
 * An item's breadcrumbs: its folder chain up to My Drive or its shared drive, as Drive shows it.
 * Folders seen in the run's listing are remembered; others are read once (`files.get`) and kept for
 * the rest of the run. A folder the user cannot see ends the chain (a file shared with them inside
 * someone else's folder starts below it).
 */
export class FolderTree {
  private readonly folders = new Map<string, Pick<DriveFile, 'name' | 'parents' | 'driveId'> | null>();
  private readonly drives = new Map<string, string | null>();
  private myDriveId: string | null | undefined;

  constructor(private readonly api: DriveApi) {}

  rememberFolder(folder: DriveFile): void {
    this.folders.set(folder.id, folder);
  }

  rememberDrive(drive: SharedDrive): void {
    this.drives.set(drive.id, drive.name);
  }

  /** The id of the user's My Drive root folder (read once). */
  async myDrive(): Promise<string | null> {
    if (this.myDriveId === undefined) {
      const root = await this.api.getFolder('root');
      this.myDriveId = root?.id ?? null;
      if (root) this.folders.set(root.id, root);
    }
    return this.myDriveId;
  }

  async breadcrumbs(item: Placed): Promise<Breadcrumb[]> {
    const chain: Breadcrumb[] = [];
    const visited = new Set<string>();
    let id = item.parents?.[0];
    while (id && !visited.has(id)) {
      visited.add(id);
      // A shared drive's root folder has the drive's id.
      if (id === item.driveId || this.drives.has(id)) {
        const name = await this.driveName(id);
        if (name !== null) chain.unshift({ entityId: id, name, entityType: 'shared_drive' });
        break;
      }
      const folder = await this.folder(id);
      if (!folder) break;
      // My Drive's root is the only folder of the user's corpus without a parent.
      if (!folder.parents?.length && !folder.driveId && id === (await this.myDrive())) {
        chain.unshift({ entityId: id, name: MY_DRIVE, entityType: 'folder' });
        break;
      }
      chain.unshift({ entityId: id, name: folder.name, entityType: 'folder' });
      id = folder.parents?.[0];
    }
    return chain;
  }

  private async folder(id: string) {
    if (!this.folders.has(id)) this.folders.set(id, await this.api.getFolder(id));
    return this.folders.get(id) ?? null;
  }

  private async driveName(id: string): Promise<string | null> {
    if (!this.drives.has(id)) this.drives.set(id, (await this.api.getDrive(id))?.name ?? null);
    return this.drives.get(id) ?? null;
  }
}
