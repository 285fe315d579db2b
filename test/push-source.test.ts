import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { graphql, startTestServer, type Deployment, type TestServer } from './support/harness.js';
import { api, eventually, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** A pushed entity in the REST shape; `word` makes its text findable by keyword search. */
function entity(i: number, word = `marker${i}`) {
  return {
    id: `doc-${i}`,
    name: `Document ${i}`,
    text: `Document ${i} talks about ${word} and the quarterly planning of the platform team.`,
    entity_type: 'note',
    breadcrumbs: [{ entity_id: `space-${i % 3}`, name: `Space ${i % 3}`, entity_type: 'space' }],
    fields: { index: i, tags: ['pushed', `group-${i % 3}`], nested: { owner: 'ada' } },
    web_url: `https://notes.example.com/docs/${i}`,
    updated_at: '2025-06-01T12:00:00Z',
  };
}

const ALL = Array.from({ length: 30 }, (_, i) => entity(i));
const FINISHED = ['COMPLETED', 'FAILED', 'CANCELLED'];

describe.each<Deployment>(['servers', 'embedded'])('the push source (%s deployment)', (deployment) => {
  let server: TestServer;
  let call: Api;
  let connectionId: string;
  const collection = 'push-target';

  const push = (body: unknown, id = connectionId) => call('POST', `/source-connections/${id}/entities`, body);
  const searchIds = async (query: string): Promise<string[]> => {
    const response = await call('POST', `/collections/${collection}/search/instant`, { query, retrieval_strategy: 'keyword', limit: 10 });
    expect(response.status).toBe(200);
    return response.body.results.map((result: { entity_id: string }) => result.entity_id);
  };
  /** Pushes, expects the job to start at once, and returns it finished. */
  const pushAndWait = async (body: unknown) => {
    const response = await push(body);
    expect(response.status).toBe(200);
    expect(response.body.job).toMatchObject({ trigger: 'push', source_connection_id: connectionId });
    return waitForJob(call, connectionId, response.body.job.id, FINISHED);
  };

  beforeAll(async () => {
    server = await startTestServer({ deployment, env: FAST_WORKER });
    call = api(server.url, server.apiKey);
    expect((await call('POST', '/collections', { name: 'Push target', readable_id: collection })).status).toBe(200);
    const created = await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: collection, name: 'Notes app' });
    expect(created.status).toBe(200);
    connectionId = created.body.id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('the catalog lists push; a new push connection has nothing to sync until entities are sent', async () => {
    const source = (await call('GET', '/sources/push')).body;
    expect(source).toMatchObject({ short_name: 'push', auth_methods: ['direct'], federated_search: false, supports_continuous: false, config_fields: { fields: [] } });
    const record = (await call('GET', `/source-connections/${connectionId}`)).body;
    expect(record).toMatchObject({ short_name: 'push', status: 'pending_sync', is_authenticated: true, entity_count: 0, sync: { total_runs: 0 } });
    expect((await call('GET', `/source-connections/${connectionId}/jobs`)).body).toEqual([]);
  });

  test('a first push inserts every entity as one job with exact counts, and search finds them', async () => {
    const response = await push({ entities: ALL });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ source_connection_id: connectionId, entity_count: 30, deletion_count: 0 });
    expect(['PENDING', 'RUNNING']).toContain(response.body.job.status);
    const job = await waitForJob(call, connectionId, response.body.job.id, FINISHED);
    expect(job).toMatchObject({ status: 'COMPLETED', trigger: 'push', entities_inserted: 30, entities_updated: 0, entities_deleted: 0, entities_skipped: 0, error: null });
    expect(job.chunks_written).toBeGreaterThanOrEqual(30);

    const batch = (await call('GET', `/source-connections/${connectionId}/push-batches/${response.body.id}`)).body;
    expect(batch).toMatchObject({ id: response.body.id, entity_count: 30, job: { id: job.id, status: 'COMPLETED', entities_inserted: 30 } });
    expect((await call('GET', `/source-connections/${connectionId}`)).body).toMatchObject({ status: 'active', entity_count: 30, entities: { by_type: { note: { count: 30 } } } });

    const hit = (await call('POST', `/collections/${collection}/search/instant`, { query: 'marker7', retrieval_strategy: 'keyword', limit: 1 })).body.results[0];
    expect(hit).toMatchObject({
      entity_id: 'doc-7',
      name: 'Document 7',
      breadcrumbs: [{ entity_id: 'space-1', name: 'Space 1', entity_type: 'space' }],
      web_url: 'https://notes.example.com/docs/7',
      raw_source_fields: { index: 7, tags: ['pushed', 'group-1'], nested: { owner: 'ada' } },
      service_system_metadata: { source_name: 'push', entity_type: 'note', original_entity_id: 'doc-7', sync_id: connectionId, sync_job_id: job.id },
    });
    expect(hit.textual_representation).toContain('marker7');
    expect(new Date(hit.updated_at).toISOString()).toBe('2025-06-01T12:00:00.000Z');
  });

  test('pushing again updates only what changed; unchanged entities are skipped', async () => {
    const changed = ALL.map((e, i) => (i === 4 ? entity(4, 'zeppelin') : e));
    const job = await pushAndWait({ entities: changed });
    expect(job).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 1, entities_deleted: 0, entities_skipped: 29 });
    expect(await searchIds('zeppelin')).toEqual(['doc-4']);
    expect(await searchIds('marker4')).toEqual([]);
  });

  test('deletions remove entities from the connection and from search; unknown ids are ignored', async () => {
    expect(await searchIds('marker9')).toEqual(['doc-9']);
    const job = await pushAndWait({ deletions: ['doc-9', 'never-sent', 'doc-9'] });
    expect(job).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 0, entities_deleted: 1 });
    expect(await searchIds('marker9')).toEqual([]);
    expect((await call('GET', `/source-connections/${connectionId}`)).body.entity_count).toBe(29);
  });

  test('one request can insert, update and delete at once', async () => {
    const job = await pushAndWait({ entities: [entity(100, 'aardvark'), entity(5, 'bumblebee')], deletions: ['doc-6'] });
    expect(job).toMatchObject({ status: 'COMPLETED', entities_inserted: 1, entities_updated: 1, entities_deleted: 1, entities_skipped: 0 });
    expect(await searchIds('aardvark')).toEqual(['doc-100']);
    expect(await searchIds('bumblebee')).toEqual(['doc-5']);
    expect(await searchIds('marker6')).toEqual([]);
    // Defaults: the name is the id, the type push_entity, no link.
    const job2 = await pushAndWait({ entities: [{ id: 'bare-1', text: 'a bare entity about capybaras' }] });
    expect(job2).toMatchObject({ status: 'COMPLETED', entities_inserted: 1 });
    const hit = (await call('POST', `/collections/${collection}/search/instant`, { query: 'capybaras', retrieval_strategy: 'keyword', limit: 1 })).body.results[0];
    expect(hit).toMatchObject({ entity_id: 'bare-1', name: 'bare-1', breadcrumbs: [], web_url: '', raw_source_fields: {}, service_system_metadata: { entity_type: 'push_entity' } });
  });

  test('batches sent while one syncs wait, then sync one at a time, oldest first', async () => {
    const big = Array.from({ length: 120 }, (_, i) => entity(1000 + i, 'walrus'));
    const first = await push({ entities: [...big, entity(2000, 'first-version-wombat')] });
    const second = await push({ entities: [entity(2000, 'second-version-wombat')] });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.job).toBe(null); // the first batch's job is still PENDING or RUNNING
    const firstJob = await waitForJob(call, connectionId, first.body.job.id, FINISHED);
    expect(firstJob).toMatchObject({ status: 'COMPLETED', entities_inserted: 121 });
    const started = await eventually(() => call('GET', `/source-connections/${connectionId}/push-batches/${second.body.id}`), (r) => r.body.job !== null);
    const secondJob = await waitForJob(call, connectionId, started.body.job.id, FINISHED);
    expect(secondJob).toMatchObject({ status: 'COMPLETED', trigger: 'push', entities_inserted: 0, entities_updated: 1 });
    expect(new Date(secondJob.started_at).getTime()).toBeGreaterThanOrEqual(new Date(firstJob.completed_at).getTime());
    expect(await searchIds('second-version-wombat')).toEqual(['doc-2000']);
  });

  test('every job reports the sync events of any job', async () => {
    const job = await pushAndWait({ entities: [entity(3000, 'eventful')] });
    const messages = await eventually(
      () => call('GET', '/webhooks/messages?event_types=sync.pending&event_types=sync.running&event_types=sync.completed'),
      (r) => r.body.filter((m: any) => m.payload.sync_job_id === job.id).length === 3,
    );
    const completed = messages.body.find((m: any) => m.event_type === 'sync.completed' && m.payload.sync_job_id === job.id);
    expect(completed.payload).toMatchObject({ source_type: 'push', source_connection_id: connectionId, collection_readable_id: collection, entities_inserted: 1, entities_updated: 0, entities_deleted: 0 });
  });

  test('bad entities are a 422 naming each at its place, and nothing is stored', async () => {
    const jobsBefore = (await call('GET', `/source-connections/${connectionId}/jobs`)).body.length;
    const { text: _missing, ...noText } = entity(3);
    const schemaErrors = await push({ entities: [entity(0), entity(1), entity(2), noText, { ...entity(4), colour: 'red' }, { ...entity(5), breadcrumbs: [{ name: 'x' }] }] });
    expect(schemaErrors.status).toBe(422);
    expect(schemaErrors.body.detail).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'entities', 3, 'text'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'entities', 4, 'colour'], msg: expect.any(String), type: 'extra_forbidden' },
        { loc: ['body', 'entities', 5, 'breadcrumbs', 0, 'entity_id'], msg: 'Field required', type: 'missing' },
      ]),
    );
    expect(schemaErrors.body.detail).toHaveLength(3);

    const typeErrors = await push({ entities: [{ ...entity(0), text: 42 }, { ...entity(1), id: '' }, { ...entity(2), updated_at: 'yesterday' }, { ...entity(3), web_url: 'not a url' }] });
    expect(typeErrors.status).toBe(422);
    expect(typeErrors.body.detail.map((d: any) => [d.loc, d.type])).toEqual([
      [['body', 'entities', 0, 'text'], 'string_type'],
      [['body', 'entities', 1, 'id'], 'string_too_short'],
      [['body', 'entities', 2, 'updated_at'], 'date_time_parsing'],
      [['body', 'entities', 3, 'web_url'], 'uri_parsing'],
    ]);

    // Text the service cannot store is refused at the door, for every field of every request (issue 12-08).
    const unstorable = await push({ entities: [entity(0), { ...entity(1), text: 'nul \u0000 inside' }] });
    expect(unstorable.body.detail.map((d: any) => [d.loc, d.type])).toEqual([[['body', 'entities', 1, 'text'], 'string_unicode']]);

    // Rules of the service: unique ids, not both upserted and deleted, bounded fields.
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i++) deep = { deeper: deep };
    const ruleErrors = await push({
      entities: [entity(0), entity(1), entity(0), { ...entity(3), fields: { deep } }],
      deletions: ['doc-0'],
    });
    expect(ruleErrors.status).toBe(422);
    expect(ruleErrors.body.detail.map((d: any) => [d.loc.slice(0, 4), d.type])).toEqual([
      [['body', 'entities', 2, 'id'], 'value_error'],
      [['body', 'entities', 3, 'fields'], 'value_error'],
      [['body', 'deletions', 0], 'value_error'],
    ]);
    expect(ruleErrors.body.detail[0].msg).toMatch(/already at entities\[0\]/);

    expect((await push({})).body.detail).toEqual([{ loc: ['body', 'entities'], msg: 'Send at least one entity or one deletion', type: 'too_short' }]);
    expect((await push({ entities: [], deletions: [] })).status).toBe(422);
    expect((await push({ entities: [entity(0)], extra: true })).body.detail).toEqual([{ loc: ['body', 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
    expect((await call('GET', `/source-connections/${connectionId}/jobs`)).body).toHaveLength(jobsBefore);
  });

  test('a request is limited to 1,000 entities and 1,000 deletions (422) and to the body limit (413)', async () => {
    const tooMany = await push({ entities: Array.from({ length: 1001 }, (_, i) => ({ id: `e${i}`, text: 'x' })) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail).toEqual([{ loc: ['body', 'entities'], msg: expect.stringMatching(/at most 1000 items, not 1001/), type: 'too_long' }]);
    const tooManyDeletions = await push({ deletions: Array.from({ length: 1001 }, (_, i) => `e${i}`) });
    expect(tooManyDeletions.body.detail).toEqual([{ loc: ['body', 'deletions'], msg: expect.any(String), type: 'too_long' }]);

    const tooLarge = await push({ entities: [{ id: 'huge', text: 'y'.repeat(server.config.maxBodyBytes + 1) }] });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({ detail: 'Request body too large' });
  });

  test('another organization\'s connection is a 404; a connection of another source is a 409', async () => {
    const other = await server.running.core.services.organizations.createOrganization('Other org');
    const otherCall = api(server.url, other.api_key);
    const [batch] = [(await push({ deletions: ['nothing'] })).body];
    expect((await otherCall('POST', `/source-connections/${connectionId}/entities`, { entities: [entity(1, 'intruder')] })).status).toBe(404);
    expect((await otherCall('GET', `/source-connections/${connectionId}/push-batches/${batch.id}`)).status).toBe(404);
    const viaGraphql = await graphql(server.url, 'mutation ($id: ID!) { pushEntities(sourceConnectionId: $id, deletions: ["x"]) { id } }', { id: connectionId }, { apiKey: other.api_key });
    expect(viaGraphql.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await push({ deletions: ['x'] }, '00000000-0000-4000-8000-00000000abcd')).status).toBe(404);
    expect((await call('GET', `/source-connections/${connectionId}/push-batches/00000000-0000-4000-8000-00000000abcd`)).status).toBe(404);
    expect((await call('POST', '/source-connections/not-a-uuid/entities', { deletions: ['x'] })).status).toBe(422);
    expect((await http401(server.url, connectionId)).status).toBe(401);

    const stub = await call('POST', '/source-connections', {
      short_name: 'stub',
      readable_collection_id: collection,
      authentication: { credentials: { token: 't' } },
      config: { entity_count: 1 },
      sync_immediately: false,
    });
    const refused = await push({ entities: [entity(1)] }, stub.body.id);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/only push connections accept entities/);
    await waitForJob(call, connectionId, batch.job.id, FINISHED);
  });

  test('a push connection cannot be run nor scheduled: it only syncs what it is sent', async () => {
    const run = await call('POST', `/source-connections/${connectionId}/run`);
    expect(run.status).toBe(409);
    expect(run.body.detail).toMatch(/receives its entities by push/);
    const scheduled = await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: collection, schedule: { cron: '0 * * * *' } });
    expect(scheduled.status).toBe(422);
    expect(scheduled.body.detail).toEqual([{ loc: ['body', 'schedule', 'cron'], msg: expect.stringMatching(/cannot have a schedule/), type: 'value_error' }]);
    const patched = await call('PATCH', `/source-connections/${connectionId}`, { schedule: { cron: '0 * * * *' } });
    expect(patched.status).toBe(422);
    expect(patched.body.detail[0].loc).toEqual(['body', 'schedule', 'cron']);
    const viaGraphql = await graphql(server.url, 'mutation ($id: ID!) { runSync(sourceConnectionId: $id) { id } }', { id: connectionId }, { apiKey: server.apiKey });
    expect(viaGraphql.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  test('GraphQL: pushEntities and pushBatch, with the same rules', async () => {
    const mutation = `mutation ($id: ID!, $entities: [PushEntityInput!], $deletions: [String!]) {
      pushEntities(sourceConnectionId: $id, entities: $entities, deletions: $deletions) { id entityCount deletionCount job { id status trigger } } }`;
    const pushed = await graphql(
      server.url,
      mutation,
      {
        id: connectionId,
        entities: [{ id: 'gql-1', name: 'From GraphQL', text: 'sent over graphql about narwhals', breadcrumbs: [{ entityId: 'root', name: 'Root' }], fields: { via: 'graphql' }, createdAt: '2025-01-02T03:04:05Z' }],
        deletions: ['doc-10'],
      },
      { apiKey: server.apiKey },
    );
    expect(pushed.body.errors).toBeUndefined();
    const batch = pushed.body.data!.pushEntities;
    expect(batch).toMatchObject({ entityCount: 1, deletionCount: 1, job: { trigger: 'push' } });
    const job = await waitForJob(call, connectionId, batch.job.id, FINISHED);
    expect(job).toMatchObject({ status: 'COMPLETED', entities_inserted: 1, entities_deleted: 1 });
    expect(await searchIds('narwhals')).toEqual(['gql-1']);
    const read = await graphql(server.url, 'query ($c: ID!, $id: ID!) { pushBatch(sourceConnectionId: $c, id: $id) { id job { status entitiesInserted } } }', { c: connectionId, id: batch.id }, { apiKey: server.apiKey });
    expect(read.body.data!.pushBatch).toEqual({ id: batch.id, job: { status: 'COMPLETED', entitiesInserted: 1 } });

    const bad = await graphql(server.url, mutation, { id: connectionId, entities: [{ id: 'x'.repeat(513), text: 't' }] }, { apiKey: server.apiKey });
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', detail: [{ loc: ['entities', 0, 'id'], type: 'string_too_long' }] });
  });
});

