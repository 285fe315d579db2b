import { z } from 'zod';
import { checkAccess, type GuardRule } from '../graphql/guard.js';
import { BROWSE_LIMIT, MAX_CHUNK_OFFSET, READ_LIMITS } from '../modules/search/document-reader.js';
import type { EntitySummary } from '../modules/search/entity-navigator.js';
import { ToolGroup, toolResult } from './tool-kit.js';

/**
 * Reading a collection's documents draws on the collections budget, as GET /collections/… paths do
 * (search has its own, smaller one); any member may read what they may search.
 */
const READ_ACCESS: GuardRule = { role: 'member', family: 'collections' };

const summary = (entity: EntitySummary) => ({
  entity_id: entity.entityId,
  name: entity.name,
  entity_type: entity.entityType,
  breadcrumbs: entity.breadcrumbs.map((b) => ({ entity_id: b.entityId, name: b.name, entity_type: b.entityType })),
});

/** Whole documents and the hierarchy around them, for agents acting on search results. */
export class DocumentTools extends ToolGroup {
  register(): void {
    this.tool(
      'read_document',
      {
        title: 'Read a document',
        description:
          'Returns a whole document of a collection by its entity_id (from search or browse): its text in order, chunk by chunk, with name, type, breadcrumbs, web_url, the source\'s fields and the links in its text. Long documents come in pages: pass next_chunk_offset back as chunk_offset until it is null. Consecutive chunks overlap by a few words, and a chunk inside a section starts with its heading path (A › B).',
        inputSchema: {
          collection: z.string().min(1).describe('Readable id of the collection.'),
          entity_id: z.string().min(1).describe('entity_id of the document, as search results show it.'),
          chunk_offset: z.number().int().min(0).max(MAX_CHUNK_OFFSET).optional().describe('First chunk to return (default 0).'),
          chunk_limit: z.number().int().min(1).max(READ_LIMITS.chunks.max).optional().describe(`Most chunks to return (default ${READ_LIMITS.chunks.default}).`),
          max_characters: z
            .number()
            .int()
            .min(1)
            .max(READ_LIMITS.characters.max)
            .optional()
            .describe(`The page stops before the chunk that would pass this many characters (default ${READ_LIMITS.characters.default}); the first chunk always comes.`),
        },
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      },
      async (args, context) => {
        const principal = await checkAccess(context, READ_ACCESS);
        const page = await this.deps.services.documents.read(principal, args.collection, {
          entityId: args.entity_id,
          chunkOffset: args.chunk_offset,
          chunkLimit: args.chunk_limit,
          maxCharacters: args.max_characters,
        });
        // The text content holds the chunks joined; the structured content keeps them apart (with their indexes) only.
        const text = page.chunks.map((chunk) => chunk.text).join('\n\n');
        const structured = {
          entity_id: page.entityId,
          name: page.name,
          entity_type: page.entityType,
          source_name: page.sourceName,
          source_connection_id: page.sourceConnectionId,
          breadcrumbs: page.breadcrumbs.map((b) => ({ entity_id: b.entityId, name: b.name, entity_type: b.entityType })),
          web_url: page.webUrl,
          url: page.url,
          created_at: page.createdAt?.toISOString() ?? null,
          updated_at: page.updatedAt?.toISOString() ?? null,
          fields: page.fields,
          links: page.links,
          total_chunks: page.totalChunks,
          chunks: page.chunks.map((chunk) => ({ chunk_index: chunk.chunkIndex, text: chunk.text })),
          next_chunk_offset: page.nextChunkOffset,
        };
        const first = page.chunks[0]?.chunkIndex;
        const header = [
          `# ${page.name}`,
          `entity_id ${page.entityId} · ${page.entityType} · ${page.sourceName}${page.webUrl ? ` · ${page.webUrl}` : ''}`,
          page.breadcrumbs.length ? `in ${page.breadcrumbs.map((b) => b.name).join(' / ')}` : null,
          first === undefined ? `No chunks from ${args.chunk_offset ?? 0} (the document has ${page.totalChunks}).` : `Chunks ${first}–${page.chunks.at(-1)!.chunkIndex} of ${page.totalChunks}${page.nextChunkOffset === null ? ' (end)' : `; continue with chunk_offset ${page.nextChunkOffset}`}.`,
        ].filter((line) => line !== null);
        return { content: [{ type: 'text', text: `${header.join('\n')}\n\n${text}` }], structuredContent: structured };
      },
    );

    this.tool(
      'browse',
      {
        title: 'Browse the hierarchy',
        description:
          'Walks the source hierarchy around an entity (folders and files, spaces and pages, tables and rows…): its children, its parent, or its siblings (same parent). Each entry has an entity_id for read_document or another browse.',
        inputSchema: {
          collection: z.string().min(1).describe('Readable id of the collection.'),
          entity_id: z.string().min(1).describe('The entity to start from (from search results, breadcrumbs or an earlier browse).'),
          relation: z.enum(['children', 'parent', 'siblings']).default('children'),
          limit: z.number().int().min(1).max(BROWSE_LIMIT.max).optional().describe(`Most entities to return (default ${BROWSE_LIMIT.default}), by name.`),
        },
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      },
      async (args, context) => {
        const principal = await checkAccess(context, READ_ACCESS);
        const { entity, related } = await this.deps.services.documents.browse(principal, args.collection, args.entity_id, args.relation, args.limit);
        const lines = related.map((e) => `- ${e.name} (entity_id ${e.entityId}, ${e.entityType})`);
        return toolResult(
          { entity: summary(entity), relation: args.relation, entities: related.map(summary) },
          `${args.relation} of ${entity.name}: ${related.length ? `\n${lines.join('\n')}` : 'none'}`,
        );
      },
    );
  }
}
