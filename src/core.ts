import 'reflect-metadata';
import { embedderInfo, hybridKeywordWeight, type Config } from './config.js';
import { runRefusal, type ConnectorEnvironment } from './connectors/connector.js';
import { loadConnectors } from './connectors/registry.js';
import { WebClient } from './platform/http/web-client.js';
import { ConnectionsOfCollections } from './modules/connections/collection-connections.js';
import { OAuthCallbackAddress } from './modules/connections/oauth/callback-address.js';
import { OAuthCallback } from './modules/connections/oauth/oauth-callback.js';
import { OperatorOAuthApps } from './modules/connections/oauth/operator-apps.js';
import { OAuthSignIns } from './modules/connections/oauth/sign-in.js';
import { SourceConnectionService } from './modules/connections/source-connection.service.js';
import { FederatedSources } from './modules/search/federated-sources.js';
import { DocumentReader } from './modules/search/document-reader.js';
import { SearchService } from './modules/search/search.service.js';
import type { LanguageModel } from './platform/llm/language-model.js';
import { SourceService } from './modules/sources/source.service.js';
import { EntityStore } from './modules/sync/entity-store.js';
import { PushBatchService } from './modules/sync/push-batch.service.js';
import { CollectionReembedding } from './modules/sync/reembed.service.js';
import { SyncService } from './modules/sync/sync.service.js';
import { WebhookOutbox, WebhookService } from './modules/webhooks/webhook.service.js';
import type { BlobStore } from './platform/blobs/blob-store.js';
import { createBlobStore } from './platform/blobs/create-blob-store.js';
import { createEmbedder } from './platform/embeddings/create-embedder.js';
import { createReranker } from './platform/rerank/create-reranker.js';
import type { Embedder } from './platform/embeddings/embedder.js';
import { createVectorIndex } from './platform/vectors/create-vector-index.js';
import type { VectorIndex } from './platform/vectors/vector-index.js';
import { databaseBacklog, measuredEmbedder } from './platform/metrics/backlog.js';
import { Metrics } from './platform/metrics/metrics.js';
import { finishedSyncJob } from './modules/sync/sync-job-metrics.js';
import { AuthService } from './modules/organizations/auth.service.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { CollectionService } from './modules/collections/collection.service.js';
import { CollectionEntities } from './modules/collections/collection-entities.js';
import { protectDataDirectory } from './platform/data-directory.js';
import { openDatabase, type Database } from './platform/db/database.js';
import type { Logger } from './platform/logger.js';
import { EventBus } from './platform/events/event-bus.js';
import { InProcessPubSub, type PubSub } from './platform/pubsub/pubsub.js';
import { RedisPubSub } from './platform/pubsub/redis-pubsub.js';
import { createRateLimiter, RateLimitCounters } from './platform/rate-limit/rate-limiter.js';
import { BeeJobQueue } from './platform/queue/bee-queue.js';
import { InProcessQueue, type JobQueue } from './platform/queue/queue.js';
import { resolveEncryptionKey, SecretBox } from './platform/secrets/secrets.js';
import type { Services } from './services.js';

/**
 * The composition root: picks every adapter from configuration (embedded or servers) and wires
 * the services. Nothing else constructs infrastructure.
 */
export interface Core {
  config: Config;
  logger: Logger;
  database: Database;
  services: Services;
  queue: JobQueue;
  secretBox: SecretBox;
  blobs: BlobStore;
  entityStore: EntityStore;
  /** What connectors run with: local folder roots and the web client bound to the network policy. */
  connectorEnvironment: ConnectorEnvironment;
  /** This process's Prometheus metrics. */
  metrics: Metrics;
  /** Where OAuth providers send users back (told the listening address once the server listens). */
  oauthCallbackAddress: OAuthCallbackAddress;
  /** Opened on first use: API-only processes never load the index. */
  vectors(): Promise<VectorIndex>;
  /** Opened on first use: API-only processes never load the model. */
  embedder(): Promise<Embedder>;
  close(): Promise<void>;
}

/** How long a start waits for the rate limits' Redis to answer before it serves with the in-memory stand-in counting. */
const RATE_LIMIT_CONNECT_WAIT_MS = 1000;