async function http401(url: string, connectionId: string) {
  return fetch(`${url}/source-connections/${connectionId}/entities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"deletions":["x"]}' });
}

describe('the push source across processes (servers deployment)', () => {
  let apiServer: TestServer | undefined;
  let workerServer: TestServer | undefined;
  afterAll(async () => {
    await workerServer?.stop();
    await apiServer?.stop();
  });

  test('accepted batches survive without a worker and a worker that died mid-batch: the batch gets a new job', async () => {
    apiServer = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
    const call = api(apiServer.url, apiServer.apiKey);
    await call('POST', '/collections', { name: 'Durable push', readable_id: 'durable-push' });
    const connection = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'durable-push' })).body;
    const first = (await call('POST', `/source-connections/${connection.id}/entities`, { entities: [entity(1, 'orca'), entity(2)] })).body;
    const second = (await call('POST', `/source-connections/${connection.id}/entities`, { entities: [entity(1, 'beluga')], deletions: ['doc-2'] })).body;
    expect(first.job.status).toBe('PENDING');
    expect(second.job).toBe(null);

    // A worker took the first job and died: RUNNING, with a heartbeat long gone.
    const db = new pg.Client({ connectionString: apiServer.databaseUrl });
    await db.connect();
    await db.query(`update sync_jobs set status = 'RUNNING', started_at = now(), heartbeat_at = now() - interval '1 hour' where id = $1`, [first.job.id]);
    await db.end();

    workerServer = await startTestServer({
      deployment: 'servers',
      roles: { api: false, worker: true },
      databaseUrl: apiServer.databaseUrl,
      redisPrefix: apiServer.redisPrefix,
      dataDir: apiServer.dataDir,
      env: { ...FAST_WORKER, CATCHMENT_SYNC_STALE_SECONDS: '2' },
    });
    const lost = await waitForJob(call, connection.id, first.job.id, FINISHED);
    expect(lost).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/stopped responding/) });
    const retried = await eventually(() => call('GET', `/source-connections/${connection.id}/push-batches/${first.id}`), (r) => r.body.job !== null && r.body.job.id !== first.job.id);
    expect(await waitForJob(call, connection.id, retried.body.job.id, FINISHED)).toMatchObject({ status: 'COMPLETED', entities_inserted: 2 });
    const next = await eventually(() => call('GET', `/source-connections/${connection.id}/push-batches/${second.id}`), (r) => r.body.job !== null);
    expect(await waitForJob(call, connection.id, next.body.job.id, FINISHED)).toMatchObject({ status: 'COMPLETED', entities_inserted: 0, entities_updated: 1, entities_deleted: 1 });
    const search = (query: string) => call('POST', '/collections/durable-push/search/instant', { query, retrieval_strategy: 'keyword', limit: 5 });
    expect((await search('beluga')).body.results.map((r: any) => r.entity_id)).toEqual(['doc-1']);
    expect((await search('orca')).body.results).toEqual([]);
    expect((await search('marker2')).body.results).toEqual([]);
  });
});
