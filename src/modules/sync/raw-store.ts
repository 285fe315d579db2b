import { createHash } from 'node:crypto';
import type { SourceEntity, SourceRun } from '../../connectors/connector.js';
import type { BlobStore } from '../../platform/blobs/blob-store.js';
import { entityOfHashedItems, type HashedEntity, type HashedItems } from './content-hash.js';

/** Where a collection's raw data stores keep their blobs, and one connection's within it. */
export const rawCollectionPrefix = (collectionId: string) => `raw/${collectionId}`;
export const rawPrefix = (collectionId: string, sourceConnectionId: string) => `${rawCollectionPrefix(collectionId)}/${sourceConnectionId}`;

/** An entity as the raw data store keeps it: everything but the file's bytes, which are a blob of their own. */
type StoredEntity = Omit<SourceEntity, 'file' | 'createdAt' | 'updatedAt'> & {
  createdAt: string | null;
  updatedAt: string | null;
  file: { name: string; mimeType: string; size: number } | null;
};

type FileMeta = NonNullable<StoredEntity['file']>;

/**
 * One line of a pack: an entity's record, or the mark that it was deleted. A sync writes the record
 * as the JSON its content hash read (HashedItems, with the id and the file's metadata beside it), so
 * an entity is serialized once: serializing it again took ~2.5 µs an entity of the main thread.
 * Compactions write (and packs of earlier versions hold) the entity itself.
 */
type PackLine = { entity: StoredEntity } | { entityId: string; content: HashedItems; file?: FileMeta } | { deleted: string };

/** The pack line of an entity and the JSON its hash read: joined as text, not serialized again. */
function contentLine({ entity, content }: HashedEntity): string {
  const file = entity.file ? `,"file":${JSON.stringify({ name: entity.file.name, mimeType: entity.file.mimeType, size: entity.file.size } satisfies FileMeta)}` : '';
  return `{"entityId":${JSON.stringify(entity.entityId)},"content":${content}${file}}`;
}

/** The entity a pack line is about. */
function entityIdOf(line: PackLine): string {
  if ('deleted' in line) return line.deleted;
  return 'entity' in line ? line.entity.entityId : line.entityId;
}

/** The entity a pack line records (null for a deletion). */
function storedEntityOf(line: PackLine): StoredEntity | null {
  if ('deleted' in line) return null;
  if ('entity' in line) return line.entity;
  return { ...entityOfHashedItems(line.entityId, line.content), file: line.file ?? null };
}

interface Pack {
  key: string;
  sequence: number;
  lines: number;
}

/** `packs/<sequence>-<lines>.jsonl`: the sequence orders the packs, the line count measures them without reading them. */
const PACK_NAME = /\/packs\/(\d{12})-(\d+)\.jsonl$/;

/** Records per pack written by a compaction. */
const COMPACTED_PACK_LINES = 5000;

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');

/**
 * The raw data store of one connection: what the source gave for each entity, to replay without the
 * source (behavior.replay_from_arf, re-embedding). A batch is one blob, a "pack" of JSON lines (an
 * entity's record or the mark of its deletion), written in order: the newest pack that names an
 * entity says what it is. A file per entity cost a sync more than its index writes (four file
 * operations per entity). Files' bytes stay one blob per entity (`files/<sha256 of the id>`).
 *
 * The earlier layout, a JSON file per entity under `entities/`, is read as older than any pack; the
 * first compaction moves it into packs. Compaction rewrites the live records once the packs hold
 * more superseded lines than live ones, so the store stays about the size of what the connection holds.
 */
export class RawStore {
  private readonly prefix: string;
  /** The packs as listed at the first use, with the ones this store wrote since; null until then. */
  private packs: Pack[] | null = null;
  private hasFiles: boolean | null = null;

  constructor(
    private readonly blobs: BlobStore,
    collectionId: string,
    sourceConnectionId: string,
  ) {
    this.prefix = rawPrefix(collectionId, sourceConnectionId);
  }

  private fileKey(entityId: string): string {
    return `${this.prefix}/files/${sha256(entityId)}`;
  }

  private get legacyPrefix(): string {
    return `${this.prefix}/entities`;
  }

  private async listPacks(): Promise<Pack[]> {
    if (this.packs) return this.packs;
    const packs: Pack[] = [];
    for await (const key of this.blobs.list(`${this.prefix}/packs`)) {
      const match = PACK_NAME.exec(key);
      if (match) packs.push({ key, sequence: Number(match[1]), lines: Number(match[2]) });
    }
    packs.sort((a, b) => a.sequence - b.sequence);
    this.packs = packs;
    return packs;
  }

  private async any(prefix: string): Promise<boolean> {
    for await (const _ of this.blobs.list(prefix)) return true;
    return false;
  }

