import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { OpenAiCompatibleEmbedder } from './openai-embedder.js';
import { tokenize, WordVectorEmbedder } from './word-vector-embedder.js';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

describe('built-in word-vector embedder', () => {
  let embedder: WordVectorEmbedder;
  beforeAll(async () => {
    // The machine-wide cache the service uses: the conversion runs at most once per machine.
    embedder = await WordVectorEmbedder.open({ cacheDir: path.join(os.homedir(), '.cache', 'catchment') });
  });

  test('unit vectors of 100 dimensions, related texts closer than unrelated ones', async () => {
    const [cat, kitten, revenue] = await embedder.embed(['the cat sat on the mat', 'a kitten rested on a rug', 'quarterly revenue grew strongly']);
    for (const vector of [cat!, kitten!, revenue!]) {
      expect(vector).toHaveLength(100);
      expect(Math.abs(cosine(vector, vector) - 1)).toBeLessThan(1e-4);
    }
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, revenue!));
  });

  test('identifiers split into words; unknown-word texts get distinct deterministic vectors', async () => {
    expect(tokenize('parseHttpRequest user_account_id')).toEqual(['parse', 'http', 'request', 'user', 'account', 'id']);
    const [a1, a2, b] = await embedder.embed(['zxqv-0001', 'zxqv-0001', 'qqzz-9999']);
    expect(Array.from(a1!)).toEqual(Array.from(a2!));
    expect(cosine(a1!, b!)).toBeLessThan(0.99);
  });

  test('a word the vocabulary does not know still counts: texts sharing it are closer', async () => {
    const [query, sharing, other] = await embedder.embed([
      'zxqvorin inhibition in tumour cells',
      'zxqvorin inhibition reduces tumour growth in cells',
      'kinase inhibition reduces tumour growth in cells',
    ]);
    expect(cosine(query!, sharing!)).toBeGreaterThan(cosine(query!, other!) + 0.02);
    // Its trigrams make a near-spelling closer than an unrelated unknown word.
    const [variant, unrelated] = await embedder.embed(['zxqvorins inhibition in tumour cells', 'plmbwudge inhibition in tumour cells']);
    expect(cosine(query!, variant!)).toBeGreaterThan(cosine(query!, unrelated!));
  });

  test('texts with no word (empty, punctuation, stop words only) get unit vectors and leave their neighbours intact', async () => {
    const [alone] = await embedder.embed(['quarterly revenue grew']);
    const batch = await embedder.embed(['quarterly revenue grew', '', '—!?', 'the of and']);
    expect(Array.from(batch[0]!)).toEqual(Array.from(alone!));
    for (const vector of batch.slice(1)) expect(Math.abs(cosine(vector!, vector!) - 1)).toBeLessThan(1e-4);
  });

  test('a query does not queue behind a large batch on the worker thread, and its vector is the same either way', async () => {
    // One worker thread, and batches as large as the embedder makes them (1,024 texts): a batch is one long job on it.
    const queued = await WordVectorEmbedder.open({ cacheDir: path.join(os.homedir(), '.cache', 'catchment'), threads: 1, batchChars: 16 * 1024 * 1024 });
    try {
      const query = 'clinical trials of kinase inhibitors';
      const [alone] = await queued.embed([query]);
      const documents = Array.from({ length: 1024 }, (_, i) => `document ${i}: ${'clinical trials and quarterly revenue of kinase inhibitors '.repeat(40)}`);
      const finished: string[] = [];
      const batch = queued.embed(documents).then((vectors) => (finished.push('batch'), vectors));
      const again = queued.embed([query]).then((vectors) => (finished.push('query'), vectors));
      const [[queryVector], batchVectors] = await Promise.all([again, batch]);
      // Handed to the worker, the query would wait for the batch's job there (one thread runs its jobs in turn).
      expect(finished).toEqual(['query', 'batch']);
      expect(Array.from(queryVector!)).toEqual(Array.from(alone!));
      // The worker's vectors are the calling thread's: a document alone (2,400 characters) is embedded there.
      const [document] = await queued.embed([documents[7]!]);
      expect(Array.from(batchVectors[7]!)).toEqual(Array.from(document!));
    } finally {
      await queued.close();
    }
  });

  test('an aborted signal stops embedding', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(embedder.embed(['one'], controller.signal)).rejects.toThrow('stop');
  });
});

/** Runs against a local HTTP server that speaks the OpenAI embeddings protocol (no hosted service is reachable here). */
describe('OpenAI-compatible embedder against a local server speaking the OpenAI embeddings protocol', () => {
  let server: Server;
  let baseUrl: string;
  const requests: { auth: string | undefined; input: string[] }[] = [];
  let script: number[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const status = script.shift() ?? 200;
        if (req.url !== '/v1/embeddings' || req.method !== 'POST') return void res.writeHead(404).end();
        const { input, model } = JSON.parse(body) as { input: string[]; model: string };
        requests.push({ auth: req.headers.authorization, input });
        if (status !== 200) return void res.writeHead(status, status === 429 ? { 'retry-after': '0' } : {}).end('{"error":{"message":"busy"}}');
        // Out of order on purpose: clients must use `index`.
        const data = input.map((text, index) => ({ object: 'embedding', index, embedding: [text.length, 1, model === 'wrong-size' ? 0 : 2].slice(0, model === 'wrong-size' ? 2 : 3) })).reverse();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${address.port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('batches, authenticates, keeps order by index and normalises', async () => {
    requests.length = 0;
    const embedder = new OpenAiCompatibleEmbedder({ baseUrl, apiKey: 'sk-test', model: 'm', dimensions: 3, batchSize: 2 });
    const vectors = await embedder.embed(['a', 'bbb', 'cc']);
    expect(requests.map((r) => r.input)).toEqual([['a', 'bbb'], ['cc']]);
    expect(requests[0]!.auth).toBe('Bearer sk-test');
    const expected = (n: number) => [n, 1, 2].map((v) => v / Math.hypot(n, 1, 2));
    expect(Array.from(vectors[1]!).map((v) => +v.toFixed(5))).toEqual(expected(3).map((v) => +v.toFixed(5)));
    expect(Array.from(vectors[0]!).map((v) => +v.toFixed(5))).toEqual(expected(1).map((v) => +v.toFixed(5)));
  });

  test('retries 429 and 5xx, then gives up with a clear error', async () => {
    script = [429, 503];
    const embedder = new OpenAiCompatibleEmbedder({ baseUrl, model: 'm', dimensions: 3, maxRetries: 3 });
    expect(await embedder.embed(['x'])).toHaveLength(1);
    script = [500, 500, 500];
    const impatient = new OpenAiCompatibleEmbedder({ baseUrl, model: 'm', dimensions: 3, maxRetries: 2 });
    await expect(impatient.embed(['x'])).rejects.toThrow(/answered 500.* after 3 attempts/);
    script = [];
  });

  test('a vector of the wrong size is an error naming the setting', async () => {
    const embedder = new OpenAiCompatibleEmbedder({ baseUrl, model: 'wrong-size', dimensions: 3 });
    await expect(embedder.embed(['x'])).rejects.toThrow(/CATCHMENT_EMBEDDING_DIMENSIONS/);
  });
});
