import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createClient } from 'graphql-sse';
import { startTestServer, type Deployment, type TestServer } from './support/harness.js';
import { api, eventually, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** Folders the stub makes for `count` entities at depth 2 with fan-out 10. */
function stubFolders(count: number): number {
  const level1 = new Set<number>();
  const level2 = new Set<number>();
  for (let i = 0; i < count; i++) {
    level1.add(Math.floor(i / 100));
    level2.add(Math.floor(i / 10));
  }
  return level1.size + level2.size;
}

describe.each<Deployment>(['servers', 'embedded'])('sources, connections and syncs (%s deployment)', (deployment) => {
  let server: TestServer;
  let call: Api;
  let collection: string;

  beforeAll(async () => {
    server = await startTestServer({ deployment, env: FAST_WORKER });
    call = api(server.url, server.apiKey);
    collection = (await call('POST', '/collections', { name: 'Sync target', readable_id: 'sync-target' })).body.readable_id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  const createStub = async (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const response = await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: collection,
      name: 'Stub',
      config,
      authentication: { credentials: { token: 'secret-token-value' } },
      ...extra,
    });
    expect(response.status).toBe(200);
    return response.body;
  };

  test('the catalog lists the stub source with its field schemas; an unknown source is a 404', async () => {
    const list = await call('GET', '/sources');
    expect(list.status).toBe(200);
    const stub = list.body.find((s: { short_name: string }) => s.short_name === 'stub');
    expect(stub).toMatchObject({
      name: 'Stub',
      auth_methods: ['direct', 'oauth_browser', 'oauth_byoc', 'oauth_token'],
      supports_continuous: true,
      federated_search: false,
      auth_fields: { fields: [expect.objectContaining({ name: 'token', is_secret: true, required: true })] },
    });
    expect(stub.config_fields.fields).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'entity_count', type: 'integer', default: 100 })]));
    expect((await call('GET', '/sources/stub')).body).toEqual(stub);
    expect((await call('GET', '/sources/nope')).status).toBe(404);
  });

  test('create syncs at once; the job completes with true counts; re-syncs insert, update and delete exactly what changed', async () => {
    const connection = await createStub({ entity_count: 30, hierarchy_depth: 2 });
    expect(connection).toMatchObject({ short_name: 'stub', readable_collection_id: collection, is_authenticated: true, auth_method: 'direct' });
    expect(JSON.stringify(connection)).not.toContain('secret-token-value');
    const [first] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    const done = await waitForJob(call, connection.id, first.id, ['COMPLETED', 'FAILED']);
    expect(done).toMatchObject({ status: 'COMPLETED', entities_inserted: 30 + stubFolders(30), entities_updated: 0, entities_deleted: 0, error: null });
    expect(done.chunks_written).toBeGreaterThanOrEqual(done.entities_inserted);
    expect(done.duration_seconds).toBeGreaterThanOrEqual(0);

    const record = (await call('GET', `/source-connections/${connection.id}`)).body;
    expect(record).toMatchObject({ status: 'active', entity_count: 30 + stubFolders(30), sync: { total_runs: 1, successful_runs: 1, failed_runs: 0, last_job: { id: first.id, status: 'COMPLETED' } } });
    expect(record.entities.by_type.stub_document.count).toBe(30);
    const coll = (await call('GET', `/collections/${collection}`)).body;
    expect(coll.status).toBe('ACTIVE');
    expect(coll.source_connection_summaries).toEqual(expect.arrayContaining([{ short_name: 'stub', name: 'Stub' }]));

    // Every tenth entity changes with the revision: 0, 10, 20.
    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 30, hierarchy_depth: 2, revision: 1 } });
    const second = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    expect(await waitForJob(call, connection.id, second.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 3, entities_deleted: 0 });

    await call('PATCH', `/source-connections/${connection.id}`, { config: { entity_count: 25, hierarchy_depth: 2, revision: 1 } });
    const third = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    expect(await waitForJob(call, connection.id, third.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 0, entities_deleted: 5 });

    // A forced full sync reads everything: nothing changed, so everything is kept.
    const full = (await call('POST', `/source-connections/${connection.id}/run?force_full_sync=true`)).body;
    expect(full.force_full_sync).toBe(true);
    expect(await waitForJob(call, connection.id, full.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 0, entities_deleted: 0, entities_skipped: 25 + stubFolders(30) - 0 });

    // skip_hash_comparison forces every entity through again.
    const forced = (await call('POST', `/source-connections/${connection.id}/run?force_full_sync=true`, { sync_config: { behavior: { skip_hash_comparison: true } } })).body;
    const forcedDone = await waitForJob(call, connection.id, forced.id, ['COMPLETED', 'FAILED']);
    expect(forcedDone.entities_updated).toBeGreaterThanOrEqual(25);

    const jobs = (await call('GET', `/source-connections/${connection.id}/jobs?limit=2`)).body;
    expect(jobs.map((j: { id: string }) => j.id)).toEqual([forced.id, full.id]);
    await call('DELETE', `/source-connections/${connection.id}`);
  });

  test('one run at a time: concurrent run calls give exactly one job, the others 409', async () => {
    const connection = await createStub({ entity_count: 40, delay_ms: 20 }, { sync_immediately: false });
    const responses = await Promise.all(Array.from({ length: 6 }, () => call('POST', `/source-connections/${connection.id}/run`)));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect(responses.find((r) => r.status === 409)!.body).toEqual({ detail: expect.stringMatching(/already running/) });
    const job = responses.find((r) => r.status === 200)!.body;
    await call('POST', `/source-connections/${connection.id}/jobs/${job.id}/cancel`);
    await waitForJob(call, connection.id, job.id, ['CANCELLED']);
    await call('DELETE', `/source-connections/${connection.id}`);
  });

  test('cancel mid-run: CANCELLING at once, then CANCELLED with the processed entities kept; finished jobs cannot be cancelled', async () => {
    const connection = await createStub({ entity_count: 400, delay_ms: 10, hierarchy_depth: 0 }, { sync_immediately: false });
    const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    await eventually(() => waitForJob(call, connection.id, job.id, ['RUNNING']), (j) => j.entities_inserted > 0);
    const cancelling = await call('POST', `/source-connections/${connection.id}/jobs/${job.id}/cancel`);
    expect(cancelling.status).toBe(200);
    expect(cancelling.body.status).toBe('CANCELLING');
    const cancelled = await waitForJob(call, connection.id, job.id, ['CANCELLED'], 20_000);
    expect(cancelled.entities_inserted).toBeGreaterThan(0);
    expect(cancelled.entities_inserted).toBeLessThan(400);
    const record = (await call('GET', `/source-connections/${connection.id}`)).body;
    expect(record.entity_count).toBe(cancelled.entities_inserted);
    expect((await call('POST', `/source-connections/${connection.id}/jobs/${job.id}/cancel`)).status).toBe(409);
    expect((await call('POST', `/source-connections/${connection.id}/jobs/00000000-0000-7000-8000-000000000000/cancel`)).status).toBe(404);
    await call('DELETE', `/source-connections/${connection.id}`);
  });

  test('a failing source fails the job with its error; refused credentials mean needs_reauth', async () => {
    const failing = await createStub({ entity_count: 50, fail_after: 20, hierarchy_depth: 0 });
    const [job] = (await call('GET', `/source-connections/${failing.id}/jobs`)).body;
    const failed = await waitForJob(call, failing.id, job.id, ['FAILED', 'COMPLETED']);
    expect(failed).toMatchObject({ status: 'FAILED', error: 'Stub source failed after 20 entities' });
    expect((await call('GET', `/source-connections/${failing.id}`)).body).toMatchObject({ status: 'error', error_message: 'Stub source failed after 20 entities' });

    const revoked = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, authentication: { credentials: { token: 'revoked' } }, config: { entity_count: 3 } })).body;
    const [revokedJob] = (await call('GET', `/source-connections/${revoked.id}/jobs`)).body;
    await waitForJob(call, revoked.id, revokedJob.id, ['FAILED']);
    expect((await call('GET', `/source-connections/${revoked.id}`)).body.status).toBe('needs_reauth');
    // New credentials (direct auth) can be patched in.
    const patched = await call('PATCH', `/source-connections/${revoked.id}`, { authentication: { credentials: { token: 'fresh' } } });
    expect(patched.status).toBe(200);
    await call('DELETE', `/source-connections/${failing.id}`);
    await call('DELETE', `/source-connections/${revoked.id}`);
  });

  test.each([
    [{ short_name: 'nope' }, ['body', 'short_name']],
    [{ readable_collection_id: 'missing-collection' }, ['body', 'readable_collection_id']],
    [{ config: { entity_count: 'many' } }, ['body', 'config', 'entity_count']],
    [{ config: { unknown_option: 1 } }, ['body', 'config', 'unknown_option']],
    [{ authentication: { credentials: {} } }, ['body', 'authentication', 'credentials', 'token']],
    [{ authentication: { credentials: { token: 'rejected' } } }, ['body', 'authentication', 'credentials']],
    [{ authentication: { redirect_uri: 'https://app.example/callback' } }, ['body', 'authentication']],
    [{ schedule: { cron: 'every day' } }, ['body', 'schedule', 'cron']],
    [{ unexpected: true }, ['body', 'unexpected']],
  ])('create with %j → 422 at %j', async (override, loc) => {
    const response = await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: collection,
      authentication: { credentials: { token: 'ok' } },
      sync_immediately: false,
      ...override,
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc })]));
  });

  test('oauth_token creates an authenticated connection at once', async () => {
    const response = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: collection, authentication: { access_token: 'tok' }, sync_immediately: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ auth_method: 'oauth_token', status: 'pending_sync', is_authenticated: true });
    await call('DELETE', `/source-connections/${response.body.id}`);
  });

  test('a cron schedule runs syncs on time and shows the next run', async () => {
    const connection = await createStub({ entity_count: 5, hierarchy_depth: 0 }, { sync_immediately: false, schedule: { cron: '*/2 * * * * *' } });
    expect(Date.parse(connection.schedule.next_run)).toBeGreaterThan(Date.now() - 1000);
    const jobs = await eventually(() => call('GET', `/source-connections/${connection.id}/jobs`), (r) => r.body.some((j: any) => j.trigger === 'schedule' && j.status === 'COMPLETED'), 15_000);
    expect(jobs.body[0].trigger).toBe('schedule');
    const unscheduled = await call('PATCH', `/source-connections/${connection.id}`, { schedule: { cron: null } });
    expect(unscheduled.body.schedule).toMatchObject({ cron: null, next_run: null });
    await call('DELETE', `/source-connections/${connection.id}`);
  });

  test('deleting a connection mid-sync stops it, removes records at once and its chunks soon after; another organization sees 404', async () => {
    const connection = await createStub({ entity_count: 300, delay_ms: 10, hierarchy_depth: 0 });
    const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    await eventually(() => waitForJob(call, connection.id, job.id, ['RUNNING']), (j) => j.entities_inserted > 0);
    const other = await server.running.core.services.organizations.createOrganization('Other org');
    const otherCall = api(server.url, other.api_key);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/jobs'], ['POST', '/run'], ['POST', `/jobs/${job.id}/cancel`]] as const) {
      expect((await otherCall(method, `/source-connections/${connection.id}${path}`, method === 'PATCH' ? { name: 'x' } : undefined)).status).toBe(404);
    }
    expect((await otherCall('GET', '/source-connections')).body).toEqual([]);

    const started = Date.now();
    const deleted = await call('DELETE', `/source-connections/${connection.id}`);
    expect(deleted.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(16_000);
    expect((await call('GET', `/source-connections/${connection.id}`)).status).toBe(404);
    const vectors = await server.running.core.vectors();
    const collectionId = (await call('GET', `/collections/${collection}`)).body.id;
    await eventually(() => vectors.count(collectionId, [{ conditions: [{ field: 'service_system_metadata.sync_id', operator: 'equals', value: connection.id }] }]), (n) => n === 0);
  });

  test('the syncJobProgress subscription streams a job to completion', async () => {
    const connection = await createStub({ entity_count: 60, hierarchy_depth: 0, delay_ms: 5 }, { sync_immediately: false });
    const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    const client = createClient({ url: `${server.url}/graphql/stream`, headers: { 'x-api-key': server.apiKey }, retryAttempts: 0 });
    const statuses: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const dispose = client.subscribe(
        { query: `subscription { syncJobProgress(jobId: "${job.id}") { status entitiesInserted } }` },
        {
          next: (value: any) => {
            if (value.errors) return reject(new Error(JSON.stringify(value.errors)));
            statuses.push(value.data.syncJobProgress.status);
            if (value.data.syncJobProgress.status === 'COMPLETED') {
              dispose();
              resolve();
            }
          },
          error: reject,
          complete: () => resolve(),
        },
      );
    });
    client.dispose();
    expect(statuses).toContain('COMPLETED');
    expect(statuses.length).toBeGreaterThan(1);
    await call('DELETE', `/source-connections/${connection.id}`);
  });

  test('deleting the collection deletes its connections and their jobs', async () => {
    const target = (await call('POST', '/collections', { name: 'Short lived target' })).body.readable_id;
    const response = await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: target, authentication: { credentials: { token: 't' } }, config: { entity_count: 200, delay_ms: 10 } });
    expect((await call('DELETE', `/collections/${target}`)).status).toBe(200);
    expect((await call('GET', `/source-connections/${response.body.id}`)).status).toBe(404);
    expect((await call('GET', `/source-connections?collection=${target}`)).body).toEqual([]);
  });
});
