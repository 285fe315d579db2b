import { generateUuid5 } from 'weaviate-client';
import type { ChunkRecord, ScoredChunk } from '../vector-index.js';
import { type ChunkProperties, VECTOR_NAME } from './schema.js';

/** A chunk as stored: the properties and the deterministic object id (UUIDv5 of the chunk id). */
export function toObject(chunk: ChunkRecord): { id: string; properties: ChunkProperties; vectors: Record<string, number[]> } {
  const properties: ChunkProperties = {
    chunk_id: chunk.chunkId,
    source_connection_id: chunk.sourceConnectionId,
    entity_id: chunk.entityId,
    chunk_index: chunk.chunkIndex,
    name: chunk.name,
    name_words: chunk.name,
    text: chunk.text,
    entity_type: chunk.entityType,
    source_name: chunk.sourceName,
    breadcrumbs: JSON.stringify(chunk.breadcrumbs),
    breadcrumb_entity_ids: chunk.breadcrumbs.map((b) => b.entity_id),
    breadcrumb_names: chunk.breadcrumbs.map((b) => b.name),
    breadcrumb_entity_types: chunk.breadcrumbs.map((b) => b.entity_type),
    web_url: chunk.webUrl,
    sync_id: chunk.syncId,
    sync_job_id: chunk.syncJobId,
    raw_source_fields: JSON.stringify(chunk.rawSourceFields ?? {}),
    access: JSON.stringify(chunk.access),
  };
  // Absent, not null: Weaviate has no null values, and NotEqual (the complement of Equal) still matches absent dates.
  if (isValidDate(chunk.createdAt)) properties.created_at = chunk.createdAt;
  if (isValidDate(chunk.updatedAt)) properties.updated_at = chunk.updatedAt;
  if (chunk.url !== null) properties.url = chunk.url;
  return { id: generateUuid5(chunk.chunkId), properties, vectors: { [VECTOR_NAME]: Array.from(chunk.vector) } };
}

/** A stored object's properties back as a chunk (without its vector). */
export function toChunk(properties: Partial<Record<string, unknown>>): ScoredChunk['chunk'] {
  const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));
  const date = (value: unknown) => (value instanceof Date ? value : value === undefined || value === null ? null : new Date(String(value)));
  return {
    chunkId: text(properties.chunk_id),
    sourceConnectionId: text(properties.source_connection_id),
    entityId: text(properties.entity_id),
    chunkIndex: Number(properties.chunk_index),
    name: text(properties.name),
    text: text(properties.text),
    entityType: text(properties.entity_type),
    sourceName: text(properties.source_name),
    breadcrumbs: JSON.parse(text(properties.breadcrumbs) || '[]') as ScoredChunk['chunk']['breadcrumbs'],
    createdAt: date(properties.created_at),
    updatedAt: date(properties.updated_at),
    webUrl: text(properties.web_url),
    url: properties.url === undefined || properties.url === null ? null : String(properties.url),
    syncId: text(properties.sync_id),
    syncJobId: text(properties.sync_job_id),
    rawSourceFields: JSON.parse(text(properties.raw_source_fields) || '{}') as Record<string, unknown>,
    access: JSON.parse(text(properties.access) || '{"viewers":null,"isPublic":null}') as ScoredChunk['chunk']['access'],
  };
}

function isValidDate(value: Date | null): value is Date {
  return value instanceof Date && Number.isFinite(value.getTime());
}
