import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { TestOAuthProvider } from './support/oauth-provider.js';
import { WebhookReceiver, type ReceivedDelivery } from '../src/modules/webhooks/webhook-receiver.js';
import { EVENT_TYPES } from '../src/platform/events/event-bus.js';
import { loadOpenApiDocument } from '../src/rest/facade.js';
import { graphql, http, startTestServer, type TestServer } from './support/harness.js';
import { api, eventually, FAST_WORKER, waitForJob } from './support/sync-helpers.js';

// Compressed schedule for the suite: 1 s timeout, retries after 200 ms, 200 ms and 200 ms (4 attempts).
process.env.CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE = '1000:200,200,200';

/** Checks a value against a schema of the published OpenAPI document (the shapes clients rely on). */
const openapi = (() => {
  const document = loadOpenApiDocument() as any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: document.components });
  return (schema: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${schema}`)!;
    return validate(value) ? [] : validate.errors!.map((error) => `${error.instancePath} ${error.message}`);
  };
})();

/** Webhooks on the servers deployment (PostgreSQL + Redis), receivers on loopback. */
describe('webhooks', () => {
  let server: TestServer;
  let strict: TestServer;
  let orgId: string;
  let admin: string;
  let member: string;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      deployment: 'servers',
      env: { ...FAST_WORKER, CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true', CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' },
    });
    // The operator's defaults: HTTPS only, no private targets. API only.
    strict = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
    orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    const issue = (role: string) => server.running.core.services.auth.issueToken({ organizationId: orgId, email: `${role}@example.com`, role }).then((t) => t.access_token);
    admin = await issue('admin');
    member = await issue('member');
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.close();
    await server?.stop();
    await strict?.stop();
  });

  const receiver = async () => {
    const started = await WebhookReceiver.start();
    receivers.push(started);
    return started;
  };
  const asAdmin = (method: string, path: string, body?: unknown) => http(server.url, method, path, { token: admin, body });
  const withKey = () => api(server.url, server.apiKey);
  const subscribe = async (url: string, eventTypes: string[], secret?: string) => {
    const created = await asAdmin('POST', '/webhooks/subscriptions', { url, event_types: eventTypes, ...(secret ? { secret } : {}) });
    expect(created.status).toBe(200);
    const detail = await asAdmin('GET', `/webhooks/subscriptions/${created.body.id}?include_secret=true`);
    return { id: created.body.id as string, secret: detail.body.secret as string };
  };
  const verified = (secret: string, delivery: ReceivedDelivery) => {
    const headers = delivery.headers as Record<string, string>;
    const payload = new StandardWebhook(secret).verify(delivery.body, headers) as Record<string, unknown>;
    new SvixWebhook(secret).verify(delivery.body, headers); // throws when the signature is wrong
    return payload;
  };
  const collection = async (name: string) => (await withKey()('POST', '/collections', { name })).body;

  test('events of the subscribed types arrive signed (standardwebhooks and svix verify them), with the spec payloads and a message history', async () => {
    const target = await receiver();
    const { id, secret } = await subscribe(target.url, ['collection.created', 'source_connection.created', 'sync.pending', 'sync.running', 'sync.completed']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);

    const made = await collection('Webhook target');
    const call = withKey();
    const connection = (
      await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: made.readable_id, authentication: { credentials: { token: 't' } }, config: { entity_count: 30 } })
    ).body;
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    const finished = await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED']);
    expect(finished.status).toBe('COMPLETED');
    await call('PATCH', `/collections/${made.readable_id}`, { name: 'Not subscribed to updates' });

    const payloads = await eventually(
      async () => target.received.map((delivery) => verified(secret, delivery)),
      (list) => list.some((payload) => payload.event_type === 'sync.completed'),
    );
    const types = payloads.map((payload) => payload.event_type);
    expect(new Set(types)).toEqual(new Set(['collection.created', 'source_connection.created', 'sync.pending', 'sync.running', 'sync.completed']));
    expect(types).not.toContain('collection.updated');
    const completed = payloads.find((payload) => payload.event_type === 'sync.completed')!;
    expect(completed).toEqual({
      event_type: 'sync.completed',
      event_id: expect.any(String),
      organization_id: orgId,
      sync_id: connection.id,
      sync_job_id: job.id,
      collection_id: made.id,
      collection_readable_id: made.readable_id,
      collection_name: 'Webhook target',
      source_connection_id: connection.id,
      source_type: 'stub',
      entities_inserted: finished.entities_inserted,
      entities_updated: 0,
      entities_deleted: 0,
      entities_skipped: 0,
      chunks_written: finished.chunks_written,
      timestamp: expect.any(String),
    });
    const created = payloads.find((payload) => payload.event_type === 'collection.created')!;
    expect(created).toMatchObject({ collection_id: made.id, collection_name: 'Webhook target', collection_readable_id: made.readable_id, organization_id: orgId });
    const delivery = target.received.find((d) => JSON.parse(d.body).event_type === 'sync.completed')!;
    expect(delivery.headers['webhook-id']).toBe(completed.event_id);
    expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);

    // Message history: every event is a message, filterable by type; attempts on request.
    const messages = (await call('GET', '/webhooks/messages?event_types=sync.completed&event_types=collection.updated')).body;
    expect(messages.map((m: any) => m.event_type).sort()).toEqual(['collection.updated', 'sync.completed']);
    const message = messages.find((m: any) => m.event_type === 'sync.completed');
    expect(message).toEqual({ id: completed.event_id, event_type: 'sync.completed', payload: completed, timestamp: expect.any(String), channels: ['sync.completed'] });
    const withAttempts = (await call('GET', `/webhooks/messages/${message.id}?include_attempts=true`)).body;
    expect(withAttempts.delivery_attempts).toEqual([
      {
        id: expect.any(String),
        message_id: message.id,
        endpoint_id: id,
        url: target.url,
        response: 'status 200',
        response_status_code: 200,
        status: 'success',
        timestamp: expect.any(String),
        duration_ms: expect.any(Number),
        attempt_number: 1,
      },
    ]);
    const updatedMessage = messages.find((m: any) => m.event_type === 'collection.updated');
    expect((await call('GET', `/webhooks/messages/${updatedMessage.id}?include_attempts=true`)).body.delivery_attempts).toEqual([]);

    const detail = (await call('GET', `/webhooks/subscriptions/${id}`)).body;
    expect(detail).not.toHaveProperty('secret');
    expect(detail).toMatchObject({ id, url: target.url, disabled: false, health_status: 'healthy' });
    expect(detail.delivery_attempts.length).toBe(target.received.length);
    expect((await call('GET', '/webhooks/messages/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  test('all twelve event types fire from the real state changes, each payload exactly as documented, committed with its change', async () => {
    const target = await receiver();
    // A secret of the user's own that is not base64: its UTF-8 bytes are the key.
    const own = 'all twelve events: my own secret';
    const { id, secret } = await subscribe(target.url, [...EVENT_TYPES], own);
    const call = withKey();
    const made = await collection('Every event');
    await call('PATCH', `/collections/${made.readable_id}`, { name: 'Every event renamed' });
    const stub = async (config: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: made.readable_id, authentication: { credentials: { token: 't' } }, config, ...extra })).body;
    const lastJob = async (connectionId: string) => (await call('GET', `/source-connections/${connectionId}/jobs`)).body[0];

    const good = await stub({ entity_count: 12, hierarchy_depth: 0 });
    const completed = await waitForJob(call, good.id, (await lastJob(good.id)).id, ['COMPLETED', 'FAILED']);
    expect(completed.status).toBe('COMPLETED');
    const bad = await stub({ entity_count: 30, fail_after: 5, hierarchy_depth: 0 });
    const failed = await waitForJob(call, bad.id, (await lastJob(bad.id)).id, ['COMPLETED', 'FAILED']);
    expect(failed.status).toBe('FAILED');
    const slow = await stub({ entity_count: 400, delay_ms: 10, hierarchy_depth: 0 }, { sync_immediately: false });
    const run = (await call('POST', `/source-connections/${slow.id}/run`)).body;
    expect((await call('POST', `/source-connections/${slow.id}/jobs/${run.id}/cancel`)).status).toBe(200);
    const cancelled = await waitForJob(call, slow.id, run.id, ['CANCELLED']);
    // An OAuth connection whose refresh the provider refuses (a revoked refresh token): its user must sign in again.
    const tokenEndpoint = await new TestOAuthProvider().start();
    tokenEndpoint.clients.set('events-client', 'events-secret');
    const expiring = (
      await call('POST', '/source-connections', {
        short_name: 'stub',
        readable_collection_id: made.readable_id,
        config: { entity_count: 3, hierarchy_depth: 0, oauth_token_url: tokenEndpoint.tokenUrl },
        authentication: { access_token: 'access-expiring', refresh_token: 'refresh-revoked', expires_at: new Date(Date.now() + 20_000).toISOString(), client_id: 'events-client', client_secret: 'events-secret' },
      })
    ).body;
    const expired = await waitForJob(call, expiring.id, (await lastJob(expiring.id)).id, ['COMPLETED', 'FAILED']).finally(() => tokenEndpoint.stop());
    expect(expired.status).toBe('FAILED');
    expect((await call('DELETE', `/source-connections/${bad.id}`)).status).toBe(200);
    const doomed = await collection('Deleted with its events');
    // Its connection goes with it, its sync still pending or running: both are reported.
    const doomedConnection = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: doomed.readable_id, authentication: { credentials: { token: 't' } }, config: { entity_count: 5000, delay_ms: 20, hierarchy_depth: 0 } })).body;
    const doomedJob = await lastJob(doomedConnection.id);
    expect((await call('DELETE', `/collections/${doomed.readable_id}`)).status).toBe(200);

    const payloads = await eventually(
      async () => target.received.map((delivery) => verified(secret, delivery)),
      (list) =>
        EVENT_TYPES.every((type) => list.some((payload) => payload.event_type === type)) &&
        list.some((p) => p.event_type === 'collection.deleted') &&
        list.some((p) => p.event_type === 'source_connection.deleted' && p.source_connection_id === doomedConnection.id) &&
        list.some((p) => p.event_type === 'sync.cancelled' && p.sync_job_id === doomedJob.id),
    );
    // standardwebhooks also verifies with the raw text the user chose.
    for (const delivery of target.received) new StandardWebhook(own, { format: 'raw' }).verify(delivery.body, delivery.headers as Record<string, string>);
    for (const payload of payloads) expect([payload.event_type, openapi('WebhookEvent', payload)]).toEqual([payload.event_type, []]);
    const ofType = (type: string, match: (payload: Record<string, unknown>) => boolean = () => true) => payloads.filter((p) => p.event_type === type && match(p));
    const common = { event_id: expect.any(String), organization_id: orgId, timestamp: expect.any(String) };

    const syncFields = (connection: any, job: any, type: string) => ({
      ...common,
      event_type: type,
      sync_id: connection.id,
      sync_job_id: job.id,
      collection_id: made.id,
      collection_readable_id: made.readable_id,
      collection_name: 'Every event renamed',
      source_connection_id: connection.id,
      source_type: 'stub',
      entities_inserted: expect.any(Number),
      entities_updated: expect.any(Number),
      entities_deleted: expect.any(Number),
      entities_skipped: expect.any(Number),
      chunks_written: expect.any(Number),
    });
    expect(ofType('sync.completed', (p) => p.sync_job_id === completed.id)).toEqual([
      { ...syncFields(good, completed, 'sync.completed'), entities_inserted: completed.entities_inserted, entities_updated: 0, entities_deleted: 0, entities_skipped: 0, chunks_written: completed.chunks_written },
    ]);
    const [failure] = ofType('sync.failed', (p) => p.sync_job_id === failed.id);
    expect(failure).toEqual({ ...syncFields(bad, failed, 'sync.failed'), error: failed.error });
    expect(failure!.error).toMatch(/Stub source failed after 5 entities/);
    expect(failure!.entities_inserted).toBe(failed.entities_inserted);
    expect(ofType('sync.cancelled', (p) => p.sync_job_id === cancelled.id)).toEqual([syncFields(slow, cancelled, 'sync.cancelled')]);
    for (const [connection, job] of [[good, completed], [bad, failed], [slow, run]] as const) {
      expect(ofType('sync.pending', (p) => p.sync_job_id === job.id)).toEqual([syncFields(connection, job, 'sync.pending')]);
    }
    expect(ofType('sync.running', (p) => p.sync_job_id === completed.id)).toEqual([syncFields(good, completed, 'sync.running')]);

    const connectionEvent = (connection: any, type: string) => ({
      ...common,
      event_type: type,
      source_connection_id: connection.id,
      collection_readable_id: made.readable_id,
      source_type: 'stub',
      is_authenticated: true,
    });
    for (const connection of [good, bad, slow]) {
      expect(ofType('source_connection.created', (p) => p.source_connection_id === connection.id)).toEqual([connectionEvent(connection, 'source_connection.created')]);
      expect(ofType('source_connection.auth_completed', (p) => p.source_connection_id === connection.id)).toEqual([connectionEvent(connection, 'source_connection.auth_completed')]);
    }
    expect(ofType('source_connection.deleted')).toEqual(
      expect.arrayContaining([connectionEvent(bad, 'source_connection.deleted'), { ...connectionEvent(doomedConnection, 'source_connection.deleted'), collection_readable_id: doomed.readable_id }]),
    );
    expect(ofType('source_connection.deleted')).toHaveLength(2);
    expect(ofType('source_connection.auth_expired')).toEqual([{ ...connectionEvent(expiring, 'source_connection.auth_expired'), is_authenticated: expect.any(Boolean) }]);
    expect(ofType('sync.cancelled', (p) => p.sync_job_id === doomedJob.id)).toEqual([
      expect.objectContaining({ event_type: 'sync.cancelled', source_connection_id: doomedConnection.id, collection_id: doomed.id, collection_name: 'Deleted with its events' }),
    ]);

    const collectionEvent = (target: any, type: string, name: string) => ({ ...common, event_type: type, collection_id: target.id, collection_name: name, collection_readable_id: target.readable_id });
    expect(ofType('collection.created', (p) => p.collection_id === made.id)).toEqual([collectionEvent(made, 'collection.created', 'Every event')]);
    expect(ofType('collection.updated', (p) => p.collection_id === made.id)).toEqual([collectionEvent(made, 'collection.updated', 'Every event renamed')]);
    expect(ofType('collection.deleted')).toEqual([collectionEvent(doomed, 'collection.deleted', 'Deleted with its events')]);

    // Each event once per message id; the message history holds the same payloads, in the documented shapes.
    expect(new Set(payloads.map((p) => p.event_id)).size).toBe(payloads.length);
    for (const delivery of target.received) expect(delivery.headers['webhook-id']).toBe(JSON.parse(delivery.body).event_id);
    const messages = (await call('GET', `/webhooks/messages?limit=1000`)).body as any[];
    for (const payload of payloads) {
      const message = messages.find((m) => m.id === payload.event_id);
      expect(message).toEqual({ id: payload.event_id, event_type: payload.event_type, payload, timestamp: expect.any(String), channels: [payload.event_type] });
      expect(openapi('WebhookMessage', message)).toEqual([]);
      expect(Date.parse(message.timestamp)).toBe(Date.parse(payload.timestamp as string));
    }
    const detail = (await call('GET', `/webhooks/subscriptions/${id}`)).body;
    expect(openapi('WebhookSubscriptionDetail', detail)).toEqual([]);
    const withAttempts = (await call('GET', `/webhooks/messages/${payloads[0]!.event_id}?include_attempts=true`)).body;
    expect(openapi('WebhookMessage', withAttempts)).toEqual([]);
    expect(withAttempts.delivery_attempts.length).toBeGreaterThan(0);
  });

  test('a long response is kept as its first 2,048 characters, without waiting for the rest', async () => {
    const target = await receiver();
    target.behaviour = () => ({ status: 200, body: 'x'.repeat(100_000) });
    const { id } = await subscribe(target.url, ['collection.created']);
    await collection('Long answer');
    const attempts = await eventually(async () => (await withKey()('GET', `/webhooks/subscriptions/${id}`)).body.delivery_attempts, (list: any[]) => list.length >= 1);
    expect(attempts[0]).toMatchObject({ status: 'success', response_status_code: 200 });
    expect(attempts[0].response).toBe('x'.repeat(2048));
  });

  test('a failing, timing-out, then recovering receiver: retried on the schedule, every attempt stored, health follows', async () => {
    const target = await receiver();
    target.behaviour = (_delivery, index) => (index === 0 ? { status: 500 } : index === 1 ? { status: 200, delayMs: 2500 } : { status: 204 });
    const { id } = await subscribe(target.url, ['collection.created']);
    const made = await collection('Flaky receiver');
    const call = withKey();
    const [message] = (await call('GET', '/webhooks/messages?event_types=collection.created&limit=1')).body;
    expect(message.payload.collection_id).toBe(made.id);

    const attempts = await eventually(
      async () => (await call('GET', `/webhooks/messages/${message.id}?include_attempts=true`)).body.delivery_attempts.filter((a: any) => a.endpoint_id === id),
      (list: any[]) => list.some((a) => a.status === 'success'),
    );
    expect(attempts.map((a: any) => [a.attempt_number, a.status, a.response_status_code])).toEqual([
      [1, 'failed', 500],
      [2, 'failed', null],
      [3, 'success', 204],
    ]);
    expect(attempts[1].response).toMatch(/Timed out after 1 s/);
    expect(attempts[1].duration_ms).toBeGreaterThanOrEqual(900);
    // Backoff: the retry comes after the scheduled delay, not at once.
    expect(Date.parse(attempts[1].timestamp) - Date.parse(attempts[0].timestamp)).toBeGreaterThanOrEqual(1000 + 150);
    expect(target.ids()).toEqual(new Set([message.id]));
    expect((await call('GET', `/webhooks/subscriptions/${id}`)).body.health_status).toBe('degraded');

    // A receiver that never answers 2xx: the schedule runs out, the delivery has failed.
    target.behaviour = () => ({ status: 503 });
    await collection('Failing receiver');
    const [failing] = (await call('GET', '/webhooks/messages?event_types=collection.created&limit=1')).body;
    const attemptsOf = async () => (await call('GET', `/webhooks/messages/${failing.id}?include_attempts=true`)).body.delivery_attempts.filter((a: any) => a.endpoint_id === id);
    const final = await eventually(attemptsOf, (list: any[]) => list.length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await attemptsOf()).toHaveLength(4);
    expect(final.map((a: any) => a.status)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect((await call('GET', `/webhooks/subscriptions/${id}`)).body.health_status).toBe('failing');
  });

  test('pause holds deliveries; resume with recover_since retries what failed from then; recover replays a window and skips delivered messages', async () => {
    const target = await receiver();
    target.behaviour = () => ({ status: 500 });
    const { id, secret } = await subscribe(target.url, ['collection.created']);
    const call = withKey();
    const messageOf = async (made: any) => {
      const list = (await call('GET', '/webhooks/messages?event_types=collection.created&limit=20')).body;
      return list.find((m: any) => m.payload.collection_id === made.id);
    };
    const failedFor = async (messageId: string) =>
      eventually(
        async () => (await call('GET', `/webhooks/messages/${messageId}?include_attempts=true`)).body.delivery_attempts.filter((a: any) => a.endpoint_id === id),
        (list: any[]) => list.length === 4,
      );

    const first = await messageOf(await collection('Failed early'));
    await failedFor(first.id);
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await messageOf(await collection('Failed later'));
    await failedFor(second.id);

    expect((await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: true })).body.disabled).toBe(true);
    target.behaviour = () => ({ status: 200 });
    const before = target.received.length;
    const held = await messageOf(await collection('Made while paused'));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(target.received.length).toBe(before);

    const resumed = await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: false, recover_since: between });
    expect(resumed.status).toBe(200);
    expect(resumed.body.disabled).toBe(false);
    await eventually(async () => new Set(target.received.slice(before).map((d) => String(d.headers['webhook-id']))), (ids) => ids.has(held.id) && ids.has(second.id));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sentAfterPause = () => new Set(target.received.slice(before).map((d) => String(d.headers['webhook-id'])));
    expect(sentAfterPause().has(first.id)).toBe(false); // failed before recover_since: left alone
    for (const delivery of target.received.slice(before)) verified(secret, delivery);

    // Recover the whole window: only the still-failed first message is sent again.
    const receivedBefore = target.received.length;
    const task = await asAdmin('POST', `/webhooks/subscriptions/${id}/recover`, { since: first.timestamp });
    expect(task.status).toBe(200);
    expect(task.body).toMatchObject({ id: expect.any(String), subscription_id: id, status: expect.stringMatching(/running|completed/), message_count: 1, since: first.timestamp });
    const done = await eventually(async () => (await call('GET', `/webhooks/subscriptions/${id}/recover/${task.body.id}`)).body, (t) => t.status === 'completed');
    expect(done).toMatchObject({ message_count: 1, delivered: 1, failed: 0, pending: 0 });
    expect(target.received.slice(receivedBefore).map((d) => d.headers['webhook-id'])).toEqual([first.id]);

    // A window before everything recovers nothing; until before since is refused.
    const empty = await asAdmin('POST', `/webhooks/subscriptions/${id}/recover`, { since: '2000-01-01T00:00:00Z', until: '2000-01-02T00:00:00Z' });
    expect(empty.body).toMatchObject({ message_count: 0, status: 'completed' });
    const backwards = await asAdmin('POST', `/webhooks/subscriptions/${id}/recover`, { since: '2001-01-01T00:00:00Z', until: '2000-01-01T00:00:00Z' });
    expect(backwards.status).toBe(422);
    expect(backwards.body.detail[0].loc).toEqual(['body', 'until']);
    expect((await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: true, recover_since: between })).status).toBe(422);
  });

  test('recover takes the window [since, until], both ends inclusive, and skips what was delivered since', async () => {
    const target = await receiver();
    target.behaviour = () => ({ status: 500 });
    const { id } = await subscribe(target.url, ['collection.created']);
    const call = withKey();
    const failedMessage = async (name: string) => {
      const made = (await call('POST', '/collections', { name })).body;
      const message = (await call('GET', '/webhooks/messages?event_types=collection.created&limit=20')).body.find((m: any) => m.payload.collection_id === made.id);
      await eventually(
        async () => (await call('GET', `/webhooks/messages/${message.id}?include_attempts=true`)).body.delivery_attempts.filter((a: any) => a.endpoint_id === id),
        (list: any[]) => list.length === 4,
      );
      return message;
    };
    const a = await failedMessage('Window A');
    const b = await failedMessage('Window B');
    const c = await failedMessage('Window C');
    target.behaviour = () => ({ status: 200 });
    const sentSince = (count: number) => target.received.slice(count).map((d) => String(d.headers['webhook-id']));

    let before = target.received.length;
    const first = await asAdmin('POST', `/webhooks/subscriptions/${id}/recover`, { since: a.timestamp, until: b.timestamp });
    expect(first.body).toMatchObject({ message_count: 2, since: a.timestamp, until: b.timestamp });
    const done = await eventually(async () => (await call('GET', `/webhooks/subscriptions/${id}/recover/${first.body.id}`)).body, (task) => task.status === 'completed');
    expect(done).toMatchObject({ message_count: 2, delivered: 2, failed: 0, pending: 0 });
    expect(new Set(sentSince(before))).toEqual(new Set([a.id, b.id]));

    before = target.received.length;
    const second = await asAdmin('POST', `/webhooks/subscriptions/${id}/recover`, { since: a.timestamp });
    expect(second.body.message_count).toBe(1);
    await eventually(async () => sentSince(before), (ids) => ids.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sentSince(before)).toEqual([c.id]);
    expect((await call('GET', `/webhooks/subscriptions/${id}/recover/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await http(server.url, 'POST', `/webhooks/subscriptions/${id}/recover`, { token: admin, body: {} })).body.detail[0].loc).toEqual(['body', 'since']);
  });

  test('deleting a subscription cancels its pending deliveries', async () => {
    const target = await receiver();
    target.behaviour = () => ({ status: 500 });
    const { id } = await subscribe(target.url, ['collection.updated']);
    await asAdmin('PATCH', `/webhooks/subscriptions/${id}`, { disabled: true });
    await collection('Deleted subscription').then((made) => withKey()('PATCH', `/collections/${made.readable_id}`, { name: 'Deleted subscription 2' }));
    const deleted = await asAdmin('DELETE', `/webhooks/subscriptions/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id, disabled: true });
    expect((await asAdmin('GET', `/webhooks/subscriptions/${id}`)).status).toBe(404);
    expect((await asAdmin('DELETE', `/webhooks/subscriptions/${id}`)).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(target.received).toHaveLength(0);
  });

  test('roles: changes need an admin or owner bearer token; reads take an API key or a token; other organizations see nothing', async () => {
    const target = await receiver();
    const body = { url: target.url, event_types: ['collection.created'] };
    expect((await http(server.url, 'POST', '/webhooks/subscriptions', { body })).status).toBe(401);
    expect((await http(server.url, 'GET', '/webhooks/subscriptions')).status).toBe(401);
    const byKey = await http(server.url, 'POST', '/webhooks/subscriptions', { apiKey: server.apiKey, body });
    expect(byKey.status).toBe(403);
    expect(byKey.body.detail).toMatch(/bearer token/);
    expect((await http(server.url, 'POST', '/webhooks/subscriptions', { token: member, body })).status).toBe(403);
    const owner = await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'owner@example.com', role: 'owner' });
    const created = await http(server.url, 'POST', '/webhooks/subscriptions', { token: owner.access_token, body });
    expect(created.status).toBe(200);
    const id = created.body.id;
    for (const [method, path, payload] of [
      ['PATCH', `/webhooks/subscriptions/${id}`, { disabled: true }],
      ['POST', `/webhooks/subscriptions/${id}/recover`, { since: '2020-01-01T00:00:00Z' }],
      ['DELETE', `/webhooks/subscriptions/${id}`, undefined],
    ] as const) {
      expect([path, (await http(server.url, method, path, { apiKey: server.apiKey, body: payload })).status]).toEqual([path, 403]);
      expect([path, (await http(server.url, method, path, { token: member, body: payload })).status]).toEqual([path, 403]);
    }
    for (const auth of [{ apiKey: server.apiKey }, { token: member }]) {
      expect((await http(server.url, 'GET', '/webhooks/subscriptions', auth)).body.map((s: any) => s.id)).toContain(id);
      expect((await http(server.url, 'GET', `/webhooks/subscriptions/${id}`, auth)).status).toBe(200);
      expect((await http(server.url, 'GET', '/webhooks/messages', auth)).status).toBe(200);
    }
    const gql = await graphql(server.url, 'mutation($id: ID!) { deleteWebhookSubscription(id: $id) { id } }', { id }, { apiKey: server.apiKey });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const other = await server.running.core.services.organizations.createOrganization('Other org');
    expect((await http(server.url, 'GET', `/webhooks/subscriptions/${id}`, { apiKey: other.api_key })).status).toBe(404);
    expect((await http(server.url, 'GET', '/webhooks/subscriptions', { apiKey: other.api_key })).body).toEqual([]);
    expect((await http(server.url, 'GET', '/webhooks/messages', { apiKey: other.api_key })).body).toEqual([]);
    const otherAdmin = await server.running.core.services.auth.issueToken({ organizationId: other.organization.id, email: 'a@other.example', role: 'admin' });
    expect((await http(server.url, 'DELETE', `/webhooks/subscriptions/${id}`, { token: otherAdmin.access_token })).status).toBe(404);
    const [message] = (await http(server.url, 'GET', '/webhooks/messages?limit=1', { apiKey: server.apiKey })).body;
    expect((await http(server.url, 'GET', `/webhooks/messages/${message.id}`, { apiKey: other.api_key })).status).toBe(404);
  });

  test('validation and SSRF at subscription time (operator defaults): HTTPS only, known event types, secrets, no private targets', async () => {
    const strictToken = await strict.running.core.services.auth.issueToken({
      organizationId: (await graphql(strict.url, '{ viewer { organization { id } } }', {}, { apiKey: strict.apiKey })).body.data.viewer.organization.id,
      email: 'admin@example.com',
      role: 'admin',
    });
    const post = (body: unknown) => http(strict.url, 'POST', '/webhooks/subscriptions', { token: strictToken.access_token, body });
    const refused = async (body: unknown, loc: (string | number)[], msg: RegExp) => {
      const response = await post(body);
      expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), 422]);
      expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, msg: expect.stringMatching(msg) })]));
    };
    const types = ['collection.created'];
    await refused({ url: 'http://example.com/hook', event_types: types }, ['body', 'url'], /https/);
    for (const url of ['https://localhost:9/hook', 'https://127.0.0.1/hook', 'https://[::1]/hook', 'https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/', 'https://[::ffff:127.0.0.1]/']) {
      await refused({ url, event_types: types }, ['body', 'url'], /private, loopback or link-local/);
    }
    await refused({ url: 'https://example.com/hook', event_types: ['collection.exploded'] }, ['body', 'event_types', 0], /.+/);
    await refused({ url: 'https://example.com/hook', event_types: [] }, ['body', 'event_types'], /.+/);
    await refused({ url: 'https://example.com/hook', event_types: types, secret: 'short' }, ['body', 'secret'], /.+/);
    await refused({ url: 'https://example.com/hook', event_types: types, secret: 'x'.repeat(23) }, ['body', 'secret'], /24/);
    await refused({ url: 'https://example.com/hook', event_types: types, secret: 'whsec_this is long enough but not base64!' }, ['body', 'secret'], /base64/);
    await refused({ url: 'https://example.com/hook', event_types: types.concat('collection.exploded') }, ['body', 'event_types', 1], /.+/);
    await refused({ event_types: types }, ['body', 'url'], /.+/);

    const chosen = Buffer.alloc(32, 3).toString('base64');
    const accepted = await post({ url: 'https://example.com/hook', event_types: [...types, ...types], secret: chosen });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      id: expect.any(String),
      url: 'https://example.com/hook',
      filter_types: types,
      disabled: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      health_status: 'unknown',
    });
    const detail = await http(strict.url, 'GET', `/webhooks/subscriptions/${accepted.body.id}?include_secret=true`, { apiKey: strict.apiKey });
    expect(detail.body.secret).toBe(`whsec_${chosen}`);
    expect(detail.body.delivery_attempts).toEqual([]);
    const patched = await http(strict.url, 'PATCH', `/webhooks/subscriptions/${accepted.body.id}`, { token: strictToken.access_token, body: { url: 'https://127.0.0.1/x' } });
    expect(patched.status).toBe(422);
    expect(patched.body.detail[0]).toEqual({ loc: ['body', 'url'], msg: expect.stringMatching(/private, loopback or link-local/), type: 'url_not_allowed' });
    const patchedTypes = await http(strict.url, 'PATCH', `/webhooks/subscriptions/${accepted.body.id}`, { token: strictToken.access_token, body: { event_types: ['nope'] } });
    expect(patchedTypes.status).toBe(422);
    expect(patchedTypes.body.detail[0]).toMatchObject({ loc: ['body', 'event_types', 0], msg: expect.any(String), type: expect.any(String) });
    const badQuery = await http(strict.url, 'GET', '/webhooks/messages?event_types=nope', { apiKey: strict.apiKey });
    expect(badQuery.status).toBe(422);
    expect(badQuery.body.detail[0].loc.slice(0, 2)).toEqual(['query', 'event_types']);
    expect((await http(strict.url, 'GET', '/webhooks/subscriptions/not-a-uuid', { apiKey: strict.apiKey })).status).toBe(422);
    expect(openapi('WebhookSubscriptionDetail', detail.body)).toEqual([]);

    // Any text of 24 characters or more is a secret: its UTF-8 bytes are the key, returned as whsec_ + base64.
    const text = 'my own webhook secret, 2025!';
    const own = await post({ url: 'https://example.com/own', event_types: types, secret: text });
    expect(own.status).toBe(200);
    const ownSecret = (await http(strict.url, 'GET', `/webhooks/subscriptions/${own.body.id}?include_secret=true`, { apiKey: strict.apiKey })).body.secret;
    expect(ownSecret).toBe(`whsec_${Buffer.from(text).toString('base64')}`);
    expect(ownSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    // The generated secret: whsec_ + the base64 of 24 random bytes.
    const generated = await post({ url: 'https://example.com/generated', event_types: types });
    expect((await http(strict.url, 'GET', `/webhooks/subscriptions/${generated.body.id}?include_secret=true`, { apiKey: strict.apiKey })).body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);

    // GraphQL refuses the same things, with the same locations.
    const gql = await graphql(
      strict.url,
      'mutation($input: WebhookSubscriptionCreateInput!) { createWebhookSubscription(input: $input) { id } }',
      { input: { url: 'https://example.com/x', eventTypes: ['nope'] } },
      { token: strictToken.access_token },
    );
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    // The secret is sealed at rest: the database never holds it in clear.
    const rows = await strict.running.core.database.orm.em.getConnection().execute<{ sealed_secret: string }[]>('select sealed_secret from webhook_subscriptions');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.sealed_secret).not.toContain(chosen);
  });

  test('an event is recorded with its state change: a change that rolls back leaves no message', async () => {
    const call = withKey();
    const count = async () => (await call('GET', '/webhooks/messages?event_types=collection.created&limit=1000')).body.length;
    const before = await count();
    await call('POST', '/collections', { name: 'Unique one', readable_id: 'webhook-unique' });
    const duplicate = await call('POST', '/collections', { name: 'Unique two', readable_id: 'webhook-unique' });
    expect(duplicate.status).toBe(409);
    expect(await count()).toBe(before + 1);
  });
});
