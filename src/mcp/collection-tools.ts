import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { GraphQLContext } from '../graphql/context.js';
import { checkAccess, type GuardRule } from '../graphql/guard.js';
import { renameKeys, snakeCase } from '../shared/case.js';
import { NotFoundError } from '../shared/errors.js';
import { isStorableText } from '../shared/well-formed-text.js';
import { ToolGroup, toolResult } from './tool-kit.js';

const JOB_FIELDS = `
  fragment McpJobFields on SyncJob {
    id status trigger forceFullSync createdAt startedAt completedAt durationSeconds
    entitiesInserted entitiesUpdated entitiesDeleted entitiesSkipped entitiesFailed chunksWritten error
  }`;

const CONNECTION_FIELDS = `
  fragment McpConnectionFields on SourceConnection {
    id name shortName readableCollectionId status entityCount federatedSearch errorMessage
    schedule { cron nextRun continuous }
    sync { totalRuns successfulRuns failedRuns lastJob { ...McpJobFields } }
  }
  ${JOB_FIELDS}`;

/** The source's own fields keep their keys. */
const OPAQUE = new Set(['fields', 'errorDetails']);
const toSnake = <T>(value: unknown) => renameKeys(value, snakeCase, OPAQUE) as T;

type Job = Record<string, unknown> & { completed_at: string | null; status: string };
type Connection = { id: string; name: string; short_name: string; readable_collection_id: string; status: string; entity_count: number; sync: { last_job: Job | null } };
type Collection = { readable_id: string; name: string; status: string; created_at: string; modified_at: string };
type CollectionSummary = Collection & {
  sources: { source_connection_id: string; name: string; short_name: string; status: string; entity_count: number }[];
  entity_count: number;
  last_sync: { status: string; completed_at: string | null } | null;
};

/**
 * Members may start syncs over REST and GraphQL; through MCP it takes an admin: an agent loop on a
 * member's token should not be able to keep sources busy. (The mutation's own guard then draws on
 * the source_connections budget, once.)
 */
const AGENT_SYNC_ACCESS: GuardRule = { role: 'admin' };

const GRAPHQL_STATUS: Record<string, string> = { NEEDS_SOURCE: 'NEEDS SOURCE' };

/** Collections and their source connections: what there is to search, how fresh it is, and syncing it. */
export class CollectionTools extends ToolGroup {
  register(): void {
    const summaries = this.collectionSummaries();
    this.listCollections(summaries);
    this.collectionResources(summaries);
    this.listSourceConnections();
    this.runSync();
    this.addDocument();
  }

  /** Collections with their sources, entity counts and last sync: list_collections and the collection resources. */
  private collectionSummaries(): (context: GraphQLContext, page: { limit: number; search: string | null }) => Promise<CollectionSummary[]> {
    const document = this.compile(
      'list_collections',
      `query ($limit: Int!, $search: String) {
        collections(skip: 0, limit: $limit, search: $search) { readableId name status createdAt modifiedAt }
        sourceConnections(skip: 0, limit: 1000) { ...McpConnectionFields }
      } ${CONNECTION_FIELDS}`,
    );
    return async (context, page) => {
      const data = toSnake<{ collections: Collection[]; source_connections: Connection[] }>(await this.run(document, page, context));
      return data.collections.map((collection) => {
        const connections = data.source_connections.filter((c) => c.readable_collection_id === collection.readable_id);
        const lastSync = connections
          .map((c) => c.sync.last_job)
          .filter((job): job is Job => job !== null)
          .sort((a, b) => String(b.completed_at ?? '').localeCompare(String(a.completed_at ?? '')))[0];
        return {
          ...collection,
          status: GRAPHQL_STATUS[collection.status] ?? collection.status,
          sources: connections.map((c) => ({ source_connection_id: c.id, name: c.name, short_name: c.short_name, status: c.status, entity_count: c.entity_count })),
          entity_count: connections.reduce((sum, c) => sum + c.entity_count, 0),
          last_sync: lastSync ? { status: lastSync.status, completed_at: lastSync.completed_at } : null,
        };
      });
    };
  }

