import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';

/** Keyed bytes: the raw data store (every synced entity and its file) lives here. */
export interface BlobStore {
  put(key: string, bytes: Buffer | string): Promise<void>;
  /** Null when absent. */
  get(key: string): Promise<Buffer | null>;
  /** Keys under a prefix (recursively), in no particular order. */
  list(prefix: string): AsyncIterable<string>;
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
}

/** Files under a directory; keys are relative paths with `/` separators. Writes are atomic, and owner-only whatever the umask. */
export class FileBlobStore implements BlobStore {
  /** Directories known to exist: a sync writes thousands of blobs into a few directories. */
  private readonly directories = new Set<string>();

  constructor(private readonly root: string) {}

  private resolve(key: string): string {
    const file = path.resolve(this.root, key);
    if (!file.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`Blob key escapes the store: ${key}`);
    return file;
  }

  async put(key: string, bytes: Buffer | string): Promise<void> {
    const file = this.resolve(key);
    const directory = path.dirname(file);
    if (!this.directories.has(directory)) {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      this.directories.add(directory);
    }
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, bytes, { mode: 0o600 });
    await rename(temporary, file);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.resolve(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async *list(prefix: string): AsyncIterable<string> {
    const base = this.resolve(prefix);
    let entries;
    try {
      entries = await readdir(base, { recursive: true, withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      if (!entry.isFile() || entry.name.endsWith('.tmp')) continue;
      yield path.relative(this.root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.resolve(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    const base = this.resolve(prefix);
    for (const directory of this.directories) if (directory === base || directory.startsWith(base + path.sep)) this.directories.delete(directory);
    await rm(base, { recursive: true, force: true });
  }
}
