import type { Logger } from '../logger.js';
import { retryAfterMs as retryAfterOf } from '../http/retry-after.js';
import type { Embedder } from './embedder.js';
import { describeError, describeNetworkError } from '../http-errors.js';

export interface OpenAiEmbedderOptions {
  /** E.g. `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), `http://tei:80/v1`; requests go to `<baseUrl>/embeddings`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. Never logged, and removed from error messages. */
  apiKey?: string;
  model: string;
  /** Size of the vectors the model returns; every vector is checked against it. */
  dimensions: number;
  /**
   * Also send `dimensions` in each request, asking the model to shorten its vectors (OpenAI's
   * text-embedding-3 models, some vLLM models). Off by default: many servers and models reject the field.
   */
  requestDimensions?: boolean;
  /** Texts per request (default 96). */
  batchSize?: number;
  /** Requests in flight at once for one `embed` call (default 1). */
  concurrency?: number;
  /** Per attempt, including reading the response (default 30 s). */
  timeoutMs?: number;
  /** Retries of 408, 429, 5xx, timeouts and network errors (default 4, so at most 5 attempts). */
  maxRetries?: number;
  /** First backoff delay, doubled on each retry, ±20 % jitter (default 500 ms). */
  retryBaseMs?: number;
  /** Longest wait between attempts, a server's Retry-After included (default 60 s). */
  maxRetryDelayMs?: number;
  logger?: Logger;
}

/** A failed call to the embeddings endpoint; `status` is the HTTP status when there was a response. */
export class EmbeddingEndpointError extends Error {
  override readonly name = 'EmbeddingEndpointError';
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
  ) {
    super(message);
  }
}

interface EmbeddingsResponse {
  data?: { index?: unknown; embedding?: unknown }[];
}

