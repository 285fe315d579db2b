import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { http, startTestServer, type Deployment, type TestServer } from './support/harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe.each<Deployment>(['embedded', 'servers'])('collections over REST (%s deployment)', (deployment) => {
  let server: TestServer;
  let key: string;
  const call = (method: string, path: string, body?: unknown) => http(server.url, method, path, { apiKey: key, body });

  beforeAll(async () => {
    server = await startTestServer({ deployment });
    key = server.apiKey;
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('create returns every field of Collection with a generated readable_id and the embedder metadata', async () => {
    const { status, body } = await call('POST', '/collections', { name: 'Engineering Docs' });
    expect(status).toBe(200);
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Engineering Docs',
      readable_id: expect.stringMatching(/^engineering-docs-[a-z0-9]{6}$/),
      sync_config: null,
      created_at: expect.stringMatching(ISO),
      modified_at: expect.stringMatching(ISO),
      organization_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      created_by_email: null,
      modified_by_email: null,
      status: 'NEEDS SOURCE',
      vector_size: 100,
      embedding_model_name: 'catchment-word-vectors-100d-sif2',
      source_connection_summaries: [],
    });
    const fetched = await call('GET', `/collections/${body.readable_id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(body);
  });

  test('an explicit readable_id is kept, and a duplicate is a 409 with detail (never a 500)', async () => {
    const first = await call('POST', '/collections', { name: 'Explicit one', readable_id: 'explicit-id-1' });
    expect(first.status).toBe(200);
    expect(first.body.readable_id).toBe('explicit-id-1');
    const duplicate = await call('POST', '/collections', { name: 'Explicit two', readable_id: 'explicit-id-1' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ detail: expect.stringContaining('explicit-id-1') });
    // The original is untouched.
    expect((await call('GET', '/collections/explicit-id-1')).body.name).toBe('Explicit one');
  });

  test.each([
    [{ name: 'abc' }, ['body', 'name'], 'string_too_short'],
    [{ name: 'x'.repeat(65) }, ['body', 'name'], 'string_too_long'],
    [{}, ['body', 'name'], 'missing'],
    [{ name: 1234 }, ['body', 'name'], 'string_type'],
    [{ name: 'Valid name', readable_id: 'Not_Valid' }, ['body', 'readable_id'], 'string_pattern_mismatch'],
    [{ name: 'Valid name', readable_id: 'trailing-' }, ['body', 'readable_id'], 'string_pattern_mismatch'],
    [{ name: 'Valid name', sync_config: { behavior: { skip_guardrails: 'yes' } } }, ['body', 'sync_config', 'behavior', 'skip_guardrails'], 'bool_type'],
    [{ name: 'Valid name', sync_config: { handlers: { unknown_flag: true } } }, ['body', 'sync_config', 'handlers', 'unknown_flag'], 'extra_forbidden'],
    [{ name: 'Valid name', sync_config: { destinations: { target_destinations: ['not-a-uuid'] } } }, ['body', 'sync_config', 'destinations', 'target_destinations', 0], 'uuid_parsing'],
    [{ name: 'Valid name', id: 'client-chosen' }, ['body', 'id'], 'extra_forbidden'],
  ])('create with %j → 422 at %j (%s)', async (body, loc, type) => {
    const response = await call('POST', '/collections', body);
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type, msg: expect.any(String) })]));
    // Only the problem itself, not the alternatives of the schema it did not match.
    expect(response.body.detail.filter((item: { msg: string }) => /must be null/i.test(item.msg))).toEqual([]);
  });

  test('sync_config is validated member by member and stored with defaults filled in', async () => {
    const { status, body } = await call('POST', '/collections', {
      name: 'Configured',
      sync_config: { destinations: { target_destinations: ['0190a0a0-0000-7000-8000-000000000001'] }, behavior: { skip_hash_comparison: true } },
    });
    expect(status).toBe(200);
    expect(body.sync_config).toEqual({
      destinations: { skip_vector_db: false, target_destinations: ['0190a0a0-0000-7000-8000-000000000001'], exclude_destinations: null },
      handlers: null,
      cursor: null,
      behavior: { skip_hash_comparison: true, replay_from_arf: false, skip_guardrails: false },
    });
  });

  test('patch changes only the fields sent; readable_id cannot change; sync_config null clears it', async () => {
    const created = (await call('POST', '/collections', { name: 'Before rename', sync_config: { cursor: { skip_load: true } } })).body;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const renamed = await call('PATCH', `/collections/${created.readable_id}`, { name: 'After rename' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'After rename', readable_id: created.readable_id, sync_config: created.sync_config, created_at: created.created_at });
    expect(Date.parse(renamed.body.modified_at)).toBeGreaterThan(Date.parse(created.modified_at));

    const configOnly = await call('PATCH', `/collections/${created.readable_id}`, { sync_config: { handlers: { enable_raw_data_handler: false } } });
    expect(configOnly.body.name).toBe('After rename');
    expect(configOnly.body.sync_config).toEqual({
      destinations: null,
      handlers: { enable_vector_handlers: true, enable_raw_data_handler: false, enable_entity_db_handler: true },
      cursor: null,
      behavior: null,
    });

    const cleared = await call('PATCH', `/collections/${created.readable_id}`, { sync_config: null });
    expect(cleared.body.sync_config).toBeNull();
    expect(cleared.body.name).toBe('After rename');

    const untouched = await call('PATCH', `/collections/${created.readable_id}`, {});
    expect(untouched.body.modified_at).toBe(cleared.body.modified_at);
    const immutable = await call('PATCH', `/collections/${created.readable_id}`, { readable_id: 'something-else' });
    expect(immutable.status).toBe(422);
    expect(immutable.body.detail[0]).toMatchObject({ loc: ['body', 'readable_id'], type: 'extra_forbidden' });
    const tooShort = await call('PATCH', `/collections/${created.readable_id}`, { name: 'abc' });
    expect(tooShort.status).toBe(422);
    expect((await call('GET', `/collections/${created.readable_id}`)).body.name).toBe('After rename');
  });

  test('list is newest first, pages with skip and limit, and searches name or readable_id case-insensitively', async () => {
    const prefix = `zz${Date.now().toString(36)}`;
    const made = [];
    for (const suffix of ['alpha', 'beta', 'gamma']) {
      made.push((await call('POST', '/collections', { name: `${prefix} ${suffix}`, readable_id: `${prefix}-${suffix}-id` })).body);
    }
    const all = await call('GET', `/collections?search=${prefix.toUpperCase()}`);
    expect(all.status).toBe(200);
    expect(all.body.map((c: { name: string }) => c.name)).toEqual([`${prefix} gamma`, `${prefix} beta`, `${prefix} alpha`]);
    const page = await call('GET', `/collections?search=${prefix}&skip=1&limit=1`);
    expect(page.body.map((c: { name: string }) => c.name)).toEqual([`${prefix} beta`]);
    const byReadableId = await call('GET', `/collections?search=beta-id`);
    expect(byReadableId.body.map((c: { readable_id: string }) => c.readable_id)).toContain(`${prefix}-beta-id`);
    // LIKE wildcards in the search are literal.
    expect((await call('GET', `/collections?search=${prefix}%25`)).body).toEqual([]);
    const everything = await call('GET', '/collections?limit=1000');
    expect(everything.body.length).toBeGreaterThanOrEqual(3);
  });

  test.each([
    ['skip=-1', ['query', 'skip'], 'greater_than_equal'],
    ['limit=0', ['query', 'limit'], 'greater_than_equal'],
    ['limit=1001', ['query', 'limit'], 'less_than_equal'],
    ['limit=ten', ['query', 'limit'], 'int_type'],
    ['skip=1.5', ['query', 'skip'], 'int_type'],
  ])('list with %s → 422 at %j', async (query, loc, type) => {
    const response = await call('GET', `/collections?${query}`);
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc, type })]);
  });

  test('delete returns the deleted collection, then it is gone (404 on every path)', async () => {
    const created = (await call('POST', '/collections', { name: 'Short lived' })).body;
    const deleted = await call('DELETE', `/collections/${created.readable_id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(created);
    for (const [method, body] of [['GET'], ['PATCH', { name: 'Resurrect' }], ['DELETE']] as const) {
      const response = await call(method, `/collections/${created.readable_id}`, body);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: expect.any(String) });
    }
    // The readable_id is free again.
    expect((await call('POST', '/collections', { name: 'Reborn', readable_id: created.readable_id })).status).toBe(200);
  });
});
