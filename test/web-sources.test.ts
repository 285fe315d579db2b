import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TestRepository } from '../src/connectors/git/test-repository.js';
import { atom, rss2, type TestFeedItem } from '../src/connectors/rss/test-feeds.js';
import { htmlPage, TestSite } from '../src/connectors/web/test-site.js';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** The git, web and rss sources end to end: REST API, worker, pipeline and instant search, against real sources on this machine. */
describe('git, web and rss sources', () => {
  let server: TestServer;
  let call: Api;
  let root: string;
  let site: TestSite;
  const collection = 'web-sources';

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'web-sources-')));
    site = await new TestSite().start();
    server = await startTestServer({ deployment: 'servers', env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root } });
    call = api(server.url, server.apiKey);
    expect((await call('POST', '/collections', { name: 'Web sources', readable_id: collection })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    await site?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function connect(shortName: string, config: Record<string, unknown>) {
    const response = await call('POST', '/source-connections', { short_name: shortName, readable_collection_id: collection, name: shortName, config });
    expect(response.status).toBe(200);
    const [job] = (await call('GET', `/source-connections/${response.body.id}/jobs`)).body;
    return { id: response.body.id as string, first: await waitForJob(call, response.body.id, job.id, ['COMPLETED', 'FAILED']) };
  }

  async function resync(connectionId: string) {
    const job = (await call('POST', `/source-connections/${connectionId}/run`)).body;
    return waitForJob(call, connectionId, job.id, ['COMPLETED', 'FAILED']);
  }

  async function search(query: string): Promise<string[]> {
    const response = await call('POST', `/collections/${collection}/search/instant`, { query, retrieval_strategy: 'keyword', limit: 5 });
    expect(response.status).toBe(200);
    return response.body.results.map((result: { entity_id: string }) => result.entity_id);
  }

  const counts = (job: Record<string, unknown>) => ({ status: job.status, inserted: job.entities_inserted, updated: job.entities_updated, deleted: job.entities_deleted, error: job.error });

  test('git: files, folders and commits; a new commit re-reads only what changed and removes deleted files', async () => {
    const repository = new TestRepository(path.join(root, 'repo'));
    repository
      .write('README.md', '# Orbit\n\nOrbit computes satellite passes.\n')
      .write('src/orbit.ts', 'export const period = (radius: number) => 2 * Math.PI * Math.sqrt(radius ** 3);\n')
      .write('docs/guide.md', 'How to read the launch window tables.\n')
      .commit('Initial orbit model');
    repository.write('README.md', '# Orbit\n\nOrbit computes satellite passes and eclipses.\n').commit('Mention eclipses');

    const { id, first } = await connect('git', { url: repository.directory, branch: 'main' });
    // 3 files, 2 folders (src, docs), 2 commits.
    expect(counts(first)).toEqual({ status: 'COMPLETED', inserted: 7, updated: 0, deleted: 0, error: null });
    expect((await call('GET', `/source-connections/${id}`)).body.entities.by_type).toMatchObject({ file: { count: 3 }, folder: { count: 2 }, commit: { count: 2 } });

    repository
      .write('src/orbit.ts', 'export const period = (radius: number) => 2 * Math.PI * Math.sqrt(radius ** 3); // Kepler\n')
      .write('src/comet.py', 'def perihelion(orbit):\n    return orbit.semi_major_axis * (1 - orbit.eccentricity)\n')
      .remove('docs/guide.md')
      .commit('Comets; the guide moves to the wiki');
    // Inserted: comet.py and the commit; updated: orbit.ts; deleted: guide.md and its now empty folder.
    expect(counts(await resync(id))).toEqual({ status: 'COMPLETED', inserted: 2, updated: 1, deleted: 2, error: null });
    expect((await search('perihelion eccentricity'))[0]).toBe('file:src/comet.py');
    expect(await search('launch window tables')).not.toContain('file:docs/guide.md');
    expect(counts(await resync(id))).toEqual({ status: 'COMPLETED', inserted: 0, updated: 0, deleted: 0, error: null });

    // The repository disappears: a clear FAILED job, nothing removed.
    renameSync(repository.directory, `${repository.directory}-moved`);
    const failed = await resync(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatch(/does not exist/);
    expect((await call('GET', `/source-connections/${id}`)).body.entity_count).toBe(7 + 2 - 2);
    renameSync(`${repository.directory}-moved`, repository.directory);
  });

  test('git: validation reaches the repository at create time (422 with its message)', async () => {
    const response = await call('POST', '/source-connections', { short_name: 'git', readable_collection_id: collection, config: { url: path.join(root, 'repo'), branch: 'nope' } });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: expect.arrayContaining(['config', 'branch']), msg: 'The repository has no branch "nope"' })]);
    const outside = await call('POST', '/source-connections', { short_name: 'git', readable_collection_id: collection, config: { url: tmpdir() } });
    expect(outside.status).toBe(422);
    expect(outside.body.detail[0].msg).toMatch(/outside the folders/);
  });

  test('web: crawl with sitemap and robots.txt; a re-sync sends conditional requests and applies exact changes', async () => {
    site.pages.set('/robots.txt', { body: `User-agent: *\nDisallow: /private/\nSitemap: ${site.url}/sitemap.xml\n`, contentType: 'text/plain' });
    site.pages.set('/sitemap.xml', { body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/archive/orphan.html</loc></url></urlset>`, contentType: 'application/xml' });
    site.pages.set('/', { body: htmlPage('Observatory', 'Welcome to the observatory.', ['/docs/intro.html', '/private/secret.html']) });
    site.pages.set('/docs/intro.html', { body: htmlPage('Introduction', 'Telescopes need calibration.') });
    site.pages.set('/archive/orphan.html', { body: htmlPage('Archive', 'Old observation logs.') });
    site.pages.set('/private/secret.html', { body: htmlPage('Secret', 'The private rota.') });

    const { id, first } = await connect('web', { start_urls: [`${site.url}/`] });
    expect(counts(first)).toEqual({ status: 'COMPLETED', inserted: 3, updated: 0, deleted: 0, error: null });
    expect(site.paths()).not.toContain('/private/secret.html');
    expect(site.requests.every((request) => request.userAgent === 'Catchment')).toBe(true);

    site.requests.length = 0;
    site.pages.set('/docs/intro.html', { body: htmlPage('Introduction', 'Telescopes need calibration and a spectrograph.', ['/docs/spectrograph.html']) });
    site.pages.set('/docs/spectrograph.html', { body: htmlPage('Spectrograph', 'Our echelle spectrograph splits starlight.') });
    site.pages.delete('/archive/orphan.html');
    expect(counts(await resync(id))).toEqual({ status: 'COMPLETED', inserted: 1, updated: 1, deleted: 1, error: null });
    expect(site.requests.find((request) => request.path === '/')).toMatchObject({ conditional: true, status: 304 });
    expect(site.paths()).not.toContain('/private/secret.html');
    expect((await search('echelle starlight'))[0]).toBe(`${site.url}/docs/spectrograph.html`);

    const unreachable = await call('POST', '/source-connections', { short_name: 'web', readable_collection_id: collection, config: { start_urls: ['http://127.0.0.1:9/'] } });
    expect(unreachable.status).toBe(422);
    expect(unreachable.body.detail[0]).toMatchObject({ loc: expect.arrayContaining(['config', 'start_urls']), msg: expect.stringMatching(/^Cannot fetch http:\/\/127\.0\.0\.1:9\/robots\.txt/) });
  });

  test('rss: RSS 2.0 and Atom items; a re-sync reads new and re-dated items; dropping a feed removes its items', async () => {
    const day = (n: number) => new Date(Date.UTC(2025, 2, n, 9));
    const news: TestFeedItem[] = [
      { id: 'n1', title: 'Comet sighted', html: '<p>A bright comet.</p>', date: day(1), author: 'Vera Rubin' },
      { id: 'n2', title: 'Eclipse', html: '<p>The eclipse and the tides.</p>', date: day(2) },
    ];
    site.pages.set('/news.xml', { body: rss2('Observatory news', site.url, news), contentType: 'application/rss+xml' });
    site.pages.set('/releases.atom', { body: atom('Releases', site.url, [{ id: 'urn:release:1', title: 'Catalogue 1.0', html: '<p>The star catalogue.</p>', date: day(3) }]), contentType: 'application/atom+xml' });

    const feeds = [`${site.url}/news.xml`, `${site.url}/releases.atom`];
    const { id, first } = await connect('rss', { feed_urls: feeds });
    expect(counts(first)).toEqual({ status: 'COMPLETED', inserted: 5, updated: 0, deleted: 0, error: null }); // 2 feeds, 3 items

    site.pages.set('/news.xml', { body: rss2('Observatory news', site.url, [{ ...news[1]!, html: '<p>Revised: the eclipse.</p>', date: day(5) }, { id: 'n3', title: 'Nova', html: '<p>A nova flared in Cygnus.</p>', date: day(6) }]), contentType: 'application/rss+xml' });
    expect(counts(await resync(id))).toEqual({ status: 'COMPLETED', inserted: 1, updated: 1, deleted: 0, error: null });
    expect((await search('nova Cygnus'))[0]).toBe('n3');
    expect(await search('bright comet')).toContain('n1'); // out of the feed's window, still searchable

    expect((await call('PATCH', `/source-connections/${id}`, { config: { feed_urls: [feeds[0]] } })).status).toBe(200);
    expect(counts(await resync(id))).toEqual({ status: 'COMPLETED', inserted: 0, updated: 0, deleted: 2, error: null });
    expect(await search('star catalogue')).not.toContain('urn:release:1');

    const notAFeed = await call('POST', '/source-connections', { short_name: 'rss', readable_collection_id: collection, config: { feed_urls: [`${site.url}/`] } });
    expect(notAFeed.status).toBe(422);
    expect(notAFeed.body.detail[0].msg).toMatch(/neither an RSS nor an Atom feed/);
  });
});
