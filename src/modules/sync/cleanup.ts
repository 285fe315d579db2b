import type { EntityManager } from '@mikro-orm/core';
import type { BlobStore } from '../../platform/blobs/blob-store.js';
import type { Orm } from '../../platform/db/database.js';
import type { Logger } from '../../platform/logger.js';
import type { JobQueue } from '../../platform/queue/queue.js';
import type { VectorIndex } from '../../platform/vectors/vector-index.js';
import { Collection } from '../collections/collection.entity.js';
import { SourceConnection } from '../connections/source-connection.entity.js';
import { PendingCleanup } from './pending-cleanup.entity.js';
import { rawCollectionPrefix, rawPrefix } from './raw-store.js';

/** Queue for index and raw-data cleanup after a connection (or a whole collection) is deleted. */
export const CLEANUP_QUEUE = 'cleanup';

/** What a cleanup removes: a connection's chunks and raw data, or (no connection) a whole collection's. */
export interface CleanupScope {
  collectionId: string;
  /** Null: the whole collection. */
  sourceConnectionId: string | null;
}

export interface CleanupRequest extends CleanupScope {
  /** The PendingCleanup record, removed once done (absent in messages queued before there were records). */
  id?: string;
}

/**
 * Records in `em`'s unit of work the cleanup a deletion owes (see PendingCleanup), and returns what
 * queues it: call that once the unit of work is committed.
 */
export function stageCleanup(
  em: Pick<EntityManager, 'persist'>,
  queue: JobQueue,
  logger: Pick<Logger, 'warn'>,
  scope: CleanupScope,
): () => Promise<void> {
  const pending = new PendingCleanup();
  pending.collectionId = scope.collectionId;
  pending.sourceConnectionId = scope.sourceConnectionId;
  em.persist(pending);
  return () => queueCleanup(queue, pending, logger);
}

/**
 * Queues a recorded cleanup under its record's id (so it is not queued twice while waiting). A failed
 * enqueue is only logged: the record stays, and the worker's reconciler queues it again.
 */
export async function queueCleanup(queue: JobQueue, pending: PendingCleanup, logger: Pick<Logger, 'warn'>): Promise<void> {
  const request: CleanupRequest = { id: pending.id, collectionId: pending.collectionId, sourceConnectionId: pending.sourceConnectionId };
  await queue.add(CLEANUP_QUEUE, request, { id: pending.id }).catch((error: unknown) => logger.warn({ err: error, cleanup: pending.id }, 'queuing a cleanup failed; the worker queues it again'));
}

/** The worker's side: doing the cleanups, and queuing again those whose message was lost. */
export class Cleanups {
  constructor(private readonly deps: { orm: Orm; queue: JobQueue; vectors: VectorIndex; blobs: BlobStore; logger: Logger }) {}

  /** Removes a deleted connection's (or collection's) chunks and raw data, then its PendingCleanup record. Idempotent. */
  async run({ id, collectionId, sourceConnectionId }: CleanupRequest): Promise<void> {
    try {
      if (sourceConnectionId) {
        await this.deps.vectors.deleteSourceConnection(collectionId, sourceConnectionId);
        await this.deps.blobs.deletePrefix(rawPrefix(collectionId, sourceConnectionId));
      } else {
        await this.deps.vectors.deleteCollection(collectionId);
        await this.deps.blobs.deletePrefix(rawCollectionPrefix(collectionId));
      }
      if (id) await this.deps.orm.em.fork().nativeDelete(PendingCleanup, { id });
    } catch (error) {
      // The queues drop a failed job quietly; its record stays and is queued again next tick.
      this.deps.logger.error({ err: error, cleanup: id, collectionId, sourceConnectionId }, 'cleanup failed; it is tried again on the next tick');
      throw error;
    }
  }

  /**
   * After a run of a connection has ended, writes included: when the connection (or its collection)
   * was deleted meanwhile, records and queues the cleanup of what the run wrote. A deletion waits at
   * most 15 s for a run to stop (SourceConnectionService.stopSyncs); a run still writing after that (a
   * batch behind a long compaction, a worker the cancel did not reach) added chunks and raw records
   * after the deletion's own cleanup had run, or made a deleted collection's table again. Doing a
   * cleanup twice is harmless: each is idempotent.
   */
  async afterRun(run: { collectionId: string; sourceConnectionId: string }): Promise<void> {
    const em = this.deps.orm.em.fork();
    if ((await em.count(SourceConnection, { id: run.sourceConnectionId })) > 0) return;
    const collectionGone = (await em.count(Collection, { id: run.collectionId })) === 0;
    const queue = stageCleanup(em, this.deps.queue, this.deps.logger, { collectionId: run.collectionId, sourceConnectionId: collectionGone ? null : run.sourceConnectionId });
    await em.flush();
    await queue();
  }

  /**
   * Queues again the cleanups still owed, requested before `requestedBefore` when given: their
   * message may be lost, as a waiting sync job's may (see SyncWorker.queueWaiting). Queued by record
   * id, so one still queued is not queued twice.
   */
  async queuePending(requestedBefore?: Date): Promise<void> {
    const pending = await this.deps.orm.em.fork().find(PendingCleanup, requestedBefore ? { requestedAt: { $lt: requestedBefore } } : {}, { orderBy: { requestedAt: 'asc', id: 'asc' } });
    for (const cleanup of pending) await queueCleanup(this.deps.queue, cleanup, this.deps.logger);
  }
}