  /** A pack of `lines`, each a PackLine's JSON. */
  private async appendPack(lines: string[]): Promise<void> {
    const packs = await this.listPacks();
    const sequence = (packs.at(-1)?.sequence ?? 0) + 1;
    const key = `${this.prefix}/packs/${String(sequence).padStart(12, '0')}-${lines.length}.jsonl`;
    await this.blobs.put(key, lines.join('\n'));
    packs.push({ key, sequence, lines: lines.length });
  }

  /** One batch: the entities' records (and their files), and the deletions of others. One pack, so the batch's order holds. */
  async write(entities: readonly HashedEntity[], deletions: string[]): Promise<void> {
    if (entities.length === 0 && deletions.length === 0) return;
    // Deletions in a store that holds nothing (the raw data handler was never on) leave nothing to mark.
    if (entities.length === 0 && (await this.listPacks()).length === 0 && !(await this.any(this.legacyPrefix))) return;
    const lines: string[] = [];
    const files: Promise<void>[] = [];
    for (const hashed of entities) {
      const { file, entityId } = hashed.entity;
      if (file) {
        this.hasFiles = true;
        files.push(this.blobs.put(this.fileKey(entityId), file.bytes));
      }
      lines.push(contentLine(hashed));
    }
    for (const entityId of deletions) lines.push(JSON.stringify({ deleted: entityId } satisfies PackLine));
    // The files first: a record in a pack finds its file.
    await allEnded(files);
    await this.appendPack(lines);
    if (deletions.length) await this.deleteFiles(deletions);
  }

  private async deleteFiles(entityIds: string[]): Promise<void> {
    this.hasFiles ??= await this.any(`${this.prefix}/files`);
    if (this.hasFiles) await allEnded(entityIds.map((id) => this.blobs.delete(this.fileKey(id))));
  }

  /** The newest record of every entity not deleted, newest pack first, then the earlier layout's files. */
  private async *latest(): AsyncGenerator<StoredEntity> {
    const decided = new Set<string>();
    const packs = await this.listPacks();
    for (let p = packs.length - 1; p >= 0; p--) {
      const stored = await this.blobs.get(packs[p]!.key);
      if (!stored) continue;
      const lines = stored.toString('utf8').split('\n');
      for (let l = lines.length - 1; l >= 0; l--) {
        if (!lines[l]) continue;
        const line = JSON.parse(lines[l]!) as PackLine;
        const entityId = entityIdOf(line);
        if (decided.has(entityId)) continue;
        decided.add(entityId);
        const entity = storedEntityOf(line);
        if (entity) yield entity;
      }
    }
    for await (const key of this.blobs.list(this.legacyPrefix)) {
      const stored = await this.blobs.get(key);
      if (!stored) continue;
      const entity = JSON.parse(stored.toString('utf8')) as StoredEntity;
      if (!decided.has(entity.entityId)) yield entity;
    }
  }

  /** A run that replays the store instead of calling the source (behavior.replay_from_arf). */
  replay(): SourceRun {
    const store = this;
    return {
      complete: true,
      nextCursor: () => null,
      items: (async function* () {
        for await (const record of store.latest()) {
          const { file, createdAt, updatedAt, ...rest } = record;
          const bytes = file ? await store.blobs.get(store.fileKey(record.entityId)) : null;
          yield {
            ...rest,
            createdAt: createdAt ? new Date(createdAt) : null,
            updatedAt: updatedAt ? new Date(updatedAt) : null,
            ...(file && bytes ? { file: { ...file, bytes } } : {}),
          } satisfies SourceEntity;
        }
      })(),
    };
  }

  /**
   * Rewrites the live records into new packs when the packs hold more superseded or deleted lines
   * than `live` (the entities the connection holds), or when the earlier layout is still there.
   * Crash-safe: the new packs come after the old ones and say the same; the old ones go oldest
   * first, so what remains of them is always their newest part.
   */
  async compactIfWasteful(live: number): Promise<void> {
    const packs = [...(await this.listPacks())];
    const lines = packs.reduce((sum, pack) => sum + pack.lines, 0);
    const legacy = await this.any(this.legacyPrefix);
    if (!legacy && lines <= 2 * live + COMPACTED_PACK_LINES) return;
    let pending: string[] = [];
    for await (const entity of this.latest()) {
      pending.push(JSON.stringify({ entity } satisfies PackLine));
      if (pending.length === COMPACTED_PACK_LINES) {
        await this.appendPack(pending);
        pending = [];
      }
    }
    if (pending.length) await this.appendPack(pending);
    if (legacy) await this.blobs.deletePrefix(this.legacyPrefix);
    for (const pack of packs) await this.blobs.delete(pack.key);
    this.packs = this.packs!.filter((pack) => !packs.includes(pack));
  }
}

/**
 * Waits for every write, then throws the first failure: with Promise.all a failure returned while other
 * writes still ran, and the run could end (and a cleanup of its connection run) before they landed.
 */
async function allEnded(writes: Promise<void>[]): Promise<void> {
  const ended = await Promise.allSettled(writes);
  const failed = ended.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}
