import { describeError, describeNetworkError } from '../http-errors.js';
import type { Logger } from '../logger.js';
import type { Reranker } from './reranker.js';

/**
 * The two request shapes rerank servers speak.
 * `tei`: Hugging Face Text Embeddings Inference, `POST /rerank` `{query, texts, raw_scores, truncate}` →
 * `[{index, score}]` sorted by score.
 * `cohere`: Cohere's rerank API and the servers that copy it (Jina, vLLM, Infinity, LiteLLM, OpenVINO):
 * `POST /v1/rerank` (or `/v2/rerank`, `/rerank`) `{model, query, documents, top_n}` →
 * `{results: [{index, relevance_score}]}` sorted by score.
 */
export type RerankProtocol = 'tei' | 'cohere';

export interface HttpRerankerOptions {
  /** The rerank endpoint itself, e.g. `http://tei:80/rerank`, `https://api.jina.ai/v1/rerank`, `http://vllm:8000/v1/rerank`. */
  url: string;
  protocol: RerankProtocol | 'auto';
  /** Sent with the `cohere` protocol (TEI serves the one model it loaded). */
  model?: string;
  /** Sent as `Authorization: Bearer …` to `url` only: redirects are not followed. Never logged. */
  apiKey?: string;
  /** For one whole `rerank` call, every batch included. */
  timeoutMs: number;
  topK: number;
  /** Documents per request (TEI's default `--max-client-batch-size` is 32); lowered when a server names a smaller maximum. */
  batchSize: number;
  /** Documents and the query are cut to this many characters: cross-encoders read a few hundred tokens at most. */
  maxDocumentChars: number;
  logger?: Logger;
}

/** Batches of one call in flight at once. */
const CONCURRENT_BATCHES = 4;

/**
 * `auto` picks `cohere` when a model is configured or the path carries an API version (`/v1/rerank`,
 * `/v2/rerank`), as Cohere, Jina and vLLM do; otherwise `tei`, whose `/rerank` serves a single model.
 */
export function resolveRerankProtocol(url: string, model: string | undefined, protocol: RerankProtocol | 'auto'): RerankProtocol {
  if (protocol !== 'auto') return protocol;
  return model !== undefined || /\/v\d+\/rerank\/?$/.test(new URL(url).pathname) ? 'cohere' : 'tei';
}

/** The endpoint answered, but not with scores; `maxBatchSize` when it said how many documents it takes. */
class RerankEndpointError extends Error {
  constructor(
    message: string,
    readonly maxBatchSize?: number,
  ) {
    super(message);
  }
}

/** A rerank endpoint over HTTP. Every failure is logged once and answered with null (see Reranker). */
export class HttpReranker implements Reranker {
  readonly model: string | undefined;
  readonly topK: number;
  readonly protocol: RerankProtocol;
  private batchSize: number;

  constructor(private readonly options: HttpRerankerOptions) {
    this.model = options.model;
    this.topK = options.topK;
    this.protocol = resolveRerankProtocol(options.url, options.model, options.protocol);
    this.batchSize = options.batchSize;
  }

  async rerank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[] | null> {
    if (signal?.aborted) return null;
    if (documents.length === 0) return [];
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    // One failed batch stops the others.
    const failed = new AbortController();
    const combined = AbortSignal.any([timeout, failed.signal, ...(signal ? [signal] : [])]);
    const cut = (text: string) => truncate(text, this.options.maxDocumentChars);
    try {
      return await this.scoreAll(cut(query), documents.map(cut), combined, failed);
    } catch (error) {
      if (signal?.aborted) return null; // the caller gave up: not the endpoint's failure
      const reason = timeout.aborted ? `no answer within ${this.options.timeoutMs} ms` : this.redact(describeFailure(error));
      this.options.logger?.warn(
        { endpoint: endpointForLogs(this.options.url), protocol: this.protocol, model: this.model, documents: documents.length, reason },
        'rerank endpoint failed; the unreranked order stands',
      );
      return null;
    }
  }

