import type { ParsedRequest as Request } from 'openapi-backend';
import { camelCase, renameKeys, snakeCase } from '../shared/case.js';
import type { RestOperation } from './operation.js';

const RESULT_FIELDS = `
  fragment ResultFields on SearchResult {
    entityId name relevanceScore breadcrumbs { entityId name entityType } createdAt updatedAt textualRepresentation
    serviceSystemMetadata { sourceName entityType chunkIndex originalEntityId syncId syncJobId }
    access { viewers isPublic } webUrl url rawSourceFields
  }`;

/** Source fields are the source's own: their keys pass through untouched. */
const OPAQUE = new Set(['rawSourceFields', 'raw_source_fields', 'value']);

const readableId = (request: Request) => String((request.params as Record<string, string>).readable_id);

export const searchOperations: Record<string, RestOperation> = {
  searchInstant: {
    document: `query ($readableId: String!, $input: InstantSearchInput!) { searchInstant(readableId: $readableId, input: $input) { results { ...ResultFields } } } ${RESULT_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ readableId: readableId(request), input: renameKeys(request.requestBody ?? {}, camelCase, OPAQUE) }),
    respond: (data) => renameKeys(data.searchInstant, snakeCase, OPAQUE),
  },
};
