import { setTimeout as sleep } from 'node:timers/promises';
import type { Embedder } from './embedder.js';

export interface OpenAiEmbedderOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  dimensions: number;
  batchSize?: number;
  timeoutMs?: number;
  maxRetries?: number;
}

/**
 * Any endpoint speaking OpenAI's embeddings protocol (OpenAI, Ollama, vLLM, TEI…): POST
 * `<baseUrl>/embeddings` with `{model, input}`. Retries 429 and 5xx with backoff (honouring
 * Retry-After) and checks every vector's size.
 */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly modelName: string;
  readonly dimensions: number;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.modelName = options.model;
    this.dimensions = options.dimensions;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    const batchSize = this.options.batchSize ?? 96;
    for (let start = 0; start < texts.length; start += batchSize) {
      vectors.push(...(await this.request(texts.slice(start, start + batchSize), signal)));
    }
    return vectors;
  }

  private async request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const maxRetries = this.options.maxRetries ?? 4;
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 30_000);
      let response: Response;
      try {
        response = await fetch(`${this.options.baseUrl.replace(/\/$/, '')}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
          body: JSON.stringify({ model: this.options.model, input }),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        if (signal?.aborted || attempt >= maxRetries) throw new Error(`Embedding request failed: ${(error as Error).message}`);
        await sleep(250 * 2 ** attempt, undefined, { signal });
        continue;
      }
      if (response.status === 429 || response.status >= 500) {
        await response.arrayBuffer();
        if (attempt >= maxRetries) throw new Error(`Embedding endpoint answered ${response.status} after ${attempt + 1} attempts`);
        const retryAfter = Number(response.headers.get('retry-after'));
        await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 250 * 2 ** attempt, undefined, { signal });
        continue;
      }
      if (!response.ok) throw new Error(`Embedding endpoint answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      const body = (await response.json()) as { data: { index: number; embedding: number[] }[] };
      const vectors = new Array<Float32Array>(input.length);
      for (const item of body.data) {
        if (item.embedding.length !== this.dimensions) {
          throw new Error(`Embedding endpoint returned ${item.embedding.length} dimensions; CATCHMENT_EMBEDDING_DIMENSIONS is ${this.dimensions}`);
        }
        vectors[item.index] = normalize(Float32Array.from(item.embedding));
      }
      if (vectors.some((vector) => vector === undefined)) throw new Error('Embedding endpoint returned fewer vectors than inputs');
      return vectors;
    }
  }

  async close(): Promise<void> {}
}

function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  return vector.map((value) => value / norm);
}
