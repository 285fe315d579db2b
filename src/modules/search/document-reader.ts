import type { Orm } from '../../platform/db/database.js';
import { NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { safeFileUrl, safeWebUrl } from '../../shared/web-url.js';
import type { Principal } from '../organizations/principal.js';
import { EntityNavigator, type EntitySummary } from './entity-navigator.js';
import type { Retrieval, StoredChunk } from './retrieval.js';

/** Chunks of one page of a document, and characters, when the caller does not say. */
export const READ_LIMITS = { chunks: { default: 50, max: 500 }, characters: { default: 50_000, max: 500_000 } } as const;
/** The largest chunk index an index stores (a 32-bit integer column): larger offsets are refused, not sent. */
export const MAX_CHUNK_OFFSET = 2 ** 31 - 1;
export const BROWSE_LIMIT = { default: 50, max: 500 } as const;

export interface ReadRequest {
  entityId: string;
  /** The first chunk of the page (chunk_index). */
  chunkOffset?: number | null;
  chunkLimit?: number | null;
  /** The page ends before the chunk that would pass this many characters (the first chunk always comes whole). */
  maxCharacters?: number | null;
}

/** A page of one document's chunks, in order, with what is known of the document. */
export interface DocumentPage {
  entityId: string;
  name: string;
  entityType: string;
  sourceName: string;
  sourceConnectionId: string;
  breadcrumbs: EntitySummary['breadcrumbs'];
  webUrl: string;
  url: string | null;
  createdAt: Date | null;
  updatedAt: Date | null;
  /** The source's own fields of the entity. */
  fields: Record<string, unknown>;
  /** http(s) links in the page's text, each once, in order of appearance. */
  links: string[];
  totalChunks: number;
  chunks: { chunkIndex: number; text: string }[];
  /** The chunk index to read next; null on the last page. */
  nextChunkOffset: number | null;
}

export type Relation = 'children' | 'parent' | 'siblings';

const LINK = /\bhttps?:\/\/[^\s<>()"'`\]]+[^\s<>()"'`\].,;:!?]/g;
const MAX_LINKS = 200;

/**
 * Reading whole documents and walking their hierarchy, for clients that act on search results (the
 * MCP tools): a document is its chunks as stored, in chunk order (they overlap slightly, and a chunk
 * inside a section begins with its heading path, as search shows them); the hierarchy is the
 * breadcrumbs the sync recorded. Scoped like search: the caller's organization, the collection's
 * live connections.
 */
export class DocumentReader {
  private readonly navigator: EntityNavigator;

  constructor(
    orm: Orm,
    private readonly retrieval: Retrieval,
  ) {
    this.navigator = new EntityNavigator(orm);
  }

  async read(principal: Principal, readableId: string, request: ReadRequest): Promise<DocumentPage> {
    const issues: ValidationIssue[] = [];
    const offset = bounded(request.chunkOffset, 0, 0, MAX_CHUNK_OFFSET, 'chunk_offset', issues);
    const limit = bounded(request.chunkLimit, READ_LIMITS.chunks.default, 1, READ_LIMITS.chunks.max, 'chunk_limit', issues);
    const maxCharacters = bounded(request.maxCharacters, READ_LIMITS.characters.default, 1, READ_LIMITS.characters.max, 'max_characters', issues);
    if (request.entityId === '') issues.push({ loc: ['entity_id'], msg: 'String should not be empty', type: 'string_too_short' });
    if (issues.length) throw new ValidationError(issues);

    const scope = await this.retrieval.scope(principal, readableId);
    const ofEntity = [{ conditions: [{ field: 'entity_id' as const, operator: 'equals' as const, value: request.entityId }] }];
    const [first] = await this.retrieval.list(scope, ofEntity, 1);
    if (!first) throw new NotFoundError(`Document "${request.entityId}" not found in collection "${readableId}"`);
    // One entity id may exist in two connections of a collection: the first connection's is read.
    const ofDocument = [{ conditions: [...ofEntity[0]!.conditions, { field: 'service_system_metadata.sync_id' as const, operator: 'equals' as const, value: first.syncId }] }];
    // The page's chunk indexes as a range: an index lists rows in its storage order (not chunk order)
    // before the limit applies, so `>= offset` with a limit alone could skip chunks.
    const ofPage = [
      ...ofDocument[0]!.conditions,
      { field: 'service_system_metadata.chunk_index' as const, operator: 'greater_than_or_equal' as const, value: offset },
      { field: 'service_system_metadata.chunk_index' as const, operator: 'less_than' as const, value: Math.min(offset + limit, MAX_CHUNK_OFFSET) },
    ];
    const [totalChunks, listed] = await Promise.all([this.retrieval.count(scope, ofDocument), this.retrieval.list(scope, [{ conditions: ofPage }], limit)]);
    const chunks = withinCharacters(listed.sort((a, b) => a.chunkIndex - b.chunkIndex), maxCharacters);
    const last = chunks.at(-1);
    // Chunk indexes run from 0 to totalChunks - 1.
    const nextChunkOffset = last && last.chunkIndex + 1 < totalChunks ? last.chunkIndex + 1 : null;
    return {
      entityId: first.entityId,
      name: first.name,
      entityType: first.entityType,
      sourceName: first.sourceName,
      sourceConnectionId: first.sourceConnectionId,
      breadcrumbs: first.breadcrumbs.map((b) => ({ entityId: b.entity_id, name: b.name, entityType: b.entity_type })),
      webUrl: safeWebUrl(first.webUrl),
      url: safeFileUrl(first.url),
      createdAt: first.createdAt,
      updatedAt: first.updatedAt,
      fields: first.rawSourceFields,
      links: [...new Set(chunks.flatMap((chunk) => chunk.text.match(LINK) ?? []))].slice(0, MAX_LINKS),
      totalChunks,
      chunks: chunks.map((chunk) => ({ chunkIndex: chunk.chunkIndex, text: chunk.text })),
      nextChunkOffset,
    };
  }

  /**
   * The entity and its children, its parent (at most one; known only by its breadcrumb when the
   * source did not sync it) or its siblings (same parent; root entities are siblings of each other).
   */
  async browse(principal: Principal, readableId: string, entityId: string, relation: Relation, limit?: number | null): Promise<{ entity: EntitySummary; related: EntitySummary[] }> {
    const issues: ValidationIssue[] = [];
    const size = bounded(limit, BROWSE_LIMIT.default, 1, BROWSE_LIMIT.max, 'limit', issues);
    if (issues.length) throw new ValidationError(issues);
    const scope = await this.retrieval.scope(principal, readableId);
    const connections = scope.indexedConnectionIds;
    const [entity] = await this.navigator.get(connections, [entityId]);
    if (!entity) throw new NotFoundError(`Entity "${entityId}" not found in collection "${readableId}"`);
    switch (relation) {
      case 'children':
        return { entity, related: await this.navigator.children([entity.sourceConnectionId], entityId, size) };
      case 'siblings':
        return { entity, related: (await this.navigator.siblings([entity.sourceConnectionId], entityId, size)) ?? [] };
      case 'parent': {
        const { parent } = await this.navigator.parent([entity.sourceConnectionId], entityId);
        return { entity, related: parent ? [parent] : [] };
      }
    }
  }
}

function bounded(value: number | null | undefined, fallback: number, min: number, max: number, field: string, issues: ValidationIssue[]): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) issues.push({ loc: [field], msg: `Input should be an integer between ${min} and ${max}`, type: 'range' });
  return value;
}

/** Chunks in order until the next would pass `maxCharacters`; the first always comes, so a page is never empty. */
function withinCharacters(chunks: StoredChunk[], maxCharacters: number): StoredChunk[] {
  const page: StoredChunk[] = [];
  let used = 0;
  for (const chunk of chunks) {
    used += chunk.text.length;
    if (page.length > 0 && used > maxCharacters) break;
    page.push(chunk);
  }
  return page;
}
