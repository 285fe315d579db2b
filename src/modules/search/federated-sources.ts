import { isFederated, type ConnectorEnvironment } from '../../connectors/connector.js';
import type { FilterCondition, FilterGroup } from '../../platform/vectors/vector-index.js';
import type { SourceConnection } from '../connections/source-connection.entity.js';
import type { SourceService } from '../sources/source.service.js';
import { runContext, type RunContextDependencies } from '../sync/run-context.js';
import { conditionHolds } from './filter-rules.js';
import { fromSourceEntity, type SearchResultView } from './search-result.js';

/** How long one federated source may take before search goes on without it. */
const FEDERATED_TIMEOUT_MS = 10_000;

/**
 * Federated connections are searched in the source itself at query time (nothing of theirs is in
 * the index). One source failing or timing out leaves it out of the results, logged; it never fails
 * the search.
 */
export class FederatedSources {
  constructor(
    private readonly sources: SourceService,
    /** What a connection's context is built from, as for its runs: config and credentials parsed, the OAuth token provider, the guarded HTTP client. */
    private readonly contexts: RunContextDependencies,
    private readonly environment: ConnectorEnvironment,
  ) {}

  isFederated(connection: Pick<SourceConnection, 'shortName' | 'config'>): boolean {
    return isFederated(this.sources.connector(connection.shortName), connection.config);
  }

  /** One ranked list per connection that answered. */
  async search(connections: SourceConnection[], text: string, limit: number, filter: FilterGroup[] | null, signal?: AbortSignal): Promise<SearchResultView[][]> {
    const lists = await Promise.all(
      connections.map(async (connection) => {
        const connector = this.sources.connector(connection.shortName);
        if (!connector.search) return [];
        const timeout = AbortSignal.timeout(FEDERATED_TIMEOUT_MS);
        const searchSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
        const { logger } = this.contexts;
        try {
          const { config, credentials, tokens, http } = runContext(this.contexts, connector, connection, { loadCursor: false, signal: searchSignal });
          const hits = await connector.search({ config, credentials, tokens, http, signal: searchSignal, logger }, { text, limit }, this.environment);
          return hits.map((hit) => fromSourceEntity(hit.entity, connection.shortName, hit.score)).filter((result) => matchesFilter(result, filter));
        } catch (error) {
          logger.warn({ sourceConnectionId: connection.id, source: connection.shortName, err: error instanceof Error ? error.message : String(error) }, 'federated source left out of search results');
          return [];
        }
      }),
    );
    return lists.filter((list) => list.length > 0);
  }
}

/**
 * The filter evaluated on a federated result (the source cannot run our filter language; the index
 * runs it natively). Same semantics as the index adapters: groups ORed, conditions ANDed; on
 * breadcrumbs a condition holds when it holds for any breadcrumb.
 */
export function matchesFilter(result: SearchResultView, filter: FilterGroup[] | null): boolean {
  if (!filter || filter.length === 0) return true;
  return filter.some((group) => group.conditions.every((condition) => fieldValues(result, condition.field).some((value) => conditionHolds(value, condition))));
}

function fieldValues(result: SearchResultView, field: FilterCondition['field']): unknown[] {
  const meta = result.serviceSystemMetadata;
  switch (field) {
    case 'entity_id': return [result.entityId];
    case 'name': return [result.name];
    case 'created_at': return [result.createdAt];
    case 'updated_at': return [result.updatedAt];
    case 'breadcrumbs.entity_id': return result.breadcrumbs.map((b) => b.entityId);
    case 'breadcrumbs.name': return result.breadcrumbs.map((b) => b.name);
    case 'breadcrumbs.entity_type': return result.breadcrumbs.map((b) => b.entityType);
    case 'service_system_metadata.entity_type': return [meta.entityType];
    case 'service_system_metadata.source_name': return [meta.sourceName];
    case 'service_system_metadata.original_entity_id': return [meta.originalEntityId];
    case 'service_system_metadata.chunk_index': return [meta.chunkIndex];
    case 'service_system_metadata.sync_id': return [meta.syncId];
    case 'service_system_metadata.sync_job_id': return [meta.syncJobId];
  }
}
