import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the server answers: scores (`ok`), an HTTP error status, a body that is not JSON (`malformed`), or
 * never (`hang`, until the server closes).
 */
export type FakeRerankMode = 'ok' | 'hang' | 'malformed' | { status: number };

export interface RecordedRerankRequest {
  path: string;
  /** Which request shape arrived: `texts` (TEI) or `documents` (Cohere, Jina, vLLM). */
  protocol: 'tei' | 'cohere';
  authorization: string | undefined;
  query: string;
  documents: string[];
  model?: string;
  topN?: number;
  truncate?: boolean;
}

export interface FakeRerankServerOptions {
  /** Relevance of one document to the query; default: how many of the query's words the document contains. */
  score?: (query: string, document: string) => number;
  /** Batches larger than this are refused as TEI refuses them (422, "maximum allowed batch size N"). */
  maxBatchSize?: number;
}

/** Words of the query found in the document: a deterministic stand-in for a cross-encoder. */
export function sharedWordCount(query: string, document: string): number {
  const words = new Set(document.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? []);
  return (query.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? []).filter((word) => words.has(word)).length;
}

/**
 * A local HTTP server speaking the rerank protocols: TEI's `POST /rerank` `{query, texts}` → `[{index, score}]`,
 * and Cohere's (Jina, vLLM) `POST /v1/rerank` `{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`,
 * both sorted by score as real servers answer. Set `mode` to make it fail or hang; `requests` records what arrived.
 */
export async function startFakeRerankServer(options: FakeRerankServerOptions = {}) {
  const score = options.score ?? sharedWordCount;
  const requests: RecordedRerankRequest[] = [];
  const state = { mode: 'ok' as FakeRerankMode };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    if (req.method !== 'POST' || !path.endsWith('/rerank')) return void res.writeHead(404).end();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      query: string;
      texts?: string[];
      documents?: string[];
      model?: string;
      top_n?: number;
      truncate?: boolean;
    };
    const documents = body.texts ?? body.documents;
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (!Array.isArray(documents)) return void json(422, { error: 'Failed to deserialize the JSON body: missing field `texts`', error_type: 'Validation' });
    const protocol = body.texts ? 'tei' : 'cohere';
    requests.push({ path, protocol, authorization: req.headers.authorization, query: body.query, documents, model: body.model, topN: body.top_n, truncate: body.truncate });
    const mode = state.mode;
    if (mode === 'hang') return; // answered never; close() drops the connection
    if (mode === 'malformed') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"results": [');
    if (typeof mode === 'object') return void json(mode.status, { error: 'scripted failure', error_type: 'Backend' });
    if (options.maxBatchSize !== undefined && documents.length > options.maxBatchSize) {
      return void json(422, { error: `batch size ${documents.length} > maximum allowed batch size ${options.maxBatchSize}`, error_type: 'Validation' });
    }
    const ranked = documents.map((document, index) => ({ index, score: score(body.query, document) })).sort((a, b) => b.score - a.score);
    if (protocol === 'tei') return void json(200, ranked);
    const kept = body.top_n ? ranked.slice(0, body.top_n) : ranked;
    json(200, { id: `rerank-${requests.length}`, results: kept.map(({ index, score }) => ({ index, relevance_score: score })), meta: { billed_units: { search_units: 1 } } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    /** TEI's endpoint. */
    teiUrl: `${base}/rerank`,
    /** The Cohere / Jina / vLLM endpoint. */
    cohereUrl: `${base}/v1/rerank`,
    requests,
    get mode(): FakeRerankMode {
      return state.mode;
    },
    set mode(mode: FakeRerankMode) {
      state.mode = mode;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeRerankServer = Awaited<ReturnType<typeof startFakeRerankServer>>;
