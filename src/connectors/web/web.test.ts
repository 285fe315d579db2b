import { afterAll, beforeEach, describe, expect, test } from '@jest/globals';
import { SourceConfigError } from '../connector.js';
import { collectRun, connectionContext, connectorEnvironment, rejection } from '../connector-testing.js';
import { outlinePage } from './html-page.js';
import { WebClient } from '../../platform/http/web-client.js';
import connector, { type WebCursor } from './index.js';
import { htmlPage, TestSite } from './test-site.js';


const crawl = (config: Record<string, unknown>, cursor: WebCursor | null = null) => collectRun(connector, { config, cursor });

const bySkippedUrl = <Item extends { entityId: string }>(items: Item[]) => [...items].sort((a, b) => (a.entityId < b.entityId ? -1 : 1));

const validate = (config: Record<string, unknown>) => connector.validate(connectionContext(connector, { config }), connectorEnvironment());

let site: TestSite;
const u = (path: string) => `${site.url}${path}`;

beforeEach(async () => {
  await site?.stop();
  site = await new TestSite().start();
  site.pages.set('/robots.txt', { body: `User-agent: *\nDisallow: /private/\nSitemap: ${site.url}/sitemap.xml\n`, contentType: 'text/plain' });
  site.pages.set('/sitemap.xml', { body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/orphan.html</loc></url><url><loc>http://elsewhere.invalid/x</loc></url></urlset>`, contentType: 'application/xml' });
  site.pages.set('/', { body: htmlPage('Home', 'Welcome to the observatory.', ['/docs/intro.html', '/private/secret.html', 'http://elsewhere.invalid/page', 'mailto:x@example.com', '/docs/intro.html#part']) });
  site.pages.set('/docs/intro.html', { body: htmlPage('Introduction &amp; setup', 'Telescopes need calibration.', ['/docs/deep/one.html']), lastModified: new Date('2025-02-01T00:00:00Z') });
  site.pages.set('/docs/deep/one.html', { body: htmlPage('One', 'Level two.', ['/docs/deep/two.html']) });
  site.pages.set('/docs/deep/two.html', { body: htmlPage('Two', 'Level three, beyond the depth limit.') });
  site.pages.set('/orphan.html', { body: htmlPage('Orphan', 'Only the sitemap knows me.') });
  site.pages.set('/private/secret.html', { body: htmlPage('Secret', 'Never fetch this.') });
});
afterAll(() => site?.stop());

describe('web connector', () => {
  test('crawls the site within depth, from sitemaps too, obeying robots.txt, with titles, headings and path breadcrumbs', async () => {
    const run = await crawl({ start_urls: [u('/')], max_depth: 2 });
    expect(run.ids).toEqual([u('/'), u('/docs/deep/one.html'), u('/docs/intro.html'), u('/orphan.html')].sort());
    expect(site.paths()).not.toContain('/private/secret.html');
    expect(site.paths()).not.toContain('/docs/deep/two.html');
    expect(site.requests.every((request) => request.userAgent === 'Catchment')).toBe(true);
    expect(site.paths().filter((path) => path === '/docs/intro.html')).toHaveLength(1); // the #fragment link is the same page
    const intro = run.byId.get(u('/docs/intro.html'))!;
    expect(intro).toMatchObject({
      entityType: 'web_page',
      name: 'Introduction & setup',
      webUrl: u('/docs/intro.html'),
      breadcrumbs: [
        { entityId: u('/'), name: new URL(site.url).host, entityType: 'web_path' },
        { entityId: u('/docs/'), name: 'docs', entityType: 'web_path' },
      ],
      fields: expect.objectContaining({ title: 'Introduction & setup', headings: ['Introduction & setup'], content_type: 'text/html' }),
    });
    expect(intro.updatedAt!.toISOString()).toBe('2025-02-01T00:00:00.000Z');
    expect(intro.text).toContain('Telescopes need calibration.');
    expect(intro.text).not.toContain('<');
  });

  test('re-sync: conditional requests, 304 kept, changed pages read, vanished pages gone, pages down for a moment kept', async () => {
    const first = await crawl({ start_urls: [u('/')], max_depth: 2 });
    site.requests.length = 0;
    site.pages.set('/docs/intro.html', { body: htmlPage('Introduction', 'Telescopes need calibration and cooling.', ['/docs/deep/one.html', '/new.html']) });
    site.pages.set('/new.html', { body: htmlPage('New', 'A brand new page about spectrographs.') });
    site.pages.delete('/orphan.html');
    site.pages.set('/docs/deep/one.html', { body: '', status: 503 });
    const second = await crawl({ start_urls: [u('/')], max_depth: 2 }, first.cursor);
    expect(second.ids).toEqual([u('/docs/intro.html'), u('/new.html')]);
    expect(second.keeps).toEqual([u('/'), u('/docs/deep/one.html')].sort());
    expect(site.requests.find((request) => request.path === '/')).toMatchObject({ conditional: true, status: 304 });
    expect(site.paths()).not.toContain('/private/secret.html');
    expect(second.byId.get(u('/docs/intro.html'))!.text).toContain('cooling');
    // The page down for a moment keeps its copy, so it is not reported; the one the sitemap still lists is.
    expect(bySkippedUrl(second.skipped)).toEqual([
      { entityId: u('/orphan.html'), reason: 'gone', detail: 'answered HTTP 404' },
      { entityId: u('/private/secret.html'), reason: 'disallowed by robots.txt' },
    ]);
  });

  test('reports each page it leaves out, by URL and reason, and again while a page left out answers 304', async () => {
    const links = ['/private/secret.html', '/logo.png', '/big.html', '/missing.html', '/down.html', '/hangup.html', '/hidden.html', '/empty.html', '/away.html', '/broken.pdf', '/extra.html'];
    site.pages.set('/', { body: htmlPage('Home', 'Welcome to the observatory.', links) });
    site.pages.set('/logo.png', { body: '\u0089PNG not text', contentType: 'image/png' });
    site.pages.set('/big.html', { body: htmlPage('Big', 'word '.repeat(2000)) });
    site.pages.set('/down.html', { body: '', status: 503 });
    site.pages.set('/hangup.html', { body: '', hangUp: true });
    site.pages.set('/hidden.html', { body: '<html><head><meta name="robots" content="noindex"></head><body>Not for the index.</body></html>' });
    site.pages.set('/empty.html', { body: '<html><body><img src="/logo.png"></body></html>' });
    site.pages.set('/away.html', { body: '', redirectTo: `${u('/').replace('127.0.0.1', 'localhost')}` });
    site.pages.set('/broken.pdf', { body: '%PDF-1.7 no page tree here', contentType: 'application/pdf' });
    site.pages.set('/extra.html', { body: htmlPage('Extra', 'Past the page limit.') });
    const config = { start_urls: [u('/')], use_sitemap: false, max_pages: 10, max_page_bytes: 4096 };

    const first = await crawl(config);
    expect(first.ids).toEqual([u('/')]);
    expect(bySkippedUrl(first.skipped)).toEqual([
      { entityId: u('/away.html'), reason: 'redirected off the site', detail: u('/').replace('127.0.0.1', 'localhost') },
      { entityId: u('/big.html'), reason: 'larger than max_page_bytes', detail: 'more than 4096 bytes' },
      { entityId: u('/broken.pdf'), reason: 'text extraction failed', detail: expect.any(String) },
      { entityId: u('/down.html'), reason: 'unreadable', detail: 'answered HTTP 503' },
      { entityId: u('/empty.html'), reason: 'binary content or no text' },
      { entityId: u('/extra.html'), reason: 'beyond max_pages' },
      { entityId: u('/hangup.html'), reason: 'unreadable', detail: expect.stringMatching(/^Cannot fetch .*hangup\.html/) },
      { entityId: u('/hidden.html'), reason: 'marked noindex' },
      { entityId: u('/logo.png'), reason: 'unsupported file type', detail: 'image/png' },
      { entityId: u('/missing.html'), reason: 'gone', detail: 'answered HTTP 404' },
      { entityId: u('/private/secret.html'), reason: 'disallowed by robots.txt' },
    ]);
    expect(site.paths()).not.toContain('/extra.html');

    site.requests.length = 0;
    const second = await crawl(config, first.cursor);
    expect(site.requests.filter((request) => request.status === 304).map((request) => request.path).sort()).toEqual(['/', '/broken.pdf', '/empty.html', '/hidden.html', '/logo.png']);
    expect(bySkippedUrl(second.skipped).map(({ entityId, reason }) => ({ entityId, reason }))).toEqual(bySkippedUrl(first.skipped).map(({ entityId, reason }) => ({ entityId, reason })));
  });

  test('max_pages bounds the crawl', async () => {
    const run = await crawl({ start_urls: [u('/')], max_depth: 5, max_pages: 2, use_sitemap: false });
    expect(run.ids).toHaveLength(2);
    expect(site.paths().filter((path) => path.endsWith('.html') || path === '/')).toHaveLength(2);
  });

  test('noindex pages are not entities; nofollow pages are not followed; Crawl-delay is waited between requests', async () => {
    site.pages.set('/robots.txt', { body: 'User-agent: Catchment\nCrawl-delay: 0.05\nDisallow: /private/\n', contentType: 'text/plain' });
    site.pages.set('/', { body: '<html><head><title>Hub</title><meta name="robots" content="noindex"></head><body><a href="/stop.html">stop</a></body></html>' });
    site.pages.set('/stop.html', { body: '<html><head><title>Stop</title><meta name="robots" content="nofollow"></head><body>Stop here.<a href="/docs/intro.html">x</a></body></html>' });
    const started = Date.now();
    const run = await crawl({ start_urls: [u('/')], use_sitemap: false, concurrency: 4 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45); // one 50 ms wait between the two pages
    expect(run.ids).toEqual([u('/stop.html')]);
    expect(site.paths()).not.toContain('/docs/intro.html');
  });

  test('validation fetches robots.txt and every start URL', async () => {
    await expect(validate({ start_urls: [u('/')] })).resolves.toBeUndefined();
    const missing = await rejection(validate({ start_urls: [u('/nope.html')] }));
    expect(missing).toBeInstanceOf(SourceConfigError);
    expect(missing).toMatchObject({ field: 'start_urls', message: `${u('/nope.html')} answered HTTP 404` });
    expect(await rejection(validate({ start_urls: [u('/private/secret.html')] }))).toMatchObject({ field: 'start_urls', message: expect.stringContaining('robots.txt') });
    expect(await rejection(validate({ start_urls: ['ftp://example.com/'] }))).toMatchObject({ field: 'start_urls' });
    expect(await rejection(validate({ start_urls: ['http://user:secret@example.com/'] }))).toMatchObject({ field: 'start_urls' });
    expect(await rejection(validate({ start_urls: [] }))).toMatchObject({ field: 'start_urls' });
    const address = site.url;
    await site.stop();
    expect(await rejection(validate({ start_urls: [`${address}/`] }))).toMatchObject({ field: 'start_urls', message: expect.stringMatching(/^Cannot fetch .*ECONNREFUSED/) });
  });

  test('a site that cannot be reached fails the run instead of emptying the collection', async () => {
    const first = await crawl({ start_urls: [u('/')] });
    const address = site.url;
    await site.stop();
    expect((await rejection(crawl({ start_urls: [`${address}/`] }, first.cursor))).message).toMatch(/^Cannot fetch .*robots\.txt.*ECONNREFUSED/);
  });

  test('network policy: intranet addresses only when allowed, by address or by name; link-local never, not even through a redirect', async () => {
    const closed = new WebClient({ allowPrivateNetworks: false });
    try {
      const validateWith = (url: string) => connector.validate(connectionContext(connector, { config: { start_urls: [url] } }), { localFolderRoots: [], webClient: closed });
      for (const url of [u('/'), u('/').replace('127.0.0.1', 'localhost')]) {
        expect(await rejection(validateWith(url))).toMatchObject({ field: 'start_urls', message: expect.stringMatching(/private, loopback or link-local address.*CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS/) });
      }
      expect(site.requests).toEqual([]);
      const crawlWith = collectRun(connector, { config: { start_urls: [u('/')] }, environment: { localFolderRoots: [], webClient: closed } });
      expect((await rejection(crawlWith)).message).toMatch(/^Cannot fetch .*robots\.txt.*private, loopback or link-local/);
    } finally {
      await closed.close();
    }
    // Allowed intranet, but a page that redirects to the cloud metadata address is refused before any connection.
    expect((await rejection(validate({ start_urls: ['http://169.254.169.254/latest/meta-data/'] }))).message).toMatch(/link-local address/);
    site.pages.set('/', { body: '', redirectTo: 'http://169.254.169.254/latest/meta-data/' });
    expect((await rejection(validate({ start_urls: [u('/')] }))).message).toMatch(/^Cannot fetch .*: refused: 169\.254\.169\.254, a link-local address/);
    site.pages.set('/', { body: '', redirectTo: 'http://[::ffff:169.254.169.254]/' });
    expect((await rejection(validate({ start_urls: [u('/')] }))).message).toMatch(/link-local address/);
  });

  test('a robots.txt answering 503 stops the crawl', async () => {
    site.pages.set('/robots.txt', { body: '', status: 503 });
    expect((await rejection(crawl({ start_urls: [u('/')] }))).message).toMatch(/robots\.txt answered HTTP 503/);
  });
});

describe('outlinePage', () => {
  test('title, headings, links (base href, entities, nofollow, scripts and comments ignored)', () => {
    const outline = outlinePage(
      `<html><head><base href="/docs/"><title> A &amp; B </title></head><body>
        <h1>Top <em>level</em></h1><h3>Third</h3>
        <a href="page.html?a=1&amp;b=2#x">one</a><a href='/abs'>two</a><a href=bare.html>three</a>
        <a rel="nofollow" href="/skipped">no</a><!-- <a href="/commented">c</a> --><script>"<a href='/scripted'>"</script>
        <a href="javascript:alert(1)">js</a></body></html>`,
      'http://site.test/index.html',
    );
    expect(outline).toEqual({
      title: 'A & B',
      headings: [{ level: 1, text: 'Top level' }, { level: 3, text: 'Third' }],
      links: ['http://site.test/docs/page.html?a=1&b=2', 'http://site.test/abs', 'http://site.test/docs/bare.html'],
      noindex: false,
      nofollow: false,
    });
  });
});
