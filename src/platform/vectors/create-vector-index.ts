import path from 'node:path';
import type { Config } from '../../config.js';
import type { Logger } from '../logger.js';
import type { LanceDbVectorIndexOptions } from './lancedb/connection.js';
import type { VectorIndex } from './vector-index.js';

/**
 * The vector index the configuration asks for: Weaviate when WEAVIATE_URL is set, else LanceDB files
 * under the data directory. Each adapter is imported only when chosen: the Weaviate client alone is
 * ~27 MiB of resident memory that an embedded deployment never uses.
 */
export async function createVectorIndex(
  config: Pick<Config, 'dataDir' | 'weaviateUrl' | 'weaviateApiKey' | 'weaviateGrpcPort' | 'lanceDbIndexCacheMb' | 'lanceDbShardRows'>,
  dimensions: number,
  logger: Pick<Logger, 'warn'>,
): Promise<VectorIndex> {
  if (config.weaviateUrl !== undefined) {
    const { WeaviateVectorIndex } = await import('./weaviate-index.js');
    return WeaviateVectorIndex.open({ url: config.weaviateUrl, apiKey: config.weaviateApiKey, grpcPort: config.weaviateGrpcPort, dimensions });
  }
  const { LanceDbVectorIndex } = await import('./lancedb/lancedb-index.js');
  return LanceDbVectorIndex.open(path.join(config.dataDir, 'lancedb'), dimensions, lanceDbOptions(config, logger));
}

/** How the configuration opens the embedded index: its index cache (CATCHMENT_LANCEDB_INDEX_CACHE_MB), its shards (CATCHMENT_LANCEDB_SHARD_ROWS) and where upkeep failures go. */
export function lanceDbOptions(config: Pick<Config, 'lanceDbIndexCacheMb' | 'lanceDbShardRows'>, logger: Pick<Logger, 'warn'>): LanceDbVectorIndexOptions {
  return {
    indexCacheBytes: config.lanceDbIndexCacheMb * 1024 * 1024,
    shardRows: config.lanceDbShardRows,
    onUpkeepError: (collectionId, error) =>
      logger.warn({ collectionId, err: error instanceof Error ? error.message : String(error) }, 'a compaction of the collection\'s chunk table failed; the searches that scan its rows queue it again, and its sync\'s end optimizes it'),
  };
}
