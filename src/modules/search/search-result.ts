import type { SourceEntity } from '../../connectors/connector.js';
import type { ScoredChunk } from '../../platform/vectors/vector-index.js';
import { safeFileUrl, safeWebUrl } from '../../shared/web-url.js';

export type RetrievalStrategy = 'semantic' | 'keyword' | 'hybrid';

/** The spec's SearchResult, in camelCase (the REST facade writes it in snake_case). */
export interface SearchResultView {
  entityId: string;
  name: string;
  relevanceScore: number;
  breadcrumbs: { entityId: string; name: string; entityType: string }[];
  createdAt: Date | null;
  updatedAt: Date | null;
  textualRepresentation: string;
  serviceSystemMetadata: { sourceName: string; entityType: string; chunkIndex: number; originalEntityId: string; syncId: string | null; syncJobId: string | null };
  access: { viewers: string[] | null; isPublic: boolean | null };
  webUrl: string;
  url: string | null;
  rawSourceFields: Record<string, unknown>;
}

export function fromChunk({ chunk, score }: ScoredChunk): SearchResultView {
  return {
    entityId: chunk.entityId,
    name: chunk.name,
    relevanceScore: score,
    breadcrumbs: chunk.breadcrumbs.map((b) => ({ entityId: b.entity_id, name: b.name, entityType: b.entity_type })),
    createdAt: chunk.createdAt,
    updatedAt: chunk.updatedAt,
    textualRepresentation: chunk.text,
    serviceSystemMetadata: {
      sourceName: chunk.sourceName,
      entityType: chunk.entityType,
      chunkIndex: chunk.chunkIndex,
      originalEntityId: chunk.entityId,
      syncId: chunk.syncId,
      syncJobId: chunk.syncJobId,
    },
    access: chunk.access,
    webUrl: safeWebUrl(chunk.webUrl),
    url: safeFileUrl(chunk.url),
    rawSourceFields: chunk.rawSourceFields,
  };
}

/** A federated source's hit: not synced, so no sync ids (the spec says null) and one "chunk". */
export function fromSourceEntity(entity: SourceEntity, sourceName: string, score: number): SearchResultView {
  return {
    entityId: entity.entityId,
    name: entity.name,
    relevanceScore: score,
    breadcrumbs: entity.breadcrumbs.map((b) => ({ entityId: b.entityId, name: b.name, entityType: b.entityType })),
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
    textualRepresentation: entity.text,
    serviceSystemMetadata: { sourceName, entityType: entity.entityType, chunkIndex: 0, originalEntityId: entity.entityId, syncId: null, syncJobId: null },
    access: entity.access ?? { viewers: null, isPublic: null },
    webUrl: safeWebUrl(entity.webUrl),
    url: null,
    rawSourceFields: entity.fields,
  };
}

/**
 * Identity of a document across lists: its connection (or source, for federated results) and entity
 * id. Search results are documents: each appears at most once in a response.
 */
export const documentKey = (result: SearchResultView) => `${result.serviceSystemMetadata.syncId ?? result.serviceSystemMetadata.sourceName}\u0000${result.entityId}`;

/** The first result of each document, in order (for lists that may repeat one, e.g. what an agent saw). */
export function distinctDocuments(results: SearchResultView[]): SearchResultView[] {
  const seen = new Set<string>();
  return results.filter((result) => {
    const key = documentKey(result);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** RRF's k: 60, as in Cormack et al., damps the head so no single list dominates. */
const RRF_K = 60;

/**
 * Reciprocal rank fusion of document lists: each document scores Σ weight / (k + rank) over the lists
 * it appears in, shown by its result in the first list that has it. Rank-based, so lists whose scores
 * are not comparable (the index's, a source's own ts_rank) merge fairly. Ties keep the first list's order.
 */
export function reciprocalRankFusion(lists: { results: SearchResultView[]; weight?: number }[]): SearchResultView[] {
  const fused = new Map<string, { result: SearchResultView; score: number; order: number }>();
  let order = 0;
  for (const { results, weight = 1 } of lists) {
    results.forEach((result, rank) => {
      const key = documentKey(result);
      const entry = fused.get(key) ?? { result, score: 0, order: order++ };
      entry.score += weight / (RRF_K + rank + 1);
      fused.set(key, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.order - b.order).map(({ result, score }) => ({ ...result, relevanceScore: score }));
}
