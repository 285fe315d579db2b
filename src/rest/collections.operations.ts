import type { ParsedRequest as Request } from 'openapi-backend';
import { camelCase, renameKeys, snakeCase } from '../shared/case.js';
import type { RestOperation } from './operation.js';

const COLLECTION_FIELDS = `
  fragment CollectionFields on Collection {
    id name readableId organizationId createdAt modifiedAt createdByEmail modifiedByEmail status vectorSize embeddingModelName
    sourceConnectionSummaries { shortName name }
    syncConfig {
      destinations { skipVectorDb targetDestinations excludeDestinations }
      handlers { enableVectorHandlers enableRawDataHandler enableEntityDbHandler }
      cursor { skipLoad skipUpdates }
      behavior { skipHashComparison replayFromArf skipGuardrails }
    }
  }`;

/** GraphQL's enum names cannot hold the space the spec puts in "NEEDS SOURCE". */
const REST_STATUS: Record<string, string> = { ACTIVE: 'ACTIVE', NEEDS_SOURCE: 'NEEDS SOURCE', ERROR: 'ERROR' };

export function collectionToRest(collection: unknown): Record<string, unknown> {
  const rest = renameKeys(collection, snakeCase) as Record<string, unknown>;
  rest.status = REST_STATUS[String(rest.status)] ?? rest.status;
  return rest;
}

const readableId = (request: Request) => String(request.params.readable_id);
const bodyInput = (request: Request) => renameKeys(request.requestBody ?? {}, camelCase);

export const collectionOperations: Record<string, RestOperation> = {
  listCollections: {
    document: `query ($skip: Int!, $limit: Int!, $search: String) { collections(skip: $skip, limit: $limit, search: $search) { ...CollectionFields } } ${COLLECTION_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => ({
      skip: request.query.skip === undefined ? 0 : Number(request.query.skip),
      limit: request.query.limit === undefined ? 100 : Number(request.query.limit),
      search: request.query.search === undefined ? null : String(request.query.search),
    }),
    respond: (data) => (data.collections as unknown[]).map(collectionToRest),
  },
  createCollection: {
    document: `mutation ($input: CollectionCreateInput!) { createCollection(input: $input) { ...CollectionFields } } ${COLLECTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ input: bodyInput(request) }),
    respond: (data) => collectionToRest(data.createCollection),
  },
  getCollection: {
    document: `query ($readableId: String!) { collection(readableId: $readableId) { ...CollectionFields } } ${COLLECTION_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ readableId: readableId(request) }),
    respond: (data) => (data.collection === null ? undefined : collectionToRest(data.collection)),
    notFound: (request) => `Collection "${readableId(request)}" not found`,
  },
  updateCollection: {
    document: `mutation ($readableId: String!, $input: CollectionUpdateInput!) { updateCollection(readableId: $readableId, input: $input) { ...CollectionFields } } ${COLLECTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ readableId: readableId(request), input: bodyInput(request) }),
    respond: (data) => collectionToRest(data.updateCollection),
  },
  deleteCollection: {
    document: `mutation ($readableId: String!) { deleteCollection(readableId: $readableId) { ...CollectionFields } } ${COLLECTION_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ readableId: readableId(request) }),
    respond: (data) => collectionToRest(data.deleteCollection),
  },
  listCollectionEntities: {
    document: `query ($readableId: String!, $filter: [FilterGroupInput!], $limit: Int!, $offset: Int!) {
      collectionEntities(readableId: $readableId, filter: $filter, limit: $limit, offset: $offset) {
        total byType { entityType count } bySource { sourceConnectionId sourceName count }
        items { entityId name entityType sourceConnectionId sourceName breadcrumbs { entityId name entityType } createdAt updatedAt syncedAt chunkCount }
      }
    }`,
    inputLocation: 'body',
    variables: (request) => {
      const sent = (request.requestBody ?? {}) as { filter?: unknown; limit?: number; offset?: number };
      return { readableId: readableId(request), filter: sent.filter ?? null, limit: sent.limit ?? 100, offset: sent.offset ?? 0 };
    },
    respond: (data) => renameKeys(data.collectionEntities, snakeCase),
  },
};
