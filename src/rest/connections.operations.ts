import type { ParsedRequest as Request } from 'openapi-backend';
import { camelCase, renameKeys, snakeCase } from '../shared/case.js';
import type { RestOperation } from './operation.js';

const JOB_FIELDS = `
  fragment JobFields on SyncJob {
    id sourceConnectionId status trigger forceFullSync createdAt startedAt completedAt durationSeconds
    entitiesInserted entitiesUpdated entitiesDeleted entitiesSkipped entitiesFailed chunksWritten entitiesTotal error errorDetails
  }`;

const SYNC_CONFIG = `
  destinations { skipVectorDb targetDestinations excludeDestinations }
  handlers { enableVectorHandlers enableRawDataHandler enableEntityDbHandler }
  cursor { skipLoad skipUpdates }
  behavior { skipHashComparison replayFromArf skipGuardrails }`;

const CONNECTION_FIELDS = `
  fragment ConnectionFields on SourceConnection {
    id organizationId name description shortName readableCollectionId status createdAt modifiedAt isAuthenticated authMethod
    auth { method authenticated authenticatedAt expiresAt authUrl authUrlExpires redirectUrl providerReadableId }
    config
    schedule { cron nextRun continuous cursorValue }
    sync { totalRuns successfulRuns failedRuns lastJob { ...JobFields } }
    syncId syncConfig { ${SYNC_CONFIG} }
    entities { totalEntities byType { entityType count lastUpdated } }
    entityCount errorMessage federatedSearch
  }
  ${JOB_FIELDS}`;

/** User-defined maps keep their keys both ways. */
const OPAQUE = new Set(['config', 'credentials', 'provider_config', 'providerConfig', 'error_details', 'errorDetails']);

const toRest = (value: unknown) => renameKeys(value, snakeCase, OPAQUE) as Record<string, any>;

function connectionToRest(connection: unknown): Record<string, unknown> {
  const rest = toRest(connection);
  // The record shows entity counts by type as a map, as clients of this interface expect.
  rest.entities = {
    total_entities: rest.entities.total_entities,
    by_type: Object.fromEntries(rest.entities.by_type.map((t: { entity_type: string; count: number; last_updated: string | null }) => [t.entity_type, { count: t.count, last_updated: t.last_updated }])),
  };
  return rest;
}

function listItem(connection: unknown) {
  const full = toRest(connection);
  return {
    id: full.id,
    name: full.name,
    short_name: full.short_name,
    readable_collection_id: full.readable_collection_id,
    created_at: full.created_at,
    modified_at: full.modified_at,
    is_authenticated: full.is_authenticated,
    auth_method: full.auth_method,
    status: full.status,
    entity_count: full.entity_count,
    federated_search: full.federated_search,
  };
}

const PUSH_BATCH_FIELDS = `
  fragment PushBatchFields on PushBatch {
    id sourceConnectionId entityCount deletionCount createdAt job { ...JobFields }
  }
  ${JOB_FIELDS}`;

/** A pushed entity of the REST body (snake_case; `fields` kept as sent) as GraphQL's PushEntityInput. */
function pushEntityInput(entity: Record<string, any>) {
  return {
    id: entity.id,
    name: entity.name,
    text: entity.text,
    entityType: entity.entity_type,
    breadcrumbs: entity.breadcrumbs?.map((crumb: Record<string, unknown>) => ({ entityId: crumb.entity_id, name: crumb.name, entityType: crumb.entity_type })),
    fields: entity.fields,
    webUrl: entity.web_url,
    createdAt: entity.created_at,
    updatedAt: entity.updated_at,
  };
}

const connectionId = (request: Request) => String((request.params as Record<string, string>).source_connection_id);
const jobId = (request: Request) => String((request.params as Record<string, string>).job_id);
const query = (request: Request) => request.query as Record<string, string | undefined>;
const body = (request: Request) => renameKeys(request.requestBody ?? {}, camelCase, OPAQUE);

