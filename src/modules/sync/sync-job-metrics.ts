import type { FinishedSyncJob } from '../../platform/metrics/metrics.js';
import type { SyncJob } from './sync-job.entity.js';

const seconds = (from: Date | null, to: Date | null) => (from && to ? Math.max(0, (to.getTime() - from.getTime()) / 1000) : null);

/** A job SyncService just moved to COMPLETED, FAILED or CANCELLED, as the metrics count it. */
export function finishedSyncJob(job: SyncJob): FinishedSyncJob {
  return {
    status: job.status as FinishedSyncJob['status'],
    waitSeconds: seconds(job.createdAt, job.startedAt),
    runSeconds: seconds(job.startedAt, job.completedAt),
    entities: { inserted: job.entitiesInserted, updated: job.entitiesUpdated, deleted: job.entitiesDeleted, skipped: job.entitiesSkipped, failed: job.entitiesFailed },
    chunks: job.chunksWritten,
  };
}
