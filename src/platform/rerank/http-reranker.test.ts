import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { startFakeRerankServer, type FakeRerankServer } from '../../../test/support/fake-rerank-server.js';
import { ConfigError, loadConfig } from '../../config.js';
import { createReranker } from './create-reranker.js';
import { HttpReranker, resolveRerankProtocol, type HttpRerankerOptions } from './http-reranker.js';
import { rerankHead } from './reranker.js';

const KEY = 'rk-secret-0123456789abcdef';

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: { msg: string; reason?: string; endpoint?: string }[] = [];
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void (raw.push(line), lines.push(JSON.parse(line))) });
  return { logger, lines, raw };
}

/** A one-handler loopback server for answers the fake does not give (partial lists, redirects). */
async function startRawServer(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: { authorization: string | undefined; path: string | undefined }[] = [];
  const server = createServer((req, res) => {
    seen.push({ authorization: req.headers.authorization, path: req.url });
    req.resume().on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const documents = ['the cat sat', 'rain in spain falls', 'spain rain', 'nothing here'];
// Word overlap with "rain spain": 0, 2, 2, 0; ties keep input order after a stable sort.
const query = 'rain spain';

describe('HTTP reranker against a local HTTP server speaking the TEI rerank protocol', () => {
  let fake: FakeRerankServer;
  let log: ReturnType<typeof capturingLogger>;
  // Distinct scores whose order differs from the input order.
  const score = (_: string, document: string) => (document.includes('spain') ? 2 : 0) + (document.startsWith('rain') ? 1 : 0) + document.length / 1000;
  beforeAll(async () => {
    fake = await startFakeRerankServer({ score });
  });
  afterAll(() => fake.close());
  afterEach(() => {
    fake.mode = 'ok';
    fake.requests.length = 0;
  });
  const tei = (overrides: Partial<HttpRerankerOptions> = {}) => {
    log = capturingLogger();
    return new HttpReranker({ url: fake.teiUrl, protocol: 'auto', apiKey: KEY, timeoutMs: 2000, topK: 50, batchSize: 32, maxDocumentChars: 2000, logger: log.logger, ...overrides });
  };

  test('scores come back aligned with the documents although the server sorts them by score', async () => {
    const reranker = tei();
    expect(reranker.protocol).toBe('tei');
    const scores = await reranker.rerank(query, documents);
    expect(scores).toEqual(documents.map((document) => score(query, document)));
    expect(scores![1]).toBeCloseTo(3.019);
    const sent = fake.requests[0]!;
    expect(sent).toMatchObject({ path: '/rerank', protocol: 'tei', query, documents, truncate: true, authorization: `Bearer ${KEY}` });
    expect(sent.model).toBeUndefined();
    expect(log.lines.filter((line) => line.msg.includes('rerank'))).toEqual([]);
  });

  test('documents are sent in batches and their scores reassembled in order', async () => {
    const many = Array.from({ length: 70 }, (_, i) => `doc ${i} ${'x'.repeat(i)}`);
    const scores = await tei({ batchSize: 32 }).rerank('q', many);
    expect(fake.requests.map((request) => request.documents.length).sort((a, b) => a - b)).toEqual([6, 32, 32]);
    expect(scores).toEqual(many.map((document) => score('q', document)));
  });

  test('a server that names a smaller maximum batch gets batches of that size, on this call and the next', async () => {
    const limited = await startFakeRerankServer({ maxBatchSize: 10 });
    try {
      const reranker = tei({ url: limited.teiUrl, batchSize: 32 });
      const many = Array.from({ length: 25 }, (_, i) => (i % 2 ? `rain ${i}` : `sun ${i}`));
      const scores = await reranker.rerank('rain', many);
      expect(scores).toEqual(many.map((_, i) => (i % 2 ? 1 : 0)));
      expect(limited.requests.map((request) => request.documents.length)).toEqual([25, 10, 10, 5]);
      limited.requests.length = 0;
      await reranker.rerank('rain', many);
      expect(limited.requests.map((request) => request.documents.length)).toEqual([10, 10, 5]);
    } finally {
      await limited.close();
    }
  });

  test('a server error (500) gives null, logged once without the key', async () => {
    fake.mode = { status: 500 };
    const reranker = tei();
    expect(await reranker.rerank(query, documents)).toBeNull();
    const failures = log.lines.filter((line) => line.msg.includes('rerank endpoint failed'));
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).toContain('answered 500: scripted failure');
    expect(log.raw.join('')).not.toContain(KEY);
  });

  test('a server that does not answer gives null within the timeout', async () => {
    fake.mode = 'hang';
    const reranker = tei({ timeoutMs: 300 });
    const started = performance.now();
    expect(await reranker.rerank(query, documents)).toBeNull();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    expect(log.lines.find((line) => line.msg.includes('rerank endpoint failed'))?.reason).toBe('no answer within 300 ms');
  });

  test('a body that is not JSON gives null', async () => {
    fake.mode = 'malformed';
    const reranker = tei();
    expect(await reranker.rerank(query, documents)).toBeNull();
    expect(log.lines.find((line) => line.msg.includes('rerank endpoint failed'))?.reason).toMatch(/something other than JSON/);
  });

  test('long documents and the query are cut to the character limit, never inside a surrogate pair', async () => {
    const long = 'a'.repeat(99) + '😀' + 'b'.repeat(500);
    await tei({ maxDocumentChars: 100 }).rerank('q'.repeat(300), [long, 'short']);
    const sent = fake.requests[0]!;
    expect(sent.query).toHaveLength(100);
    expect(sent.documents).toEqual(['a'.repeat(99), 'short']);
  });

  test('no documents: no request; an aborted caller: null and nothing logged', async () => {
    const reranker = tei();
    expect(await reranker.rerank(query, [])).toEqual([]);
    fake.mode = 'hang';
    const controller = new AbortController();
    const pending = reranker.rerank(query, documents, controller.signal);
    setTimeout(() => controller.abort(new Error('search cancelled')), 50);
    expect(await pending).toBeNull();
    expect(fake.requests).toHaveLength(1);
    expect(log.lines.filter((line) => line.msg.includes('rerank'))).toEqual([]);
  });
});

describe('HTTP reranker against a local HTTP server speaking the Cohere rerank protocol (Jina, vLLM)', () => {
  let fake: FakeRerankServer;
  let log: ReturnType<typeof capturingLogger>;
  beforeAll(async () => {
    fake = await startFakeRerankServer();
  });
  afterAll(() => fake.close());
  afterEach(() => {
    fake.mode = 'ok';
    fake.requests.length = 0;
  });
  const cohere = (overrides: Partial<HttpRerankerOptions> = {}) => {
    log = capturingLogger();
    return new HttpReranker({ url: fake.cohereUrl, protocol: 'auto', model: 'bge-reranker-v2-m3', apiKey: KEY, timeoutMs: 2000, topK: 50, batchSize: 32, maxDocumentChars: 2000, logger: log.logger, ...overrides });
  };

  test('scores come back aligned by index; the request names the model and asks for every document (top_n)', async () => {
    const reranker = cohere();
    expect(reranker.protocol).toBe('cohere');
    expect(await reranker.rerank(query, documents)).toEqual([0, 2, 2, 0]);
    expect(fake.requests[0]).toMatchObject({ path: '/v1/rerank', protocol: 'cohere', model: 'bge-reranker-v2-m3', query, documents, topN: 4, authorization: `Bearer ${KEY}` });
  });

  test('server error, hang and malformed body each give null', async () => {
    for (const mode of [{ status: 503 }, 'hang', 'malformed'] as const) {
      fake.mode = mode;
      expect(await cohere({ timeoutMs: 200 }).rerank(query, documents)).toBeNull();
      expect(log.lines.filter((line) => line.msg.includes('rerank endpoint failed'))).toHaveLength(1);
    }
  });

  test('an answer scoring only some of the documents gives null rather than a partial order', async () => {
    const partial = await startRawServer((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ index: 1, relevance_score: 0.9 }] })));
    try {
      expect(await cohere({ url: `${partial.url}/v1/rerank` }).rerank(query, documents)).toBeNull();
      expect(log.lines.find((line) => line.msg.includes('rerank endpoint failed'))?.reason).toBe('scored 1 of 4 documents');
    } finally {
      await partial.close();
    }
  });

  test('the API key goes to the configured URL only: a redirect elsewhere is not followed', async () => {
    const elsewhere = await startRawServer((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"results": []}'));
    const redirecting = await startRawServer((_, res) => res.writeHead(307, { location: `${elsewhere.url}/v1/rerank` }).end());
    try {
      expect(await cohere({ url: `${redirecting.url}/v1/rerank` }).rerank(query, documents)).toBeNull();
      expect(redirecting.seen).toEqual([{ authorization: `Bearer ${KEY}`, path: '/v1/rerank' }]);
      expect(elsewhere.seen).toEqual([]);
      expect(log.lines.find((line) => line.msg.includes('rerank endpoint failed'))?.reason).toMatch(/answered 307 .*not followed/);
    } finally {
      await redirecting.close();
      await elsewhere.close();
    }
  });

  test('a server echoing the key in its error message has it redacted from the log', async () => {
    const echoing = await startRawServer((req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `invalid api token ${req.headers.authorization}` })));
    try {
      expect(await cohere({ url: `${echoing.url}/v2/rerank` }).rerank(query, documents)).toBeNull();
      expect(log.raw.join('')).not.toContain(KEY);
      expect(log.lines.find((line) => line.msg.includes('rerank endpoint failed'))?.reason).toBe('answered 401: invalid api token Bearer [redacted]');
    } finally {
      await echoing.close();
    }
  });
});

