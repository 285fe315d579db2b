import { afterAll, beforeEach, describe, expect, test } from '@jest/globals';
import { SourceConfigError } from '../connector.js';
import { collectRun, connectionContext, connectorEnvironment, rejection } from '../connector-testing.js';
import { TestSite } from '../web/test-site.js';
import connector, { type RssCursor } from './index.js';
import { atom, rss2, type TestFeedItem } from './test-feeds.js';


const sync = (config: Record<string, unknown>, cursor: RssCursor | null = null) => collectRun(connector, { config, cursor });

let site: TestSite;
const u = (path: string) => `${site.url}${path}`;
const day = (n: number) => new Date(Date.UTC(2025, 2, n, 9, 0, 0));
const newsItems: TestFeedItem[] = [
  { id: 'n1', title: 'Comet sighted', html: '<p>A <b>bright</b> comet over the northern sky.</p>', date: day(1), author: 'Vera Rubin' },
  { id: 'n2', title: 'Eclipse &amp; tides', html: '<p>The eclipse changes the tides.</p>', date: day(2) },
];
const releaseItems: TestFeedItem[] = [{ id: 'urn:release:1', title: 'Release <1.0>', html: '<p>First release of the star catalogue.</p>', date: day(3), author: 'Annie Cannon' }];

beforeEach(async () => {
  await site?.stop();
  site = await new TestSite().start();
  site.pages.set('/news.xml', { body: rss2('Observatory news', u(''), newsItems), contentType: 'application/rss+xml' });
  site.pages.set('/releases.atom', { body: atom('Releases', u(''), releaseItems), contentType: 'application/atom+xml' });
});
afterAll(() => site?.stop());