/**
 * Any endpoint speaking OpenAI's embeddings protocol (OpenAI, Azure-style gateways, Ollama, vLLM, TEI,
 * LiteLLM…): POST `<baseUrl>/embeddings` with `{model, input: string[]}`, vectors read back by `index`
 * (servers may answer out of order), checked against `dimensions` and L2-normalised. Retries 408, 429,
 * 5xx, timeouts and network errors with exponential backoff, honouring `Retry-After` / `retry-after-ms`.
 */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly modelName: string;
  readonly dimensions: number;
  private readonly url: string;
  private readonly options: Required<Omit<OpenAiEmbedderOptions, 'apiKey' | 'logger'>> & Pick<OpenAiEmbedderOptions, 'apiKey' | 'logger'>;
  private readonly closing = new AbortController();

  constructor(options: OpenAiEmbedderOptions) {
    if (!options.baseUrl) throw new Error('The embeddings endpoint needs a base URL');
    if (!options.model) throw new Error('The embeddings endpoint needs a model name');
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0) throw new Error(`Invalid embedding dimensions: ${options.dimensions}`);
    this.options = {
      requestDimensions: false,
      batchSize: 96,
      concurrency: 1,
      timeoutMs: 30_000,
      maxRetries: 4,
      retryBaseMs: 500,
      maxRetryDelayMs: 60_000,
      ...options,
    };
    if (!(this.options.batchSize >= 1)) throw new Error(`Invalid embedding batch size: ${this.options.batchSize}`);
    this.modelName = options.model;
    this.dimensions = options.dimensions;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    this.closing.signal.throwIfAborted();
    const vectors = new Array<Float32Array>(texts.length);
    const { batchSize, concurrency } = this.options;
    const starts: number[] = [];
    for (let start = 0; start < texts.length; start += batchSize) starts.push(start);
    // One failed batch stops the others; the caller's signal and close() stop them all.
    const failed = new AbortController();
    const combined = AbortSignal.any([failed.signal, this.closing.signal, ...(signal ? [signal] : [])]);
    let next = 0;
    const runner = async () => {
      while (next < starts.length) {
        combined.throwIfAborted();
        const start = starts[next++]!;
        const batch = await this.request(texts.slice(start, start + batchSize), combined);
        batch.forEach((vector, i) => (vectors[start + i] = vector));
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), starts.length) }, () => runner().catch((error: unknown) => {
        failed.abort(error);
        throw error;
      })));
    } catch (error) {
      // Report the first cause: the caller's abort reason, or the batch that failed first.
      if (signal?.aborted) throw signal.reason;
      throw failed.signal.aborted ? failed.signal.reason : error;
    }
    return vectors;
  }

  async close(): Promise<void> {
    this.closing.abort(new Error('The embedder is closed'));
  }

  private async request(input: string[], signal: AbortSignal): Promise<Float32Array[]> {
    const { maxRetries, timeoutMs } = this.options;
    const body = JSON.stringify({
      model: this.options.model,
      // OpenAI rejects empty strings; a single space embeds as "nothing" everywhere.
      input: input.map((text) => (text === '' ? ' ' : text)),
      ...(this.options.requestDimensions ? { dimensions: this.dimensions } : {}),
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    for (let attempt = 0; ; attempt++) {
      signal.throwIfAborted();
      const timeout = AbortSignal.timeout(timeoutMs);
      let failure: EmbeddingEndpointError;
      let retryAfterMs: number | undefined;
      try {
        const response = await fetch(this.url, { method: 'POST', headers, body, signal: AbortSignal.any([signal, timeout]) });
        const text = await response.text();
        if (response.ok) return this.parse(text, input.length);
        retryAfterMs = retryAfterOf(response.headers) ?? undefined;
        const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
        failure = new EmbeddingEndpointError(
          `Embedding endpoint ${this.safeUrl()} answered ${response.status}${describeError(text)}`,
          response.status,
          retryable,
        );
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (error instanceof EmbeddingEndpointError) throw this.redact(error);
        failure = timeout.aborted
          ? new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} did not answer within ${timeoutMs} ms`, undefined, true)
          : new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} unreachable: ${describeNetworkError(error)}`, undefined, true);
      }
      if (!failure.retryable) throw this.redact(failure);
      if (attempt >= maxRetries) {
        throw this.redact(new EmbeddingEndpointError(`${failure.message} after ${attempt + 1} attempts`, failure.status, true));
      }
      const delayMs = Math.min(this.options.maxRetryDelayMs, retryAfterMs ?? this.backoff(attempt));
      this.options.logger?.warn(
        { endpoint: this.safeUrl(), model: this.options.model, status: failure.status, attempt: attempt + 1, delayMs: Math.round(delayMs) },
        'embedding endpoint: retrying',
      );
      await sleep(delayMs, signal);
    }
  }

  private parse(text: string, expected: number): Float32Array[] {
    let body: EmbeddingsResponse;
    try {
      body = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} answered with something other than JSON: ${JSON.stringify(text.slice(0, 120))}`);
    }
    const data = body?.data;
    if (!Array.isArray(data)) throw new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} answered without a "data" list`);
    if (data.length !== expected) throw new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} returned ${data.length} vectors for ${expected} inputs`);
    const vectors = new Array<Float32Array>(expected);
    const positional = data.every((item) => item.index === undefined); // some servers leave `index` out
    data.forEach((item, position) => {
      const index = positional ? position : item.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || vectors[index]) {
        throw new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} returned an invalid or repeated index ${JSON.stringify(index)}`);
      }
      const embedding = item.embedding;
      if (!Array.isArray(embedding)) throw new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} returned a non-array embedding (base64 encoding is not supported)`);
      if (embedding.length !== this.dimensions) {
        throw new EmbeddingEndpointError(
          `Embedding model ${this.options.model} returned ${embedding.length}-dimensional vectors, but the configured dimensions ` +
            `(CATCHMENT_EMBEDDING_DIMENSIONS) are ${this.dimensions}` +
            (embedding.length > this.dimensions && !this.options.requestDimensions ? '; set the dimensions to match, or ask the model for shorter vectors if it supports that' : ''),
        );
      }
      vectors[index] = normalise(embedding, () => new EmbeddingEndpointError(`Embedding endpoint ${this.safeUrl()} returned a vector with non-numeric or non-finite values`));
    });
    return vectors;
  }

  private backoff(attempt: number): number {
    return this.options.retryBaseMs * 2 ** attempt * (0.8 + Math.random() * 0.4);
  }

  /** The endpoint without credentials in the URL (for logs and messages). */
  private safeUrl(): string {
    try {
      const url = new URL(this.url);
      url.username = '';
      url.password = '';
      url.search = '';
      return url.toString();
    } catch {
      return '(invalid URL)';
    }
  }

  private redact(error: EmbeddingEndpointError): EmbeddingEndpointError {
    const key = this.options.apiKey;
    if (key && error.message.includes(key)) {
      return new EmbeddingEndpointError(error.message.split(key).join('[redacted]'), error.status, error.retryable);
    }
    return error;
  }
}

function normalise(values: unknown[], invalid: () => Error): Float32Array {
  const vector = new Float32Array(values.length);
  let norm = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid();
    norm += value * value;
    vector[i] = value;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
