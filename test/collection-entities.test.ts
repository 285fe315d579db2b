import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

const LISTING = `query($readableId: String!, $filter: [FilterGroupInput!], $limit: Int!, $offset: Int!) {
  collectionEntities(readableId: $readableId, filter: $filter, limit: $limit, offset: $offset) {
    total byType { entityType count } bySource { sourceConnectionId sourceName count } items { entityId entityType sourceName breadcrumbs { name } }
  }
}`;

describe.each(['embedded', 'servers'] as const)('a collection\'s entities, listed page by page under the search filter and counted by type and source (%s)', (deployment) => {
  let server: TestServer;
  let call: Api;
  let root: string;
  let folderConnection: { id: string };
  let stubConnection: { id: string };

  const list = (body: unknown, caller: Api = call) => caller('POST', '/collections/things/entities/query', body);

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'catchment-entities-'));
    const folder = path.join(root, 'docs');
    mkdirSync(path.join(folder, 'guides'), { recursive: true });
    for (let i = 0; i < 7; i++) writeFileSync(path.join(folder, 'guides', `guide-${i}.md`), `# Guide ${i}\nStep ${i}.\n`);
    writeFileSync(path.join(folder, 'readme.md'), '# Readme\n');
    server = await startTestServer({ deployment, env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root } });
    call = api(server.url, server.apiKey);
    await call('POST', '/collections', { name: 'Things', readable_id: 'things' });
    folderConnection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'things', config: { path: folder }, sync_immediately: false })).body;
    stubConnection = (
      await call('POST', '/source-connections', {
        short_name: 'stub',
        readable_collection_id: 'things',
        authentication: { credentials: { token: 't' } },
        config: { entity_count: 5, hierarchy_depth: 0, size_mix: 'small' },
        sync_immediately: false,
      })
    ).body;
    for (const connection of [folderConnection, stubConnection]) {
      const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
      await waitForJob(call, connection.id, job.id, ['COMPLETED']);
    }
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('counts by type and source are exact, and pages cover everything without overlap', async () => {
    const all = await list({ limit: 1000 });
    expect(all.status).toBe(200);
    // 8 files and the guides folder from the folder; the stub's entities.
    const stubCount = all.body.by_source.find((s: { source_connection_id: string }) => s.source_connection_id === stubConnection.id)?.count;
    expect(all.body.by_source).toEqual(
      expect.arrayContaining([{ source_connection_id: folderConnection.id, source_name: 'local_folder', count: 9 }, { source_connection_id: stubConnection.id, source_name: 'stub', count: stubCount }]),
    );
    expect(stubCount).toBeGreaterThan(0);
    expect(all.body.total).toBe(9 + stubCount);
    expect(all.body.items).toHaveLength(all.body.total);
    const byType = Object.fromEntries(all.body.by_type.map((t: { entity_type: string; count: number }) => [t.entity_type, t.count]));
    const counted: Record<string, number> = {};
    for (const item of all.body.items) counted[item.entity_type] = (counted[item.entity_type] ?? 0) + 1;
    expect(byType).toEqual(counted);
    expect(byType.file).toBe(8);
    expect(byType.folder).toBe(1);

    const seen: string[] = [];
    for (let offset = 0; offset < all.body.total; offset += 4) {
      const page = await list({ limit: 4, offset });
      expect(page.body.total).toBe(all.body.total);
      seen.push(...page.body.items.map((item: { source_connection_id: string; entity_id: string }) => `${item.source_connection_id}/${item.entity_id}`));
    }
    expect(new Set(seen).size).toBe(all.body.total);
    expect(seen).toEqual(all.body.items.map((item: { source_connection_id: string; entity_id: string }) => `${item.source_connection_id}/${item.entity_id}`));
  });

  test('the search filter applies, and the counts follow it', async () => {
    const guides = await list({ filter: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'guides' }] }] });
    expect(guides.body.total).toBe(7);
    expect(guides.body.by_source).toEqual([{ source_connection_id: folderConnection.id, source_name: 'local_folder', count: 7 }]);
    expect(guides.body.items.every((item: { entity_id: string }) => item.entity_id.startsWith('guides/guide-'))).toBe(true);

    const some = await list({
      filter: [
        { conditions: [{ field: 'entity_id', operator: 'in', value: ['guides/guide-1.md', 'guides/guide-2.md'] }] },
        { conditions: [{ field: 'name', operator: 'contains', value: 'readme' }, { field: 'service_system_metadata.source_name', operator: 'equals', value: 'local_folder' }] },
      ],
    });
    expect(some.body.items.map((item: { entity_id: string }) => item.entity_id)).toEqual(['guides/guide-1.md', 'guides/guide-2.md', 'readme.md']);

    const folders = await list({ filter: [{ conditions: [{ field: 'service_system_metadata.entity_type', operator: 'equals', value: 'folder' }, { field: 'service_system_metadata.sync_id', operator: 'equals', value: folderConnection.id }] }] });
    expect(folders.body).toMatchObject({ total: 1, by_type: [{ entity_type: 'folder', count: 1 }], items: [{ entity_id: 'guides' }] });

    const future = await list({ filter: [{ conditions: [{ field: 'updated_at', operator: 'greater_than', value: '2999-01-01T00:00:00Z' }] }] });
    expect(future.body.total).toBe(0);
  });

  test('GraphQL answers the same', async () => {
    const result = await call('POST', '/graphql', {
      query: LISTING,
      variables: { readableId: 'things', filter: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'guides' }] }], limit: 2, offset: 0 },
    });
    expect(result.body.errors).toBeUndefined();
    const listing = result.body.data.collectionEntities;
    expect(listing.total).toBe(7);
    expect(listing.byType).toEqual([{ entityType: 'file', count: 7 }]);
    expect(listing.items).toEqual([
      { entityId: 'guides/guide-0.md', entityType: 'file', sourceName: 'local_folder', breadcrumbs: [{ name: 'guides' }] },
      { entityId: 'guides/guide-1.md', entityType: 'file', sourceName: 'local_folder', breadcrumbs: [{ name: 'guides' }] },
    ]);
  });

  test('bad input is 422 with its location, another organization gets 404', async () => {
    const unknownField = await list({ filter: [{ conditions: [{ field: 'colour', operator: 'equals', value: 'x' }] }] });
    expect(unknownField.status).toBe(422);
    const chunkIndex = await list({ filter: [{ conditions: [{ field: 'service_system_metadata.chunk_index', operator: 'equals', value: 0 }] }] });
    expect(chunkIndex.status).toBe(422);
    expect(chunkIndex.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'filter', 0, 'conditions', 0, 'field'] })]);
    const badDate = await list({ filter: [{ conditions: [{ field: 'created_at', operator: 'greater_than', value: 'yesterday' }] }] });
    expect(badDate.status).toBe(422);
    expect((await list({ limit: 0 })).status).toBe(422);

    const other = await server.running.core.services.organizations.createOrganization('Other org');
    const otherCall = api(server.url, other.api_key);
    const hidden = await list({}, otherCall);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ detail: expect.stringContaining('things') });
    expect((await call('POST', '/collections/none-such/entities/query', {})).status).toBe(404);
  });
});
