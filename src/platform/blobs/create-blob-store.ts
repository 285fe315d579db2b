import type { Config } from '../../config.js';
import { FileBlobStore, type BlobStore } from './blob-store.js';
import { S3BlobStore } from './s3-blob-store.js';

type BlobStoreConfig = Pick<Config, 'dataDir' | 'rawStoreUrl' | 'rawStoreEndpoint' | 'rawStoreRegion' | 'rawStorePathStyle' | 'rawStoreAccessKeyId' | 'rawStoreSecretAccessKey'>;

/**
 * The raw data store: S3-compatible object storage when CATCHMENT_RAW_STORE_URL is set (the servers
 * deployment, where processes on several hosts share it), else files under the data directory.
 */
export function createBlobStore(config: BlobStoreConfig): BlobStore {
  if (!config.rawStoreUrl) return new FileBlobStore(config.dataDir);
  const endpoint = new URL(config.rawStoreEndpoint ?? `https://s3.${config.rawStoreRegion}.amazonaws.com`);
  return new S3BlobStore({
    endpoint,
    region: config.rawStoreRegion,
    bucket: config.rawStoreUrl.bucket,
    prefix: config.rawStoreUrl.prefix,
    pathStyle: config.rawStorePathStyle ?? config.rawStoreEndpoint !== undefined,
    // loadConfig refuses an s3:// store without both keys.
    keys: { accessKeyId: config.rawStoreAccessKeyId!, secretAccessKey: config.rawStoreSecretAccessKey! },
  });
}
