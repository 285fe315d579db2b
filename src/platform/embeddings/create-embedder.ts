import type { Logger } from '../logger.js';
import type { Embedder } from './embedder.js';
import { OpenAiCompatibleEmbedder } from './openai-embedder.js';
import { WordVectorEmbedder } from './word-vector-embedder.js';

export async function createEmbedder(
  config: { kind: 'builtin' | 'openai'; cacheDir: string; baseUrl?: string; apiKey?: string; model?: string; dimensions?: number },
  logger: Logger,
): Promise<Embedder> {
  if (config.kind === 'openai') {
    return new OpenAiCompatibleEmbedder({ baseUrl: config.baseUrl!, apiKey: config.apiKey, model: config.model!, dimensions: config.dimensions! });
  }
  return WordVectorEmbedder.open({ cacheDir: config.cacheDir, logger });
}
