import path from 'node:path';
import type { Config } from '../../config.js';
import { LanceDbVectorIndex } from './lancedb-index.js';
import type { VectorIndex } from './vector-index.js';
import { WeaviateVectorIndex } from './weaviate-index.js';

/** The vector index the configuration asks for: Weaviate when WEAVIATE_URL is set, else LanceDB files under the data directory. */
export async function createVectorIndex(
  config: Pick<Config, 'dataDir' | 'weaviateUrl' | 'weaviateApiKey' | 'weaviateGrpcPort'>,
  dimensions: number,
): Promise<VectorIndex> {
  if (config.weaviateUrl !== undefined) {
    return WeaviateVectorIndex.open({ url: config.weaviateUrl, apiKey: config.weaviateApiKey, grpcPort: config.weaviateGrpcPort, dimensions });
  }
  return LanceDbVectorIndex.open(path.join(config.dataDir, 'lancedb'), dimensions);
}