  private listCollections(summaries: ReturnType<CollectionTools['collectionSummaries']>): void {
    this.tool(
      'list_collections',
      {
        title: 'List collections',
        description:
          'Lists the collections this organization can search, newest first: readable_id (what every other tool takes as `collection`), name, status (ACTIVE, NEEDS SOURCE, ERROR), its sources, entity count and last sync. Call this first to learn which collection to search.',
        inputSchema: {
          search: z.string().min(1).max(200).optional().describe('Only collections whose name or readable id contains this text (case-insensitive).'),
          limit: z.number().int().min(1).max(1000).default(100).describe('Most collections to list (1 to 1000).'),
        },
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      },
      async ({ search, limit }, context) => {
        const collections = await summaries(context, { limit, search: search ?? null });
        return toolResult({ collections }, `${collections.length} collection(s).`);
      },
    );
  }

  /**
   * One resource per collection (`catchment://collections/{readable_id}`, JSON: what list_collections
   * says of it), for clients that let a user attach a collection's description to a conversation.
   */
  private collectionResources(summaries: ReturnType<CollectionTools['collectionSummaries']>): void {
    const uriOf = (readableId: string) => `catchment://collections/${encodeURIComponent(readableId)}`;
    const describeCollection = (c: CollectionSummary) =>
      `${c.status}; ${c.entity_count} entities from ${c.sources.map((s) => `${s.name} (${s.short_name})`).join(', ') || 'no source yet'}; last sync ${c.last_sync ? `${c.last_sync.status} ${c.last_sync.completed_at ?? ''}`.trim() : 'never'}`;
    const template = new ResourceTemplate('catchment://collections/{readable_id}', {
      list: (extra) =>
        this.resource(extra, async (context) => ({
          resources: (await summaries(context, { limit: 1000, search: null })).map((c) => ({ uri: uriOf(c.readable_id), name: c.readable_id, title: c.name, description: describeCollection(c), mimeType: 'application/json' })),
        })),
    });
    this.server.registerResource('collection', template, { title: 'Collection', description: 'A collection: status, sources, entity count and last sync.', mimeType: 'application/json' }, (uri, variables, extra) =>
      this.resource(extra, async (context) => {
        const readableId = decodeURIComponent(String(variables.readable_id));
        // A `%00` in the URI decodes to text no collection id can hold (and PostgreSQL refuses).
        if (!isStorableText(readableId)) throw NotFoundError.of('Collection', readableId);
        const found = (await summaries(context, { limit: 1000, search: readableId })).find((c) => c.readable_id === readableId);
        if (!found) throw NotFoundError.of('Collection', readableId);
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ ...found, description: describeCollection(found) }, null, 2) }] };
      }),
    );
  }

  private listSourceConnections(): void {
    const connectionsOf = this.compile(
      'list_source_connections',
      `query ($collection: String!, $limit: Int!) {
        collection(readableId: $collection) { readableId }
        sourceConnections(collection: $collection, skip: 0, limit: $limit) { ...McpConnectionFields }
      } ${CONNECTION_FIELDS}`,
    );
    const jobsOf = this.compile('list_source_connections', `query ($id: ID!, $limit: Int!) { syncJobs(sourceConnectionId: $id, limit: $limit) { ...McpJobFields } } ${JOB_FIELDS}`);
    this.tool(
      'list_source_connections',
      {
        title: 'List source connections',
        description:
          "Lists a collection's source connections (where its data comes from) with their status, entity count, schedule, sync totals and latest sync jobs (newest first: status, trigger, timings, entity counts, error). Use it to tell whether data is fresh or a sync failed; run_sync takes a source_connection_id from here.",
        inputSchema: {
          collection: z.string().min(1).describe('Readable id of the collection (from list_collections).'),
          jobs_per_connection: z.number().int().min(0).max(20).default(3).describe('Latest sync jobs to include per connection (0 to 20).'),
        },
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      },
      async ({ collection, jobs_per_connection }, context) => {
        const data = toSnake<{ collection: unknown; source_connections: Connection[] }>(await this.run(connectionsOf, { collection, limit: 1000 }, context));
        if (data.collection === null) throw NotFoundError.of('Collection', collection);
        const connections = await Promise.all(
          data.source_connections.map(async (connection) => ({
            ...connection,
            latest_jobs: jobs_per_connection === 0 ? [] : toSnake<{ sync_jobs: Job[] }>(await this.run(jobsOf, { id: connection.id, limit: jobs_per_connection }, context)).sync_jobs,
          })),
        );
        return toolResult({ collection, source_connections: connections }, `${connections.length} source connection(s) in "${collection}".`);
      },
    );
  }

  private runSync(): void {
    const document = this.compile('run_sync', `mutation ($id: ID!, $force: Boolean!) { runSync(sourceConnectionId: $id, forceFullSync: $force) { ...McpJobFields } } ${JOB_FIELDS}`);
    this.tool(
      'run_sync',
      {
        title: 'Start a sync',
        description:
          'Starts a sync of one source connection now (admin role needed) and returns its job, usually PENDING; follow it with list_source_connections. Refused with a conflict while that connection already has a sync running. Nothing is deleted that the source still has.',
        inputSchema: {
          source_connection_id: z.string().min(1).describe('Id of the source connection (from list_source_connections).'),
          force_full_sync: z.boolean().default(false).describe('Re-read everything instead of continuing from the last cursor.'),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      },
      async ({ source_connection_id, force_full_sync }, context) => {
        await checkAccess(context, AGENT_SYNC_ACCESS);
        const job = toSnake<{ run_sync: Job }>(await this.run(document, { id: source_connection_id, force: force_full_sync }, context)).run_sync;
        return toolResult({ job }, `Sync job ${String(job.id)} is ${job.status}.`);
      },
    );
  }

  private addDocument(): void {
    const document = this.compile(
      'add_document',
      `mutation ($id: ID!, $entities: [PushEntityInput!]) {
        pushEntities(sourceConnectionId: $id, entities: $entities) { id entityCount createdAt job { ...McpJobFields } }
      } ${JOB_FIELDS}`,
    );
    this.tool(
      'add_document',
      {
        title: 'Add a document',
        description:
          'Writes a note or document into a collection through one of its push connections (short_name "push" in list_source_connections; member role needed). Sending the same id again replaces that document. It becomes searchable once its sync job completes, usually within seconds.',
        inputSchema: {
          source_connection_id: z.string().min(1).describe('Id of a push source connection.'),
          id: z.string().min(1).max(512).describe('Your stable id for the document; the same id replaces it.'),
          name: z.string().min(1).max(1024).optional().describe('Title; defaults to the id.'),
          text: z.string().min(1).describe('The document text (Markdown headings are kept as structure).'),
          entity_type: z.string().min(1).max(128).optional().describe('Kind of document, filterable as service_system_metadata.entity_type (default push_entity).'),
          web_url: z.string().url().optional().describe('Absolute http(s) link to the document in its own application.'),
          parent: z
            .array(z.object({ entity_id: z.string().min(1), name: z.string().min(1), entity_type: z.string().min(1) }))
            .max(64)
            .optional()
            .describe('Ancestors from the root down, for browse and breadcrumbs.'),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      },
      async (args, context) => {
        const entity = {
          id: args.id,
          name: args.name ?? null,
          text: args.text,
          entityType: args.entity_type ?? null,
          webUrl: args.web_url ?? null,
          breadcrumbs: args.parent?.map((crumb) => ({ entityId: crumb.entity_id, name: crumb.name, entityType: crumb.entity_type })) ?? null,
        };
        const batch = toSnake<{ push_entities: { id: string; job: Job | null } }>(await this.run(document, { id: args.source_connection_id, entities: [entity] }, context)).push_entities;
        return toolResult({ batch }, `Document "${args.id}" accepted; its sync job is ${batch.job?.status ?? 'not started'}.`);
      },
    );
  }
}