  private async scoreAll(query: string, texts: string[], signal: AbortSignal, failed: AbortController): Promise<number[]> {
    const scores = new Array<number>(texts.length);
    const size = this.batchSize;
    const starts: number[] = [];
    for (let start = 0; start < texts.length; start += size) starts.push(start);
    let next = 0;
    const runner = async () => {
      while (next < starts.length) {
        const start = starts[next++]!;
        const batch = await this.scoreBatch(query, texts.slice(start, start + size), signal);
        batch.forEach((score, i) => (scores[start + i] = score));
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENT_BATCHES, starts.length) }, () =>
        runner().catch((error: unknown) => {
          failed.abort(error);
          throw error;
        }),
      ),
    );
    return scores;
  }

  /** A batch the server refuses as too large is split to the maximum it names, which later calls keep to. */
  private async scoreBatch(query: string, texts: string[], signal: AbortSignal): Promise<number[]> {
    try {
      return await this.request(query, texts, signal);
    } catch (error) {
      const limit = error instanceof RerankEndpointError ? error.maxBatchSize : undefined;
      if (!limit || limit >= texts.length) throw error;
      this.batchSize = Math.min(this.batchSize, limit);
      const scores: number[] = [];
      for (let start = 0; start < texts.length; start += limit) scores.push(...(await this.request(query, texts.slice(start, start + limit), signal)));
      return scores;
    }
  }

  private async request(query: string, texts: string[], signal: AbortSignal): Promise<number[]> {
    const body =
      this.protocol === 'tei'
        ? // Normalised scores (sigmoid) stay comparable across batches; truncation at the model's limit beats a refusal.
          { query, texts, raw_scores: false, truncate: true }
        : { ...(this.model !== undefined ? { model: this.model } : {}), query, documents: texts, top_n: texts.length };
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const response = await fetch(this.options.url, { method: 'POST', headers, body: JSON.stringify(body), signal, redirect: 'manual' });
    const text = await response.text();
    if (response.status >= 300 && response.status < 400) {
      throw new RerankEndpointError(`answered ${response.status} (a redirect; not followed, so the key goes to the configured URL only)`);
    }
    if (!response.ok) throw new RerankEndpointError(`answered ${response.status}${describeError(text)}`, maxBatchSizeIn(text));
    return parseScores(text, texts.length);
  }

  private redact(message: string): string {
    const key = this.options.apiKey;
    return key ? message.split(key).join('[redacted]') : message;
  }
}

/**
 * Scores aligned with the `expected` documents from either protocol's answer (servers sort by score, so
 * they are placed by `index`); every document must be scored exactly once.
 */
function parseScores(text: string, expected: number): number[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RerankEndpointError(`answered with something other than JSON: ${JSON.stringify(text.slice(0, 120))}`);
  }
  const results = Array.isArray(body) ? body : (body as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new RerankEndpointError('answered without a list of results');
  const scores = new Array<number>(expected);
  for (const result of results as { index?: unknown; score?: unknown; relevance_score?: unknown }[]) {
    const index = result?.index;
    const score = result?.relevance_score ?? result?.score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || scores[index] !== undefined) {
      throw new RerankEndpointError(`answered an invalid or repeated index ${JSON.stringify(index)}`);
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) throw new RerankEndpointError(`answered a non-numeric score for index ${index}`);
    scores[index] = score;
  }
  if (results.length !== expected) throw new RerankEndpointError(`scored ${results.length} of ${expected} documents`);
  return scores;
}

/** TEI refuses larger batches with "batch size 64 > maximum allowed batch size 32"; OpenAI-style gateways use the same words. */
function maxBatchSizeIn(text: string): number | undefined {
  const match = /maximum allowed batch size (\d+)/i.exec(text);
  const limit = match ? Number(match[1]) : undefined;
  return limit && limit >= 1 ? limit : undefined;
}

/** At most `max` UTF-16 units, never splitting a surrogate pair. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

function describeFailure(error: unknown): string {
  return error instanceof RerankEndpointError ? error.message : `unreachable: ${describeNetworkError(error)}`;
}

/** Origin and path: no query string, which may carry a key. */
function endpointForLogs(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
