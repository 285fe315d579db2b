import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rss2 } from '../src/connectors/rss/test-feeds.js';
import { TestSite } from '../src/connectors/web/test-site.js';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

const SKIPPED = `query($id: ID!, $limit: Int!, $offset: Int!) {
  syncJobs(sourceConnectionId: $id, limit: 2) { id entitiesInserted entitiesSkipped skipped(limit: $limit, offset: $offset) { count listed byReason { reason count } items { entityId reason detail } } }
}`;

describe('a sync job records what its source left out, and why', () => {
  let server: TestServer;
  let call: Api;
  let root: string;
  let connection: { id: string };
  let job: { id: string };
  let site: TestSite;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'catchment-skipped-'));
    const folder = path.join(root, 'docs');
    mkdirSync(path.join(folder, 'guides'), { recursive: true });
    writeFileSync(path.join(folder, 'readme.md'), '# Readme\nHow to start.\n');
    writeFileSync(path.join(folder, 'guides', 'setup.md'), '# Setup\nInstall it.\n');
    writeFileSync(path.join(folder, 'archive.zip'), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]));
    writeFileSync(path.join(folder, 'blob'), Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7, 8]));
    writeFileSync(path.join(folder, 'guides', 'huge.txt'), 'word '.repeat(400));
    writeFileSync(path.join(folder, 'debug.log'), 'a log line\n');
    site = await new TestSite().start();
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root, CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS: 'true' } });
    call = api(server.url, server.apiKey);
    await call('POST', '/collections', { name: 'Docs', readable_id: 'docs' });
    connection = (
      await call('POST', '/source-connections', {
        short_name: 'local_folder',
        readable_collection_id: 'docs',
        config: { path: folder, exclude: ['*.log'], max_file_bytes: 1000 },
        sync_immediately: false,
      })
    ).body;
    job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    await waitForJob(call, connection.id, job.id, ['COMPLETED']);
  });
  afterAll(async () => {
    await server?.stop();
    await site?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const expectedItems = [
    { entity_id: 'archive.zip', reason: 'unsupported file type', detail: null },
    { entity_id: 'blob', reason: 'binary content or no text', detail: null },
    { entity_id: 'debug.log', reason: 'excluded by include/exclude', detail: null },
    { entity_id: 'guides/huge.txt', reason: 'larger than max_file_bytes', detail: '2000 bytes' },
  ];

  test('REST: the job counts them in entities_skipped, and …/skipped lists each with its reason, counted by reason', async () => {
    const [restJob] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    // Two files and the folder holding one are written; the four skipped files count as skipped.
    expect(restJob).toMatchObject({ id: job.id, entities_inserted: 3, entities_skipped: 4 });
    const skipped = await call('GET', `/source-connections/${connection.id}/jobs/${job.id}/skipped`);
    expect(skipped.status).toBe(200);
    expect(skipped.body.job_id).toBe(job.id);
    expect(skipped.body.count).toBe(4);
    expect(skipped.body.listed).toBe(4);
    expect([...skipped.body.items].sort((a, b) => (a.entity_id < b.entity_id ? -1 : 1))).toEqual(expectedItems);
    expect(skipped.body.by_reason).toEqual(
      expect.arrayContaining(['unsupported file type', 'binary content or no text', 'excluded by include/exclude', 'larger than max_file_bytes'].map((reason) => ({ reason, count: 1 }))),
    );
    expect(skipped.body.by_reason).toHaveLength(4);

    // Paged by limit and offset, without overlap.
    const first = (await call('GET', `/source-connections/${connection.id}/jobs/${job.id}/skipped?limit=3`)).body.items;
    const rest = (await call('GET', `/source-connections/${connection.id}/jobs/${job.id}/skipped?limit=3&offset=3`)).body.items;
    expect(first).toHaveLength(3);
    expect([...first, ...rest]).toEqual(skipped.body.items);
  });

  test('REST errors: a bad limit is 422, another connection\'s job or another organization is 404', async () => {
    const bad = await call('GET', `/source-connections/${connection.id}/jobs/${job.id}/skipped?limit=0`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'limit']);
    const otherConnection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'docs', config: { path: root }, sync_immediately: false })).body;
    const elsewhere = await call('GET', `/source-connections/${otherConnection.id}/jobs/${job.id}/skipped`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ detail: `Sync job "${job.id}" not found` });
    const other = await server.running.core.services.organizations.createOrganization('Other org');
    const otherCall = api(server.url, other.api_key);
    expect((await otherCall('GET', `/source-connections/${connection.id}/jobs/${job.id}/skipped`)).status).toBe(404);
  });

  test('GraphQL: SyncJob.skipped counts by reason and lists the items', async () => {
    const result = await call('POST', '/graphql', { query: SKIPPED, variables: { id: connection.id, limit: 100, offset: 0 } });
    expect(result.body.errors).toBeUndefined();
    const graphqlJob = result.body.data.syncJobs.find((j: { id: string }) => j.id === job.id);
    expect(graphqlJob).toMatchObject({ entitiesInserted: 3, entitiesSkipped: 4 });
    expect(graphqlJob.skipped.count).toBe(4);
    expect(graphqlJob.skipped.byReason.find((r: { reason: string }) => r.reason === 'larger than max_file_bytes')).toEqual({ reason: 'larger than max_file_bytes', count: 1 });
    expect(graphqlJob.skipped.items.map((item: { entityId: string }) => item.entityId).sort()).toEqual(expectedItems.map((item) => item.entity_id));
    const invalid = await call('POST', '/graphql', { query: SKIPPED, variables: { id: connection.id, limit: 10, offset: -1 } });
    expect(invalid.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  test('a second run skips the same files again (unchanged files are skipped too, and counted apart)', async () => {
    const second = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    await waitForJob(call, connection.id, second.id, ['COMPLETED']);
    const skipped = (await call('GET', `/source-connections/${connection.id}/jobs/${second.id}/skipped`)).body;
    expect(skipped.count).toBe(4);
    const [restJob] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    // Three unchanged entities kept plus the four files left out.
    expect(restJob).toMatchObject({ id: second.id, entities_inserted: 0, entities_skipped: 7 });
  });

  test('an rss source, against feeds served on loopback, reports the items and feeds it leaves out through the same API', async () => {
    const day = new Date(Date.UTC(2025, 2, 1));
    const podcast = rss2('Sky podcast', site.url, [
      { id: 'ep1', title: 'Episode 1', html: '<p>Show notes about the Moon.</p>', date: day, enclosure: { url: `${site.url}/ep1.mp3`, type: 'audio/mpeg', length: 1000 } },
      { id: 'blank', title: '', html: '', date: day },
    ]);
    site.pages.set('/podcast.xml', { body: podcast, contentType: 'application/rss+xml' });
    site.pages.set('/news.xml', { body: rss2('News', site.url, [{ id: 'n1', title: 'Comet', html: '<p>A comet.</p>', date: day }]), contentType: 'application/rss+xml' });
    await call('POST', '/collections', { name: 'Feeds', readable_id: 'feeds' });
    const feeds = (await call('POST', '/source-connections', { short_name: 'rss', readable_collection_id: 'feeds', config: { feed_urls: [`${site.url}/podcast.xml`, `${site.url}/news.xml`] }, sync_immediately: false })).body;
    site.pages.set('/news.xml', { body: '', status: 503 }); // down after the connection was made: left out, the run goes on
    const run = (await call('POST', `/source-connections/${feeds.id}/run`)).body;
    expect(await waitForJob(call, feeds.id, run.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED', entities_inserted: 2, entities_skipped: 3 });
    const skipped = (await call('GET', `/source-connections/${feeds.id}/jobs/${run.id}/skipped`)).body;
    expect(skipped.items).toEqual([
      { entity_id: `${site.url}/ep1.mp3`, reason: 'enclosure not read', detail: 'audio/mpeg, 1000 bytes' },
      { entity_id: 'blank', reason: 'no text', detail: null },
      { entity_id: `${site.url}/news.xml`, reason: 'unreadable', detail: `${site.url}/news.xml answered HTTP 503` },
    ]);
    expect(skipped.by_reason).toEqual([{ reason: 'enclosure not read', count: 1 }, { reason: 'no text', count: 1 }, { reason: 'unreadable', count: 1 }]);
  });
});
