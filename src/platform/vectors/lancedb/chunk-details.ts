import { chunkIdOf, type ChunkRecord, type ScoredChunk } from '../vector-index.js';

/**
 * What the current table layout keeps of a chunk in one JSON text column (DETAILS_COLUMN): every
 * field a result shows but the name and text (which keyword search indexes), dates as epoch
 * milliseconds. A page of results then reads three columns (name, keywords, details), not fifteen: a
 * take by row id costs about 0.25 ms per column at 100,000 chunks. Filtered fields keep their own
 * columns too (filters read those).
 */
interface ChunkDetails {
  sourceConnectionId: string;
  entityId: string;
  chunkIndex: number;
  entityType: string;
  sourceName: string;
  breadcrumbs: ChunkRecord['breadcrumbs'];
  createdAt: number | null;
  updatedAt: number | null;
  webUrl: string;
  url: string | null;
  syncId: string;
  syncJobId: string;
  rawSourceFields: Record<string, unknown>;
  access: ChunkRecord['access'];
}

export function chunkDetailsJson(chunk: ChunkRecord): string {
  const details: ChunkDetails = {
    sourceConnectionId: chunk.sourceConnectionId,
    entityId: chunk.entityId,
    chunkIndex: chunk.chunkIndex,
    entityType: chunk.entityType,
    sourceName: chunk.sourceName,
    breadcrumbs: chunk.breadcrumbs,
    createdAt: epochMillis(chunk.createdAt),
    updatedAt: epochMillis(chunk.updatedAt),
    webUrl: chunk.webUrl,
    url: chunk.url,
    syncId: chunk.syncId,
    syncJobId: chunk.syncJobId,
    rawSourceFields: chunk.rawSourceFields ?? {},
    access: chunk.access,
  };
  return JSON.stringify(details);
}

/** The chunk a row of the current layout stores: its name, text and details. */
export function chunkOfDetails(name: string, text: string, json: string): ScoredChunk['chunk'] {
  const details = JSON.parse(json) as ChunkDetails;
  return {
    chunkId: chunkIdOf(details.sourceConnectionId, details.entityId, details.chunkIndex),
    sourceConnectionId: details.sourceConnectionId,
    entityId: details.entityId,
    chunkIndex: details.chunkIndex,
    name,
    text,
    entityType: details.entityType,
    sourceName: details.sourceName,
    breadcrumbs: details.breadcrumbs,
    createdAt: dateOfEpochMillis(details.createdAt),
    updatedAt: dateOfEpochMillis(details.updatedAt),
    webUrl: details.webUrl,
    url: details.url,
    syncId: details.syncId,
    syncJobId: details.syncJobId,
    rawSourceFields: details.rawSourceFields,
    access: details.access,
  };
}

/** A date as the timestamp columns hold it: epoch milliseconds, null for none or an invalid date. */
export function epochMillis(date: Date | null): number | null {
  return date instanceof Date && Number.isFinite(date.getTime()) ? date.getTime() : null;
}

/** The date epoch milliseconds stand for (a timestamp column's value or a details field): null for none. */
export function dateOfEpochMillis(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(Number(value));
}
