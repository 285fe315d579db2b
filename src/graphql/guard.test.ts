import { describe, expect, test } from '@jest/globals';
import { loadOpenApiDocument } from '../rest/facade.js';
import { rateLimitFamilyOfPath } from './guard.js';

describe('rateLimitFamilyOfPath', () => {
  // Every REST path, and the budget its GraphQL operations' guards draw on: a path added to the
  // OpenAPI document must be added here, with the family its resolver's guard names.
  const expected: Record<string, string> = {
    '/collections': 'collections',
    '/collections/{readable_id}': 'collections',
    '/collections/{readable_id}/entities/query': 'collections',
    '/collections/{readable_id}/search': 'search',
    '/collections/{readable_id}/search/instant': 'search',
    '/collections/{readable_id}/search/classic': 'search',
    '/collections/{readable_id}/search/agentic': 'search',
    '/collections/{readable_id}/search/agentic/stream': 'search',
    '/source-connections': 'source_connections',
    '/source-connections/{source_connection_id}': 'source_connections',
    '/source-connections/{source_connection_id}/authorize': 'source_connections',
    '/source-connections/{source_connection_id}/run': 'source_connections',
    '/source-connections/{source_connection_id}/jobs': 'source_connections',
    '/source-connections/{source_connection_id}/jobs/{job_id}/cancel': 'source_connections',
    '/source-connections/{source_connection_id}/jobs/{job_id}/skipped': 'source_connections',
    '/source-connections/{source_connection_id}/entities': 'source_connections',
    '/source-connections/{source_connection_id}/push-batches/{batch_id}': 'source_connections',
    '/sources': 'sources',
    '/sources/{short_name}': 'sources',
    '/webhooks/messages': 'webhooks',
    '/webhooks/messages/{message_id}': 'webhooks',
    '/webhooks/subscriptions': 'webhooks',
    '/webhooks/subscriptions/{subscription_id}': 'webhooks',
    '/webhooks/subscriptions/{subscription_id}/recover': 'webhooks',
    '/webhooks/subscriptions/{subscription_id}/recover/{task_id}': 'webhooks',
  };

  test('every path of the OpenAPI document draws on the family of its GraphQL guards', () => {
    // /oauth/callback is the browser's end of a sign-in, served beside the facade: it runs no GraphQL guard.
    const paths = Object.keys(loadOpenApiDocument().paths ?? {})
      .filter((path) => path !== '/oauth/callback')
      .sort();
    expect(paths).toEqual(Object.keys(expected).sort());
    expect(Object.fromEntries(paths.map((path) => [path, rateLimitFamilyOfPath(path)]))).toEqual(expected);
  });
});
