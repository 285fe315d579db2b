import type { ParsedRequest as Request } from 'openapi-backend';
import { camelCase, renameKeys, snakeCase } from '../shared/case.js';
import type { RestOperation } from './operation.js';

/**
 * A SearchResult in the spec's snake_case, straight from GraphQL (aliases), so search responses,
 * the hottest path of the facade, need no renaming pass: `respond` hands GraphQL's data to
 * `res.json` as it is. (raw_source_fields is a JSON scalar: the source's own keys, untouched.)
 */
const RESULT_FIELDS = `
  fragment ResultFields on SearchResult {
    entity_id: entityId name relevance_score: relevanceScore breadcrumbs { entity_id: entityId name entity_type: entityType }
    created_at: createdAt updated_at: updatedAt textual_representation: textualRepresentation
    service_system_metadata: serviceSystemMetadata {
      source_name: sourceName entity_type: entityType chunk_index: chunkIndex original_entity_id: originalEntityId sync_id: syncId sync_job_id: syncJobId
    }
    access { viewers is_public: isPublic } web_url: webUrl url raw_source_fields: rawSourceFields
  }`;

/** Source fields are the source's own: their keys pass through untouched. */
const OPAQUE = new Set(['rawSourceFields', 'raw_source_fields', 'value']);

const readableId = (request: Request) => String((request.params as Record<string, string>).readable_id);
const body = (request: Request) => renameKeys(request.requestBody ?? {}, camelCase, OPAQUE);
const toRest = (value: unknown) => renameKeys(value, snakeCase, OPAQUE);

/** Tool arguments and statistics are the agent's own objects: passed through as they are. */
const AGENT_OPAQUE = new Set([...OPAQUE, 'arguments', 'stats', 'filter']);

const AGENT_EVENT_FIELDS = `
  fragment AgentEventFields on AgentEvent {
    ... on AgentStartedEvent { type requestId tier collectionReadableId query thinking filter limit }
    ... on AgentThinkingEvent { type thinking text durationMs diagnostics { iteration promptTokens completionTokens } }
    ... on AgentToolCallEvent { type toolName durationMs diagnostics { iteration toolCallId arguments stats } }
    ... on AgentRerankingEvent { type durationMs diagnostics { inputCount outputCount model topRelevanceScore bottomRelevanceScore } }
    ... on AgentDoneEvent {
      type durationMs results { ...ResultFields }
      diagnostics { totalIterations allSeenEntityIds allReadEntityIds allCollectedEntityIds maxIterationsHit promptTokens completionTokens }
    }
    ... on AgentErrorEvent { type message durationMs diagnostics { iteration } }
  }
  ${RESULT_FIELDS}`;

/** The date the legacy GET search was deprecated (RFC 9745 `Deprecation: @<epoch seconds>`). */
const LEGACY_DEPRECATED_AT = Date.UTC(2026, 10, 1) / 1000;

export const searchOperations: Record<string, RestOperation> = {
  searchInstant: {
    document: `query ($readableId: String!, $input: InstantSearchInput!) { searchInstant(readableId: $readableId, input: $input) { results { ...ResultFields } } } ${RESULT_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ readableId: readableId(request), input: body(request) }),
    respond: (data) => data.searchInstant,
  },
  searchClassic: {
    document: `query ($readableId: String!, $input: ClassicSearchInput!) { searchClassic(readableId: $readableId, input: $input) { results { ...ResultFields } } } ${RESULT_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ readableId: readableId(request), input: body(request) }),
    respond: (data) => data.searchClassic,
  },
  searchAgentic: {
    document: `query ($readableId: String!, $input: AgenticSearchInput!) { searchAgentic(readableId: $readableId, input: $input) { results { ...ResultFields } } } ${RESULT_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ readableId: readableId(request), input: body(request) }),
    respond: (data) => data.searchAgentic,
  },
  searchAgenticStream: {
    document: `subscription ($readableId: String!, $input: AgenticSearchInput!) { agenticSearch(readableId: $readableId, input: $input) { ...AgentEventFields } } ${AGENT_EVENT_FIELDS}`,
    inputLocation: 'body',
    stream: true,
    variables: (request) => ({ readableId: readableId(request), input: body(request) }),
    respond: (data) => renameKeys(data.agenticSearch, snakeCase, AGENT_OPAQUE),
  },
  searchLegacy: {
    document: `query ($readableId: String!, $query: String!, $responseType: LegacyResponseType, $limit: Int, $offset: Int, $recencyBias: Float) {
      searchLegacy(readableId: $readableId, query: $query, responseType: $responseType, limit: $limit, offset: $offset, recencyBias: $recencyBias) {
        results { ...ResultFields } responseType status completion
      }
    } ${RESULT_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => {
      const query = request.query as Record<string, unknown>;
      return { readableId: readableId(request), query: query.query, responseType: query.response_type, limit: query.limit, offset: query.offset, recencyBias: query.recency_bias };
    },
    respond: (data) => toRest(data.searchLegacy),
    headers: (request) => ({
      Deprecation: `@${LEGACY_DEPRECATED_AT}`,
      Link: `</collections/${encodeURIComponent(readableId(request))}/search/instant>; rel="successor-version"`,
    }),
  },
};
