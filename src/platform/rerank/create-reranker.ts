import type { Config } from '../../config.js';
import type { Logger } from '../logger.js';
import { HttpReranker } from './http-reranker.js';
import type { Reranker } from './reranker.js';

type RerankConfig = Pick<
  Config,
  'rerankUrl' | 'rerankProtocol' | 'rerankModel' | 'rerankApiKey' | 'rerankTimeoutMs' | 'rerankTopK' | 'rerankBatchSize' | 'rerankMaxDocumentChars'
>;

/** The configured rerank endpoint; null when CATCHMENT_RERANK_URL is unset (search keeps its own order). */
export function createReranker(config: RerankConfig, logger: Logger): Reranker | null {
  if (!config.rerankUrl) return null;
  return new HttpReranker({
    url: config.rerankUrl,
    protocol: config.rerankProtocol,
    model: config.rerankModel,
    apiKey: config.rerankApiKey,
    timeoutMs: config.rerankTimeoutMs,
    topK: config.rerankTopK,
    batchSize: config.rerankBatchSize,
    maxDocumentChars: config.rerankMaxDocumentChars,
    logger,
  });
}