export const connectionOperations: Record<string, RestOperation> = {
  listSourceConnections: {
    document: `query ($collection: String, $skip: Int!, $limit: Int!) { sourceConnections(collection: $collection, skip: $skip, limit: $limit) { ...ConnectionFields } } ${CONNECTION_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => ({
      collection: query(request).collection ?? null,
      skip: Number(query(request).skip ?? 0),
      limit: Number(query(request).limit ?? 100),
    }),
    respond: (data) => (data.sourceConnections as unknown[]).map(listItem),
  },
  createSourceConnection: {
    document: `mutation ($input: SourceConnectionCreateInput!) { createSourceConnection(input: $input) { ...ConnectionFields } } ${CONNECTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ input: body(request) }),
    respond: (data) => connectionToRest(data.createSourceConnection),
  },
  getSourceConnection: {
    document: `query ($id: ID!) { sourceConnection(id: $id) { ...ConnectionFields } } ${CONNECTION_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ id: connectionId(request) }),
    respond: (data) => (data.sourceConnection === null ? undefined : connectionToRest(data.sourceConnection)),
    notFound: (request) => `Source connection "${connectionId(request)}" not found`,
  },
  updateSourceConnection: {
    document: `mutation ($id: ID!, $input: SourceConnectionUpdateInput!) { updateSourceConnection(id: $id, input: $input) { ...ConnectionFields } } ${CONNECTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ id: connectionId(request), input: body(request) }),
    respond: (data) => connectionToRest(data.updateSourceConnection),
  },
  deleteSourceConnection: {
    document: `mutation ($id: ID!) { deleteSourceConnection(id: $id) { ...ConnectionFields } } ${CONNECTION_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ id: connectionId(request) }),
    respond: (data) => connectionToRest(data.deleteSourceConnection),
  },
  authorizeSourceConnection: {
    document: `mutation ($id: ID!, $input: SourceConnectionAuthorizeInput) { authorizeSourceConnection(id: $id, input: $input) { ...ConnectionFields } } ${CONNECTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ id: connectionId(request), input: body(request) }),
    respond: (data) => connectionToRest(data.authorizeSourceConnection),
  },
  listSourceConnectionJobs: {
    document: `query ($id: ID!, $limit: Int!) { syncJobs(sourceConnectionId: $id, limit: $limit) { ...JobFields } } ${JOB_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => ({ id: connectionId(request), limit: Number(query(request).limit ?? 100) }),
    respond: (data) => (data.syncJobs as unknown[]).map(toRest),
  },
  runSourceConnection: {
    document: `mutation ($id: ID!, $force: Boolean!, $syncConfig: SyncConfigInput) { runSync(sourceConnectionId: $id, forceFullSync: $force, syncConfig: $syncConfig) { ...JobFields } } ${JOB_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({
      id: connectionId(request),
      force: String(query(request).force_full_sync) === 'true',
      syncConfig: (body(request) as { syncConfig?: unknown }).syncConfig ?? null,
    }),
    respond: (data) => toRest(data.runSync),
  },
  pushSourceConnectionEntities: {
    document: `mutation ($id: ID!, $entities: [PushEntityInput!], $deletions: [String!]) {
      pushEntities(sourceConnectionId: $id, entities: $entities, deletions: $deletions) { ...PushBatchFields } } ${PUSH_BATCH_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => {
      const sent = (request.requestBody ?? {}) as { entities?: Record<string, any>[] | null; deletions?: string[] | null };
      return { id: connectionId(request), entities: sent.entities?.map(pushEntityInput) ?? null, deletions: sent.deletions ?? null };
    },
    respond: (data) => toRest(data.pushEntities),
  },
  getPushBatch: {
    document: `query ($id: ID!, $batchId: ID!) { pushBatch(sourceConnectionId: $id, id: $batchId) { ...PushBatchFields } } ${PUSH_BATCH_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ id: connectionId(request), batchId: String((request.params as Record<string, string>).batch_id) }),
    respond: (data) => (data.pushBatch === null ? undefined : toRest(data.pushBatch)),
    notFound: (request) => `Push batch "${String((request.params as Record<string, string>).batch_id)}" not found`,
  },
  listSourceConnectionJobSkipped: {
    document: `query ($id: ID!, $jobId: ID!, $limit: Int!, $offset: Int!) {
      sourceConnection(id: $id) { id }
      syncJob(id: $jobId) { id sourceConnectionId skipped(limit: $limit, offset: $offset) { count listed byReason { reason count } items { entityId reason detail } } }
    }`,
    inputLocation: 'query',
    variables: (request) => ({ id: connectionId(request), jobId: jobId(request), limit: Number(query(request).limit ?? 100), offset: Number(query(request).offset ?? 0) }),
    respond: (data) => {
      const connection = data.sourceConnection as { id: string } | null;
      const job = data.syncJob as { id: string; sourceConnectionId: string; skipped: unknown } | null;
      if (!connection || !job || job.sourceConnectionId !== connection.id) return undefined;
      return { job_id: job.id, ...toRest(job.skipped) };
    },
    notFound: (request) => `Sync job "${jobId(request)}" not found`,
  },
  cancelSourceConnectionJob: {
    document: `mutation ($id: ID!, $jobId: ID!) { cancelSync(sourceConnectionId: $id, jobId: $jobId) { ...JobFields } } ${JOB_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ id: connectionId(request), jobId: jobId(request) }),
    respond: (data) => toRest(data.cancelSync),
  },
};
