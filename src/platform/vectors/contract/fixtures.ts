import { chunkIdOf, type ChunkRecord } from '../vector-index.js';

/** Deterministic pseudo-random unit vectors: distinct directions for distinct seeds. */
export function seededVector(dimensions: number, seed: number): Float32Array {
  let state = (seed * 0x9e3779b1 + 0x7f4a7c15) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  const vector = Float32Array.from({ length: dimensions }, next);
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
}

/** A complete chunk record; `chunkId` is `chunkIdOf(connection, entity, index)` unless overridden. */
export function makeChunk(dimensions: number, seed: number, overrides: Partial<ChunkRecord> = {}): ChunkRecord {
  const sourceConnectionId = overrides.sourceConnectionId ?? 'conn-1';
  const entityId = overrides.entityId ?? `entity-${seed}`;
  const chunkIndex = overrides.chunkIndex ?? 0;
  return {
    chunkId: chunkIdOf(sourceConnectionId, entityId, chunkIndex),
    sourceConnectionId,
    entityId,
    chunkIndex,
    name: `Document ${seed}`,
    text: `ordinary filler text number ${seed}`,
    vector: seededVector(dimensions, seed),
    entityType: 'Page',
    sourceName: 'stub',
    breadcrumbs: [],
    createdAt: new Date('2024-01-01T00:00:00.000Z'),
    updatedAt: null,
    webUrl: `https://example.test/${seed}`,
    url: null,
    syncId: 'sync-1',
    syncJobId: 'job-1',
    rawSourceFields: {},
    access: { viewers: null, isPublic: null },
    ...overrides,
  };
}
