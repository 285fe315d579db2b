import type { Orm } from '../../platform/db/database.js';
import type { SyncPipeline } from './pipeline.js';
import { SyncJob } from './sync-job.entity.js';

/**
 * The index optimizes runs leave running once their job has ended (SyncPipeline.optimizeInBackground),
 * as the jobs record them (SyncJob.indexOptimizedAt): marking them done, and starting again those a
 * process that stopped (or closed its index) left undone.
 */
export class OwedOptimizes {
  constructor(private readonly deps: { orm: Orm; pipeline: Pick<SyncPipeline, 'optimizeInBackground'> }) {}

  async markDone(jobIds: string[]): Promise<void> {
    await this.deps.orm.em.fork().nativeUpdate(SyncJob, { id: { $in: jobIds } }, { indexOptimizedAt: new Date() });
  }

  /** At a worker's start: the optimizes completed jobs still owe, one per collection, in the background (one after another: see SyncPipeline.optimizing). */
  async startLeft(): Promise<void> {
    const owed = await this.deps.orm.em.fork().find(SyncJob, { status: 'COMPLETED', indexOptimizedAt: null }, { populate: ['sourceConnection'] });
    const byCollection = new Map<string, string[]>();
    for (const job of owed) {
      const collectionId = job.sourceConnection.collection.id;
      const jobIds = byCollection.get(collectionId) ?? [];
      jobIds.push(job.id);
      byCollection.set(collectionId, jobIds);
    }
    for (const [collectionId, jobIds] of byCollection) this.deps.pipeline.optimizeInBackground(collectionId, () => this.markDone(jobIds));
  }
}
