import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { firstStreamResult } from '../support/graphql-stream.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 12: `syncJobProgress` on an unknown or another organization's job answered
 * INTERNAL_SERVER_ERROR, and a subscription sent to POST /graphql ran its resolver without an event
 * (a TypeError in the log). Now: NOT_FOUND, and a 400 that points to the stream endpoint.
 */

describe('issue 12-12: subscription errors are clear', () => {
  let server: TestServer;
  let jobId: string;
  const progress = (id: string) => `subscription { syncJobProgress(jobId: "${id}") { id status } }`;

  beforeAll(async () => {
    // No worker: the job of the new connection stays PENDING, so its stream would stay open.
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false } });
    const call = (method: string, path: string, body?: unknown) => http(server.url, method, path, { apiKey: server.apiKey, body });
    expect((await call('POST', '/collections', { name: 'Docs', readable_id: 'docs' })).status).toBe(200);
    const connection = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'docs', authentication: { credentials: { token: 't' } }, config: { entity_count: 1 } });
    [{ id: jobId }] = (await call('GET', `/source-connections/${connection.body.id}/jobs`)).body;
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('syncJobProgress: an unknown job, a malformed id and another organization\'s job are NOT_FOUND', async () => {
    for (const id of [randomUUID(), 'not-a-job']) {
      const result = await firstStreamResult(server.url, server.apiKey, progress(id));
      expect(result).toEqual({ errors: [expect.objectContaining({ message: `Sync job "${id}" not found`, extensions: { code: 'NOT_FOUND' } })] });
    }
    const outsider = await server.running.core.services.organizations.createOrganization('Outsiders');
    const foreign = await firstStreamResult(server.url, outsider.api_key, progress(jobId));
    expect(foreign.errors).toEqual([expect.objectContaining({ extensions: { code: 'NOT_FOUND' } })]);
  });

  test('a subscription sent to POST /graphql is a 400 naming the stream endpoint, and nothing is logged as unexpected', async () => {
    const logged = jest.spyOn(server.running.core.logger, 'error');
    try {
      for (const query of ['subscription { collectionEvents { type } }', progress(jobId)]) {
        const response = await graphql(server.url, query, {}, { apiKey: server.apiKey });
        expect(response.status).toBe(400);
        expect(response.body).toEqual({ errors: [{ message: expect.stringMatching(/Subscriptions are served over GraphQL over SSE at \/graphql\/stream/), extensions: { code: 'BAD_REQUEST' } }] });
      }
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });
});
