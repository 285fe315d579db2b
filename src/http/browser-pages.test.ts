import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import { browserPagesRouter } from './browser-pages.js';

const OPTIONS = { graphqlPath: '/graphql', streamPath: '/graphql/stream', openapiJsonPath: '/openapi.json', docsPath: '/docs' };

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(browserPagesRouter(OPTIONS));
  // Stands in for Apollo: whatever the router passes on gets a 418.
  app.use((_req, res) => {
    res.status(418).json({ fellThrough: true });
  });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

const get = (path: string, accept = '*/*') => fetch(new URL(path, base), { headers: { accept } });

/** Every `src=` and `href=` in the HTML. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*"([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
}

/** Asset URLs named inside a bootstrap script (quoted strings under the page's assets folder). */
function urlsInScript(script: string, assetsPrefix: string): string[] {
  return [...script.matchAll(/["'`](\/[^"'`\s]*)["'`]/g)].map((m) => m[1]!).filter((url) => url.startsWith(assetsPrefix));
}

function expectedType(url: string): RegExp {
  const pathname = new URL(url, 'http://x').pathname;
  if (pathname.endsWith('.js')) return /^(text|application)\/javascript/;
  if (pathname.endsWith('.css')) return /^text\/css/;
  throw new Error(`unexpected asset kind: ${url}`);
}

/** Loads the page's assets (and any the bootstrap script names) and checks each one. */
async function checkAssets(html: string, assetsPrefix: string): Promise<string[]> {
  const pending = referencedUrls(html);
  const seen = new Set<string>();
  while (pending.length) {
    const url = pending.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    expect(url.startsWith(`${assetsPrefix}/`)).toBe(true);
    const response = await get(url);
    expect({ url, status: response.status }).toEqual({ url, status: 200 });
    expect(response.headers.get('content-type')).toMatch(expectedType(url));
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d{6,}/);
    const body = await response.text();
    expect(body.length).toBeGreaterThan(0);
    if (url.includes('/assets/playground.js') || url.includes('/assets/docs.js')) {
      pending.push(...urlsInScript(body, `${assetsPrefix}/`));
    }
  }
  return [...seen];
}

function expectNoExternalUrls(html: string): void {
  const absolute = [...html.matchAll(/https?:\/\/[^\s"'<>)]+/gi)].map((m) => m[0]);
  const foreign = absolute.filter((url) => !url.startsWith(base));
  expect(foreign).toEqual([]);
}

describe('GraphiQL playground', () => {
  test('a browser asking for HTML gets the page', async () => {
    const response = await get('/graphql', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:/);
    const html = await response.text();
    expect(html).toMatch(/<div id="graphiql"/);
    expect(html).toMatch(/<script src="[^"]+"><\/script>/);
    expect(html).not.toMatch(/<script>/); // no inline script; the CSP would block it
    expectNoExternalUrls(html);

    const assets = await checkAssets(html, '/graphql/assets');
    const names = assets.map((url) => new URL(url, base).pathname.split('/').pop());
    expect(names).toEqual(
      expect.arrayContaining(['graphiql.min.js', 'graphiql.min.css', 'react.production.min.js', 'react-dom.production.min.js', 'graphql-sse.min.js', 'playground.js']),
    );
  });

  test('the bootstrap script posts to the GraphQL path and subscribes over SSE on the stream path', async () => {
    const html = await (await get('/graphql', 'text/html')).text();
    const scriptUrl = referencedUrls(html).find((url) => url.includes('/assets/playground.js'))!;
    const script = await (await get(scriptUrl)).text();
    expect(script).toContain('"/graphql"');
    expect(script).toContain('"/graphql/stream"');
    expect(script).toContain('graphqlSse.createClient');
    expect(script).toContain('shouldPersistHeaders: true');
    expect(script).toContain("'x-api-key'");
    expectNoExternalUrls(script);
  });

  test('the fetcher sends operations over POST and subscriptions over graphql-sse, with the editor headers', async () => {
    const html = await (await get('/graphql', 'text/html')).text();
    const scriptUrl = referencedUrls(html).find((url) => url.includes('/assets/playground.js'))!;
    const script = await (await get(scriptUrl)).text();

    // Runs the bootstrap against stand-ins for React, GraphiQL, graphql-sse and fetch.
    let props: any;
    const posts: Array<{ url: string; init: any }> = [];
    const sse: Array<{ options: any; request: any; disposed: boolean; returned: boolean }> = [];
    const sandbox = {
      document: { getElementById: (id: string) => ({ id }) },
      React: { createElement: (_component: unknown, p: unknown) => p },
      ReactDOM: { createRoot: () => ({ render: (p: unknown) => { props = p; } }) },
      GraphiQL: function GraphiQL() {},
      graphqlSse: {
        createClient(options: any) {
          const record = { options, request: null as any, disposed: false, returned: false };
          sse.push(record);
          return {
            iterate(request: any) {
              record.request = request;
              const iterator = (async function* () { yield { data: { ticks: 1 } }; })() as AsyncGenerator<unknown>;
              const original = iterator.return.bind(iterator);
              iterator.return = async (value?: unknown) => { record.returned = true; return original(value); };
              return iterator;
            },
            dispose() { record.disposed = true; },
          };
        },
      },
      fetch: async (url: string, init: any) => {
        posts.push({ url, init });
        return { status: 200, headers: { get: () => 'application/json' }, json: async () => ({ data: { ok: true } }) };
      },
      Promise,
      Symbol,
      Object,
      JSON,
      String,
    };
    vm.runInNewContext(script, sandbox);
    expect(props.shouldPersistHeaders).toBe(true);
    expect(JSON.parse(props.defaultHeaders)).toEqual({ 'x-api-key': '' });

    const headers = { 'x-api-key': 'cmt_key', authorization: '' };
    expect(await props.fetcher({ query: '{ hello }' }, { headers })).toEqual({ data: { ok: true } });
    expect(posts).toHaveLength(1);
    expect(posts[0]!.url).toBe('/graphql');
    expect(posts[0]!.init.method).toBe('POST');
    expect(posts[0]!.init.headers).toEqual(expect.objectContaining({ 'x-api-key': 'cmt_key', 'content-type': 'application/json' }));
    expect(posts[0]!.init.headers).not.toHaveProperty('authorization'); // empty values are left out
    expect(JSON.parse(posts[0]!.init.body)).toEqual({ query: '{ hello }' });

    // No (or a stale) AST: the page works out the operation kind itself, ignoring strings and comments.
    const documents = [
      '# a comment with { braces }\nsubscription Ticks($n: Int = 3) { ticks(upTo: $n, label: "query {") }',
      'fragment F on Query { hello }\nquery Q { ...F }\nsubscription S { ticks(upTo: 1) }',
    ];
    const stale = { definitions: [{ kind: 'OperationDefinition', operation: 'query' }], loc: { source: { body: '{ hello }' } } };
    const iterable = await props.fetcher({ query: documents[0], variables: { n: 2 } }, { headers, documentAST: stale });
    const values: unknown[] = [];
    for await (const value of iterable as AsyncIterable<unknown>) values.push(value);
    expect(values).toEqual([{ data: { ticks: 1 } }]);
    expect(sse).toHaveLength(1);
    expect(sse[0]!.options.url).toBe('/graphql/stream');
    expect(sse[0]!.options.headers).toEqual({ 'x-api-key': 'cmt_key' });
    expect(sse[0]!.request).toEqual({ query: documents[0], variables: { n: 2 }, operationName: undefined });

    expect(posts).toHaveLength(1);
    await props.fetcher({ query: documents[1], operationName: 'Q' }, { headers });
    expect(posts).toHaveLength(2);
    const stream = await props.fetcher({ query: documents[1], operationName: 'S' }, { headers });
    expect(sse).toHaveLength(2);
    // GraphiQL's Stop calls return() on the iterator; that ends the SSE request and the client.
    await (stream as AsyncGenerator<unknown>)[Symbol.asyncIterator]().return(undefined);
    expect(sse[1]!.returned).toBe(true);
    expect(sse[1]!.disposed).toBe(true);
  });

  test('API clients fall through to the next handler', async () => {
    for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
      const response = await get('/graphql?query=%7B__typename%7D', accept);
      expect({ accept, status: response.status }).toEqual({ accept, status: 418 });
    }
    const post = await fetch(new URL('/graphql', base), {
      method: 'POST',
      headers: { accept: 'text/html', 'content-type': 'application/json' },
      body: '{"query":"{__typename}"}',
    });
    expect(post.status).toBe(418);
  });

  test('unknown assets are 404, not passed on', async () => {
    expect((await get('/graphql/assets/nope.js')).status).toBe(404);
    expect((await get('/graphql/assets/..%2Fpackage.json')).status).toBe(404);
  });
});

describe('Swagger UI reference', () => {
  test('serves the page and its assets from this server', async () => {
    const response = await get('/docs', 'text/html');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await response.text();
    expect(html).toMatch(/<div id="swagger-ui"/);
    expect(html).toMatch(/<script src="[^"]+"><\/script>/);
    expectNoExternalUrls(html);

    const assets = await checkAssets(html, '/docs/assets');
    const names = assets.map((url) => new URL(url, base).pathname.split('/').pop());
    expect(names).toEqual(expect.arrayContaining(['swagger-ui-bundle.js', 'swagger-ui.css', 'docs.js']));
  });

  test('the bootstrap script loads the spec from the OpenAPI path and keeps authorization', async () => {
    const html = await (await get('/docs', 'text/html')).text();
    const scriptUrl = referencedUrls(html).find((url) => url.includes('/assets/docs.js'))!;
    const script = await (await get(scriptUrl)).text();
    expect(script).toContain('"/openapi.json"');
    expect(script).toContain('persistAuthorization: true');
    expectNoExternalUrls(script);
  });
});