describe('rss connector', () => {
  test('RSS 2.0 and Atom items become entities with title, link, text, dates and author; the feed is their breadcrumb', async () => {
    const run = await sync({ feed_urls: [u('/news.xml'), u('/releases.atom')] });
    expect(run.complete).toBe(false);
    expect(run.ids).toEqual(['n1', 'n2', u('/news.xml'), u('/releases.atom'), 'urn:release:1'].sort());
    expect(run.byId.get('n1')).toMatchObject({
      entityType: 'rss_item',
      name: 'Comet sighted',
      webUrl: u('/n1'),
      breadcrumbs: [{ entityId: u('/news.xml'), name: 'Observatory news', entityType: 'rss_feed' }],
      createdAt: day(1),
      updatedAt: day(1),
      fields: expect.objectContaining({ authors: ['Vera Rubin'], categories: ['news'], link: u('/n1') }),
    });
    expect(run.byId.get('n1')!.text).toContain('A bright comet over the northern sky.');
    expect(run.byId.get('n2')!.name).toBe('Eclipse & tides');
    expect(run.byId.get('urn:release:1')).toMatchObject({
      name: 'Release <1.0>',
      webUrl: u('/urn:release:1'),
      createdAt: day(3),
      fields: expect.objectContaining({ authors: ['Annie Cannon'], categories: ['release'] }),
    });
    expect(run.byId.get('urn:release:1')!.text).toContain('First release of the star catalogue.');
    expect(run.byId.get(u('/news.xml'))).toMatchObject({ entityType: 'rss_feed', name: 'Observatory news', fields: expect.objectContaining({ format: 'rss' }) });
  });

  test('re-sync: 304 keeps a feed; new and re-dated items are read; items leaving the window stay; removed feeds are deleted', async () => {
    const first = await sync({ feed_urls: [u('/news.xml'), u('/releases.atom')] });
    const updated: TestFeedItem[] = [{ ...newsItems[1]!, html: '<p>Revised: the eclipse and the tides.</p>', date: day(5) }, { id: 'n3', title: 'Nova', html: '<p>A nova in Cygnus.</p>', date: day(6) }];
    site.pages.set('/news.xml', { body: rss2('Observatory news', u(''), updated), contentType: 'application/rss+xml' });
    site.requests.length = 0;
    const second = await sync({ feed_urls: [u('/news.xml'), u('/releases.atom')] }, first.cursor);
    expect(second.ids).toEqual(['n2', 'n3', u('/news.xml')].sort());
    expect(second.keeps).toEqual([u('/releases.atom'), 'urn:release:1'].sort());
    expect(second.deletes).toEqual([]); // n1 scrolled out of the feed but stays
    expect(site.requests.every((request) => request.conditional)).toBe(true);
    expect(second.byId.get('n2')!.text).toContain('Revised');

    const third = await sync({ feed_urls: [u('/news.xml')] }, second.cursor);
    expect(third.deletes).toEqual([u('/releases.atom'), 'urn:release:1'].sort());
    expect(third.keeps).toEqual(['n1', 'n2', 'n3', u('/news.xml')].sort());
    expect(third.cursor).toEqual({ version: 1, extraction: expect.any(Number), feeds: { [u('/news.xml')]: expect.objectContaining({ items: { n1: day(1).toISOString(), n2: day(5).toISOString(), n3: day(6).toISOString() } }) } });
  });

  test('an unchanged feed served without validators still keeps unchanged items', async () => {
    const first = await sync({ feed_urls: [u('/news.xml')] });
    const second = await sync({ feed_urls: [u('/news.xml')] }, { ...first.cursor!, feeds: { [u('/news.xml')]: { ...first.cursor!.feeds[u('/news.xml')]!, etag: null } } });
    expect(second.ids).toEqual([u('/news.xml')]); // the feed entity is re-yielded (the pipeline skips it by hash)
    expect(second.keeps).toEqual(['n1', 'n2']);
  });

  test('reports items without text and the enclosures of items read; unchanged items are not reported again', async () => {
    const podcast: TestFeedItem[] = [
      { id: 'ep1', title: 'Episode 1: the Moon', html: '<p>Show notes about the Moon.</p>', date: day(1), enclosure: { url: u('/audio/ep1.mp3'), type: 'audio/mpeg', length: 12345678 } },
      { id: 'blank', title: '', html: '<p> <img src="/x.png"> </p>', date: day(2) },
    ];
    site.pages.set('/podcast.xml', { body: rss2('Sky podcast', u(''), podcast), contentType: 'application/rss+xml' });
    site.pages.set('/papers.atom', { body: atom('Papers', u(''), [{ id: 'urn:paper:1', title: 'On comets', html: '<p>Abstract.</p>', date: day(3), enclosure: { url: '/papers/comets.pdf', type: 'application/pdf', length: 2048 } }]), contentType: 'application/atom+xml' });
    const first = await sync({ feed_urls: [u('/podcast.xml'), u('/papers.atom')] });
    expect(first.ids).toEqual(['ep1', u('/papers.atom'), u('/podcast.xml'), 'urn:paper:1'].sort());
    expect(first.skipped).toEqual([
      { entityId: u('/audio/ep1.mp3'), reason: 'enclosure not read', detail: 'audio/mpeg, 12345678 bytes' },
      { entityId: 'blank', reason: 'no text' },
      { entityId: u('/papers/comets.pdf'), reason: 'enclosure not read', detail: 'application/pdf, 2048 bytes' },
    ]);
    site.pages.set('/papers.atom', { body: site.pages.get('/papers.atom')!.body.replace('Papers', 'Papers and notes') }); // changed, so read again; its item is unchanged
    const second = await sync({ feed_urls: [u('/podcast.xml'), u('/papers.atom')] }, first.cursor);
    expect(second.keeps).toEqual(['ep1', u('/podcast.xml'), 'urn:paper:1'].sort());
    // The podcast answered 304 (nothing read); the papers feed was read, but its item is unchanged: nothing reported.
    expect(second.skipped).toEqual([]);
  });

  test('a feed of several that cannot be read is reported and its items stay; every feed failing fails the run', async () => {
    const first = await sync({ feed_urls: [u('/news.xml'), u('/releases.atom')] });
    site.pages.set('/news.xml', { body: '<html><body>Moved to our new site</body></html>', contentType: 'text/html' });
    site.pages.set('/releases.atom', { body: '', status: 503 });
    site.pages.set('/feed.json', { body: JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'JSON Feed', items: [] }), contentType: 'application/feed+json' });
    site.pages.set('/fresh.xml', { body: rss2('Fresh', u(''), [{ id: 'f1', title: 'Fresh news', html: '<p>Still here.</p>', date: day(9) }]), contentType: 'application/rss+xml' });
    const urls = [u('/news.xml'), u('/releases.atom'), u('/feed.json'), u('/missing.xml'), u('/fresh.xml')];
    const second = await sync({ feed_urls: urls }, first.cursor);
    expect(second.ids).toEqual(['f1', u('/fresh.xml')]);
    expect(second.deletes).toEqual([]);
    expect(second.skipped).toEqual([
      { entityId: u('/news.xml'), reason: 'not a feed', detail: `${u('/news.xml')} is neither an RSS nor an Atom feed` },
      { entityId: u('/releases.atom'), reason: 'unreadable', detail: `${u('/releases.atom')} answered HTTP 503` },
      { entityId: u('/feed.json'), reason: 'not a feed', detail: `${u('/feed.json')} is neither an RSS nor an Atom feed` },
      { entityId: u('/missing.xml'), reason: 'unreadable', detail: `${u('/missing.xml')} answered HTTP 404` },
    ]);
    // The feeds that failed keep what the last run knew of them: dropping one later still deletes its items.
    expect(Object.keys(second.cursor!.feeds).sort()).toEqual([u('/fresh.xml'), u('/news.xml'), u('/releases.atom')].sort());
    const third = await sync({ feed_urls: [u('/fresh.xml')] }, second.cursor);
    expect(third.deletes).toEqual(['n1', 'n2', u('/news.xml'), u('/releases.atom'), 'urn:release:1'].sort());

    expect((await rejection(sync({ feed_urls: [u('/releases.atom'), u('/missing.xml')] }))).message).toBe(`${u('/releases.atom')} answered HTTP 503`);
  });

  test('validation fetches and parses each feed', async () => {
    const validate = (config: Record<string, unknown>) => connector.validate(connectionContext(connector, { config }), connectorEnvironment());
    await expect(validate({ feed_urls: [u('/news.xml'), u('/releases.atom')] })).resolves.toBeUndefined();
    const missing = await rejection(validate({ feed_urls: [u('/missing.xml')] }));
    expect(missing).toBeInstanceOf(SourceConfigError);
    expect(missing).toMatchObject({ field: 'feed_urls', message: `${u('/missing.xml')} answered HTTP 404` });
    site.pages.set('/page.html', { body: '<html><body>not a feed</body></html>' });
    expect(await rejection(validate({ feed_urls: [u('/page.html')] }))).toMatchObject({ field: 'feed_urls', message: expect.stringContaining('neither an RSS nor an Atom feed') });
    expect(await rejection(validate({ feed_urls: ['file:///etc/passwd'] }))).toMatchObject({ field: 'feed_urls' });
    const address = site.url;
    await site.stop();
    expect(await rejection(validate({ feed_urls: [`${address}/news.xml`] }))).toMatchObject({ field: 'feed_urls', message: expect.stringMatching(/^Cannot fetch .*ECONNREFUSED/) });
    expect((await rejection(sync({ feed_urls: [`${address}/news.xml`] }))).message).toMatch(/^Cannot fetch .*ECONNREFUSED/);
  });
});