describe('choosing and wiring the reranker', () => {
  test('auto: cohere with a model or a versioned path, tei otherwise; an explicit protocol wins', () => {
    expect(resolveRerankProtocol('http://tei:80/rerank', undefined, 'auto')).toBe('tei');
    expect(resolveRerankProtocol('https://api.jina.ai/v1/rerank', undefined, 'auto')).toBe('cohere');
    expect(resolveRerankProtocol('https://api.cohere.com/v2/rerank', undefined, 'auto')).toBe('cohere');
    expect(resolveRerankProtocol('http://vllm:8000/rerank', 'BAAI/bge-reranker-base', 'auto')).toBe('cohere');
    expect(resolveRerankProtocol('http://gateway/v1/rerank', undefined, 'tei')).toBe('tei');
  });

  test('the configuration builds the reranker, or none when CATCHMENT_RERANK_URL is unset', () => {
    const { logger } = capturingLogger();
    expect(createReranker(loadConfig({}, '/nonexistent/.env'), logger)).toBeNull();
    const config = loadConfig({ CATCHMENT_RERANK_URL: 'http://tei:80/rerank', CATCHMENT_RERANK_TOP_K: '20' }, '/nonexistent/.env');
    expect(config).toMatchObject({ rerankProtocol: 'auto', rerankTimeoutMs: 2000, rerankTopK: 20, rerankBatchSize: 32, rerankMaxDocumentChars: 2000 });
    const reranker = createReranker(config, logger) as HttpReranker;
    expect(reranker).toBeInstanceOf(HttpReranker);
    expect([reranker.protocol, reranker.topK, reranker.model]).toEqual(['tei', 20, undefined]);
    expect(() => loadConfig({ CATCHMENT_RERANK_PROTOCOL: 'jina' }, '/nonexistent/.env')).toThrow(ConfigError);
    expect(() => loadConfig({ CATCHMENT_RERANK_URL: 'ftp://x/rerank' }, '/nonexistent/.env')).toThrow(/CATCHMENT_RERANK_URL must use http: or https:/);
  });

  test('rerankHead reorders the first topK items by score and keeps the rest, or everything on failure', async () => {
    const fake = await startFakeRerankServer();
    try {
      const items = [{ id: 'a', text: 'sun' }, { id: 'b', text: 'rain' }, { id: 'c', text: 'rain spain' }, { id: 'd', text: 'rain spain' }];
      const reranker = new HttpReranker({ url: fake.teiUrl, protocol: 'tei', timeoutMs: 2000, topK: 3, batchSize: 32, maxDocumentChars: 2000 });
      const reranked = await rerankHead(reranker, 'rain spain', items, (item) => item.text);
      expect(reranked.map(({ item, rerankScore }) => [item.id, rerankScore])).toEqual([['c', 2], ['b', 1], ['a', 0], ['d', null]]);
      expect(fake.requests[0]!.documents).toEqual(['sun', 'rain', 'rain spain']);
      fake.mode = { status: 500 };
      const unchanged = await rerankHead(reranker, 'rain spain', items, (item) => item.text);
      expect(unchanged.map(({ item, rerankScore }) => [item.id, rerankScore])).toEqual([['a', null], ['b', null], ['c', null], ['d', null]]);
    } finally {
      await fake.close();
    }
  });
});