export async function openCore(config: Config, logger: Logger, options: { migrate: boolean; joinRunningServer: boolean }): Promise<Core> {
  // Before anything is created: the database, raw data, index and key are for this user only.
  protectDataDirectory(config.dataDir, logger);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    logger,
    joinRunningServer: options.joinRunningServer,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
  });
  try {
    if (options.migrate) {
      const applied = await database.migrate();
      if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    }
    const pubsub: PubSub = config.redisUrl ? new RedisPubSub(config.redisUrl, `${config.redisPrefix}:`, logger) : new InProcessPubSub();
    const queue: JobQueue = config.redisUrl ? new BeeJobQueue(config.redisUrl, { prefix: config.redisPrefix, logger }) : new InProcessQueue();
    // One Redis connection counts for both limiters (their keys differ by family, see consumeRateLimit); none without limits.
    const rateLimitCounters = config.rateLimitRequests === 0 ? null : RateLimitCounters.open({ redisUrl: config.redisUrl, keyPrefix: `${config.redisPrefix}:rl` });
    const limiter = (points: number) => rateLimitCounters && createRateLimiter({ points, windowSeconds: config.rateLimitWindowSeconds, counters: rateLimitCounters, logger });
    const rateLimiter = limiter(config.rateLimitRequests);
    const searchRateLimiter = limiter(config.searchRateLimitRequests);
    // A replica's first requests count in the deployment's shared counters, unless Redis does not answer soon.
    await rateLimitCounters?.connected(RATE_LIMIT_CONNECT_WAIT_MS);
    const secretBox = new SecretBox(resolveEncryptionKey(config.encryptionKey, config.dataDir));
    const info = embedderInfo(config);
    const metrics = new Metrics(databaseBacklog(database.orm));
    let vectors: Promise<VectorIndex> | undefined;
    let embedder: Promise<Embedder> | undefined;
    const openVectors = () => (vectors ??= createVectorIndex(config, info.dimensions, logger));
    const openEmbedder = () =>
      (embedder ??= createEmbedder(
        {
          kind: config.embedder,
          cacheDir: config.cacheDir,
          baseUrl: config.embeddingUrl,
          apiKey: config.embeddingApiKey,
          model: config.embeddingModel,
          dimensions: config.embeddingDimensions,
        },
        logger,
      ).then((opened) => measuredEmbedder(opened, metrics)));
    const organizations = new OrganizationService(database.orm);
    const events = new EventBus(pubsub, new WebhookOutbox());
    const connectors = await loadConnectors();
    const operatorApps = new OperatorOAuthApps(database.orm, secretBox, connectors);
    const oauthCallbackAddress = new OAuthCallbackAddress(config.publicUrl);
    const sources = new SourceService(connectors, operatorApps, oauthCallbackAddress);
    const sync = new SyncService(database.orm, queue, events, pubsub, (connection) => runRefusal(sources.connector(connection.shortName), connection.config));
    const push = new PushBatchService(database.orm, sources, sync, logger);
    sync.onJobFinished((job) => push.jobFinished(job));
    sync.onJobFinished(async (job) => metrics.syncJobFinished(finishedSyncJob(job)));
    const entityStore = new EntityStore(database.orm);
    const connectorEnvironment: ConnectorEnvironment = {
      localFolderRoots: config.localFolderRoots,
      webClient: new WebClient({ allowPrivateNetworks: config.sourcesAllowPrivateNetworks }),
    };
    const signIns = new OAuthSignIns(database.orm, secretBox, operatorApps, oauthCallbackAddress);
    const allowPrivateNetworks = config.sourcesAllowPrivateNetworks;
    const connections = new SourceConnectionService({
      orm: database.orm,
      sources,
      sync,
      entityStore,
      events,
      queue,
      secretBox,
      environment: connectorEnvironment,
      allowPrivateNetworks,
      operatorApps,
      signIns,
      logger,
      scheduleMinIntervalSeconds: config.scheduleMinIntervalSeconds,
    });
    const oauthCallback = new OAuthCallback({ orm: database.orm, secretBox, sources, signIns, operatorApps, events, sync, allowPrivateNetworks, logger });
    const collections = new CollectionService(database.orm, events, info, new ConnectionsOfCollections(database.orm, () => connections));
    const search = new SearchService({
      orm: database.orm,
      vectors: openVectors,
      embedder: openEmbedder,
      keywordWeight: hybridKeywordWeight(config),
      federated: new FederatedSources(sources, { orm: database.orm, secretBox, operatorApps, allowPrivateNetworks, logger }, connectorEnvironment),
      languageModel: await languageModel(config),
      reranker: createReranker(config, logger),
      agenticBudget: { maxIterations: config.agenticMaxIterations, timeoutMs: config.agenticTimeoutSeconds * 1000 },
      logger,
      observer: { searched: (tier, outcome, seconds) => metrics.searched(tier, outcome, seconds) },
    });
    const services: Services = {
      organizations,
      auth: new AuthService(database.orm, secretBox, organizations, config.tokenTtlSeconds),
      collections,
      collectionEntities: new CollectionEntities(database.orm, collections),
      sources,
      connections,
      oauthCallback,
      operatorApps,
      sync,
      push,
      reembed: new CollectionReembedding({ orm: database.orm, sources, sync, entities: entityStore, collections, vectors: openVectors, embedding: info }),
      search,
      documents: new DocumentReader(database.orm, search.retrieval),
      webhooks: new WebhookService(database.orm, secretBox, pubsub, webhookTargetPolicy(config)),
      pubsub,
      events,
      rateLimiter,
      searchRateLimiter,
    };

    return {
      config,
      logger,
      database,
      services,
      queue,
      secretBox,
      blobs: createBlobStore(config),
      entityStore,
      connectorEnvironment,
      metrics,
      oauthCallbackAddress,
      vectors: openVectors,
      embedder: openEmbedder,
      close: async () => {
        await queue.close();
        if (vectors) await (await vectors).close();
        if (embedder) await (await embedder).close();
        await pubsub.close();
        await connectorEnvironment.webClient.close();
        await rateLimitCounters?.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * The chat model of classic planning, agentic search and legacy answers; null when none is configured.
 * The AI SDK is loaded only then: its modules held ~8 MiB of an idle server's V8 heap otherwise.
 */
async function languageModel(config: Config): Promise<LanguageModel | null> {
  if (!config.llmUrl) return null;
  const { OpenAiCompatibleModel } = await import('./platform/llm/openai-compatible-model.js');
  return new OpenAiCompatibleModel({ baseUrl: config.llmUrl, apiKey: config.llmApiKey, model: config.llmModel, timeoutMs: config.llmTimeoutSeconds * 1000 });
}

/** How far webhook targets may point: the delivery worker checks each attempt against the same policy. */
export const webhookTargetPolicy = (config: Config) => ({ allowHttp: config.webhooksAllowHttp, allowPrivateTargets: config.webhooksAllowPrivateTargets });

