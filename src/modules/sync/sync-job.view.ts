import type { SyncJob } from './sync-job.entity.js';

/** A job as clients see it (REST `SourceConnectionJob`, GraphQL `SyncJob`). */
export interface SyncJobView {
  id: string;
  sourceConnectionId: string;
  status: SyncJob['status'];
  trigger: string;
  forceFullSync: boolean;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  durationSeconds: number | null;
  entitiesInserted: number;
  entitiesUpdated: number;
  entitiesDeleted: number;
  entitiesSkipped: number;
  entitiesFailed: number;
  chunksWritten: number;
  entitiesTotal: number | null;
  error: string | null;
  errorDetails: Record<string, unknown> | null;
}

export function jobView(job: SyncJob): SyncJobView {
  return {
    id: job.id,
    sourceConnectionId: job.sourceConnection.id,
    status: job.status,
    trigger: job.trigger,
    forceFullSync: job.forceFullSync,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    durationSeconds: job.startedAt && job.completedAt ? (job.completedAt.getTime() - job.startedAt.getTime()) / 1000 : null,
    entitiesInserted: job.entitiesInserted,
    entitiesUpdated: job.entitiesUpdated,
    entitiesDeleted: job.entitiesDeleted,
    entitiesSkipped: job.entitiesSkipped,
    entitiesFailed: job.entitiesFailed,
    chunksWritten: job.chunksWritten,
    entitiesTotal: job.entitiesTotal,
    error: job.error,
    errorDetails: job.errorDetails,
  };
}
