import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-sse';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

/**
 * Issue 12, finding 5: a subscription kept receiving events after its API key was revoked, and
 * after its bearer token expired. Open streams now re-check their credentials every second and end
 * with an UNAUTHENTICATED error event once they lapse: graphql-sse subscriptions and the REST
 * agentic stream alike. The language model never answers, so the agentic stream stays open until
 * something ends it.
 */

/** A chat-completions endpoint that never answers; it records each call and when its caller gave up. */
async function startSilentModel() {
  const calls: { cancelledAt: number | null }[] = [];
  const server = createServer((request, response) => {
    const call = { cancelledAt: null as number | null };
    calls.push(call);
    response.on('close', () => (call.cancelledAt = Date.now()));
    request.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface StreamEnd {
  received: any[];
  /** Milliseconds from `since` until the stream completed or failed. */
  endedAfterMs: number;
}

/** Subscribes with the real graphql-sse client and resolves when the stream ends. */
function subscription(url: string, headers: Record<string, string>, query: string, onEvent: (event: any) => void = () => {}) {
  const client = createClient({ url: `${url}/graphql/stream`, headers, retryAttempts: 0 });
  const received: any[] = [];
  let since = Date.now();
  const ended = new Promise<StreamEnd>((resolve) => {
    const finish = () => resolve({ received, endedAfterMs: Date.now() - since });
    client.subscribe({ query }, { next: (event) => (received.push(event), onEvent(event)), error: finish, complete: finish });
  });
  return { received, ended, markTime: () => (since = Date.now()), dispose: () => client.dispose() };
}

/** A POST event stream read with fetch: each `data:` message parsed, until the server ends the response. */
async function restStream(url: string, apiKey: string, body: unknown) {
  const response = await fetch(url, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
  const events: any[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let firstEvent!: () => void;
  const started = new Promise<void>((resolve) => (firstEvent = resolve));
  const ended = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return Date.now();
      buffered += decoder.decode(value, { stream: true });
      let boundary: number;
      while ((boundary = buffered.indexOf('\n\n')) >= 0) {
        const message = buffered.slice(0, boundary);
        buffered = buffered.slice(boundary + 2);
        if (message.startsWith('data: ')) {
          events.push(JSON.parse(message.slice(6)));
          firstEvent();
        }
      }
    }
  })();
  return { status: response.status, events, started, ended };
}

describe('issue 12-05: streams end when their credentials lapse', () => {
  let server: TestServer;
  let model: Awaited<ReturnType<typeof startSilentModel>>;
  let organizationId: string;

  beforeAll(async () => {
    model = await startSilentModel();
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_LLM_URL: model.url, CATCHMENT_LLM_MODEL: 'silent' } });
    organizationId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    expect((await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Streams', readable_id: 'streams' } })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    await model?.close();
  });

  test('graphql-sse: a key revoked by another process ends its stream within ~2 s; a stream of a valid key goes on', async () => {
    const doomed = await server.running.core.services.organizations.createApiKey(organizationId);
    const query = 'subscription { collectionEvents { type collection { readableId } } }';
    const revoked = subscription(server.url, { 'x-api-key': doomed.api_key }, query);
    const kept = subscription(server.url, { 'x-api-key': server.apiKey }, query);
    await new Promise((resolve) => setTimeout(resolve, 500)); // both streams subscribed
    await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Seen by both', readable_id: 'seen-by-both' } });
    await waitFor(() => revoked.received.length === 1 && kept.received.length === 1);

    // As `catchment api-keys revoke` does from its own process: this API process only sees the row change.
    const pool = server.running.core.database.orm.em.getConnection();
    await pool.execute('update api_keys set revoked_at = now() where id = ?', [doomed.id]);
    revoked.markTime();
    const end = await revoked.ended;
    expect(end.endedAfterMs).toBeLessThan(3000);
    expect(end.received.at(-1)).toEqual({ errors: [{ message: 'API key revoked', extensions: { code: 'UNAUTHENTICATED' } }] });

    await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Seen by one', readable_id: 'seen-by-one' } });
    await waitFor(() => kept.received.length === 2);
    expect(kept.received.map((event) => event.data.collectionEvents.collection.readableId)).toEqual(['seen-by-both', 'seen-by-one']);
    expect(revoked.received).toHaveLength(2); // the event, then the error: nothing after
    kept.dispose();
    revoked.dispose();
  });

  test('graphql-sse: a stream opened with a 2 s bearer token ends about when the token expires', async () => {
    const token = await server.running.core.services.auth.issueToken({ organizationId, email: 'brief@example.com', role: 'member', ttlSeconds: 2 });
    const issuedAt = Date.now();
    const stream = subscription(server.url, { authorization: `Bearer ${token.access_token}` }, 'subscription { collectionEvents { type } }');
    const end = await stream.ended;
    const lifetime = Date.now() - issuedAt;
    expect(end.received).toEqual([{ errors: [{ message: 'Bearer token expired', extensions: { code: 'UNAUTHENTICATED' } }] }]);
    expect(lifetime).toBeGreaterThanOrEqual(1000); // jose's expiry has second precision
    expect(lifetime).toBeLessThan(4000);
    stream.dispose();
  });

  test('REST: the agentic stream ends with an error event once its key is revoked, and stops the agent', async () => {
    const doomed = await server.running.core.services.organizations.createApiKey(organizationId);
    const stream = await restStream(`${server.url}/collections/streams/search/agentic/stream`, doomed.api_key, { query: 'anything at all' });
    expect(stream.status).toBe(200);
    await stream.started;
    await waitFor(() => model.calls.length > 0); // the agent waits on the model now
    const revokedAt = Date.now();
    await server.running.core.services.organizations.revokeApiKey(doomed.id);
    const endedAt = await stream.ended;
    expect(endedAt - revokedAt).toBeLessThan(2500);
    expect(stream.events[0]).toMatchObject({ type: 'started' });
    expect(stream.events.at(-1)).toEqual({ type: 'error', message: 'API key revoked' });
    await waitFor(() => model.calls[0]!.cancelledAt !== null, 2000); // the agent stopped: its model call was cancelled
    expect(model.calls).toHaveLength(1);
    // The revoked key opens nothing more.
    expect((await http(server.url, 'POST', '/collections/streams/search/agentic/stream', { apiKey: doomed.api_key, body: { query: 'x' } })).status).toBe(401);
  });
});
