import 'reflect-metadata';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { embedderInfo, hybridKeywordWeight, isEmbedded, type Config } from './config.js';
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
import { OpenAiCompatibleModel } from './platform/llm/openai-compatible-model.js';
import { SourceService } from './modules/sources/source.service.js';
import { EntityStore } from './modules/sync/entity-store.js';
import { SyncPipeline } from './modules/sync/pipeline.js';
import { SyncWorker } from './modules/sync/sync-worker.js';
import { PushBatchService } from './modules/sync/push-batch.service.js';
import { CollectionReembedding } from './modules/sync/reembed.service.js';
import { SyncService } from './modules/sync/sync.service.js';
import { DEFAULT_DELIVERY_OPTIONS, WebhookDeliveryWorker } from './modules/webhooks/delivery-worker.js';
import { deliverySchedule } from './modules/webhooks/retry-schedule.js';
import { WebhookOutbox, WebhookService } from './modules/webhooks/webhook.service.js';
import type { BlobStore } from './platform/blobs/blob-store.js';
import { createBlobStore } from './platform/blobs/create-blob-store.js';
import { createEmbedder } from './platform/embeddings/create-embedder.js';
import { createReranker } from './platform/rerank/create-reranker.js';
import type { Embedder } from './platform/embeddings/embedder.js';
import { createVectorIndex } from './platform/vectors/create-vector-index.js';
import type { VectorIndex } from './platform/vectors/vector-index.js';
import { VectorIndexOnFirstUse } from './platform/vectors/vector-index-on-first-use.js';
import { graphqlSchema } from './graphql/schema.js';
import { workerHttpApp, type MetricsAccess } from './http/metrics.js';
import { closeServer, createHttpApp } from './http/server.js';
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
import { createRateLimiter } from './platform/rate-limit/rate-limiter.js';
import { BeeJobQueue } from './platform/queue/bee-queue.js';
import { InProcessQueue, type JobQueue } from './platform/queue/queue.js';
import { resolveEncryptionKey, SecretBox } from './platform/secrets/secrets.js';
import { loadOpenApiDocument } from './rest/facade.js';
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
    const rateLimiter = createRateLimiter({
      points: config.rateLimitRequests,
      windowSeconds: config.rateLimitWindowSeconds,
      redisUrl: config.redisUrl,
      keyPrefix: `${config.redisPrefix}:rl`,
      logger,
    });
    const searchRateLimiter = createRateLimiter({
      points: config.rateLimitRequests === 0 ? 0 : config.searchRateLimitRequests,
      windowSeconds: config.rateLimitWindowSeconds,
      redisUrl: config.redisUrl,
      keyPrefix: `${config.redisPrefix}:rl`,
      logger,
    });
    const secretBox = new SecretBox(resolveEncryptionKey(config.encryptionKey, config.dataDir));
    const info = embedderInfo(config);
    const metrics = new Metrics(databaseBacklog(database.orm));
    let vectors: Promise<VectorIndex> | undefined;
    let embedder: Promise<Embedder> | undefined;
    const openVectors = () => (vectors ??= createVectorIndex(config, info.dimensions));
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
    const collections = new CollectionService(database.orm, events, info, new ConnectionsOfCollections(database.orm, queue, () => connections));
    const search = new SearchService({
      orm: database.orm,
      vectors: openVectors,
      embedder: openEmbedder,
      keywordWeight: hybridKeywordWeight(config),
      federated: new FederatedSources(sources, { orm: database.orm, secretBox, operatorApps, allowPrivateNetworks, logger }, connectorEnvironment),
      languageModel: languageModel(config),
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
        await rateLimiter?.close();
        await searchRateLimiter?.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The chat model of classic planning, agentic search and legacy answers; null when none is configured. */
function languageModel(config: Config): LanguageModel | null {
  if (!config.llmUrl) return null;
  return new OpenAiCompatibleModel({ baseUrl: config.llmUrl, apiKey: config.llmApiKey, model: config.llmModel, timeoutMs: config.llmTimeoutSeconds * 1000 });
}

const webhookTargetPolicy = (config: Config) => ({ allowHttp: config.webhooksAllowHttp, allowPrivateTargets: config.webhooksAllowPrivateTargets });

/** The worker role: webhook deliveries, sync jobs, schedules, the janitor and cleanups. */
export async function startWorker(core: Core): Promise<{ stop(): Promise<void> }> {
  const { config, logger } = core;
  const deliveries = new WebhookDeliveryWorker(
    {
      orm: core.database.orm,
      pubsub: core.services.pubsub,
      secretBox: core.secretBox,
      policy: webhookTargetPolicy(config),
      logger,
      observer: { attempted: (outcome, seconds) => core.metrics.webhookAttempt(outcome, seconds) },
    },
    { ...DEFAULT_DELIVERY_OPTIONS, schedule: deliverySchedule() },
  );
  deliveries.start();
  // A start that fails past this point must not leave the delivery worker polling a closed database.
  const stopDeliveries = async (error: unknown): Promise<never> => {
    await deliveries.stop();
    throw error;
  };
  const embedder = await core.embedder().catch(stopDeliveries);
  // LanceDB files open on the first sync (an idle server holds no LanceDB); a Weaviate server is reached
  // now, so a wrong address fails the start instead of the first sync.
  const vectors = config.weaviateUrl === undefined ? new VectorIndexOnFirstUse(core.vectors) : await core.vectors().catch(stopDeliveries);
  const pipeline = new SyncPipeline({
    entities: core.entityStore,
    vectors,
    embedder,
    blobs: core.blobs,
    maxEntities: config.syncMaxEntities,
    batchSize: config.syncBatchSize,
  });
  const worker = new SyncWorker(
    {
      orm: core.database.orm,
      queue: core.queue,
      pubsub: core.services.pubsub,
      sync: core.services.sync,
      sources: core.services.sources,
      pipeline,
      blobs: core.blobs,
      vectors,
      secretBox: core.secretBox,
      environment: { ...core.connectorEnvironment, pushedBatches: core.services.push },
      events: core.services.events,
      operatorApps: core.services.operatorApps,
      allowPrivateNetworks: config.sourcesAllowPrivateNetworks,
      logger,
      starters: [core.services.push],
    },
    {
      concurrency: config.syncConcurrency,
      heartbeatSeconds: config.syncHeartbeatSeconds,
      staleRunningSeconds: config.syncStaleSeconds,
      cancelTimeoutSeconds: config.syncCancelTimeoutSeconds,
      scheduleMinIntervalSeconds: config.scheduleMinIntervalSeconds,
      tickSeconds: config.workerTickSeconds,
    },
  );
  await worker.start().catch(stopDeliveries);
  logger.info('worker ready');
  return {
    stop: async () => {
      await Promise.all([worker.stop(), deliveries.stop()]);
    },
  };
}

export interface Roles {
  /** Serve HTTP. */
  api: boolean;
  /** Run background jobs from the queue. */
  worker: boolean;
}

export interface RunningServer {
  core: Core;
  /** A worker-only process's is its metrics server, when CATCHMENT_WORKER_METRICS_PORT is set; otherwise null. */
  server: Server | null;
  /** Base URL the server listens on ('' for a worker-only process that serves no metrics). */
  url: string;
  /** The default organization's key, when this start created it (first start on an empty database). */
  bootstrapApiKey: string | null;
  /** The default organization's id, when this start created it. */
  bootstrapOrganizationId: string | null;
  stop(): Promise<void>;
}

/**
 * Starts the roles of one process: `start` runs both, `serve` the API, `worker` the worker. Job
 * handlers register on the queue here as features bring them (sync runs, webhook deliveries); a
 * worker with none registered idles until stopped.
 */
export async function startServer(config: Config, logger: Logger, roles: Roles = { api: true, worker: true }): Promise<RunningServer> {
  const core = await openCore(config, logger, { migrate: true, joinRunningServer: false });
  // Whatever started is stopped if a later step fails, so a failed start leaves no timer behind.
  let worker: { stop(): Promise<void> } | null = null;
  let httpStop: (() => Promise<void>) | null = null;
  try {
    const bootstrap = await core.services.organizations.bootstrap(config.bootstrapApiKey);
    if (config.oauthClientsFile) logger.info({ sources: await core.services.operatorApps.load(config.oauthClientsFile) }, 'operator OAuth apps registered from the clients file');
    worker = roles.worker ? await startWorker(core) : null;
    if (!roles.api) {
      const listening = config.workerMetricsPort === undefined ? null : await listen(workerHttpApp(core.metrics, metricsAccess(config)), { ...config, port: config.workerMetricsPort });
      return {
        core,
        server: listening?.server ?? null,
        url: listening?.url ?? '',
        bootstrapApiKey: bootstrap?.api_key ?? null,
        bootstrapOrganizationId: bootstrap?.organization.id ?? null,
        stop: async () => {
          try {
            if (listening) await closeServer(listening.server, 1000);
            await worker?.stop();
          } finally {
            await core.close();
          }
        },
      };
    }
    const http = await createHttpApp({
      schema: await graphqlSchema(),
      openapi: loadOpenApiDocument(),
      services: core.services,
      logger,
      maxBodyBytes: config.maxBodyBytes,
      corsOrigins: config.corsOrigins,
      metrics: core.metrics,
      metricsAccess: metricsAccess(config),
      operationLimits: { maxCost: config.graphqlMaxCost, maxDepth: config.graphqlMaxDepth },
      mcpSessionIdleSeconds: config.mcpSessionIdleSeconds,
      ready: async () => {
        await Promise.all([core.database.ping(), core.services.pubsub.ping()]);
      },
    });
    httpStop = () => http.stop();
    const { server, url } = await listen(http.app, config);
    core.oauthCallbackAddress.listeningOn(url);
    logger.info({ url, deployment: isEmbedded(config) ? 'embedded' : 'servers', worker: roles.worker }, 'listening');
    return {
      core,
      server,
      url,
      bootstrapApiKey: bootstrap?.api_key ?? null,
      bootstrapOrganizationId: bootstrap?.organization.id ?? null,
      stop: async () => {
        // Each step runs even if the one before failed: the worker's timers and the connections
        // must not outlive stop(), or the process never exits.
        try {
          http.drain(); // readiness fails and keep-alive connections close: balancers stop sending work
          core.services.pubsub.endSubscriptions(); // open streams complete, so close() is not held up by them
          await closeServer(server, config.shutdownTimeoutSeconds * 1000);
          logger.debug('shutdown: HTTP server closed');
          await http.stop();
        } finally {
          try {
            await worker?.stop();
            logger.debug('shutdown: worker stopped');
          } finally {
            await core.close();
            logger.debug('shutdown: connections closed');
          }
        }
      },
    };
  } catch (error) {
    await httpStop?.().catch((stopError: unknown) => logger.warn({ err: stopError }, 'stopping the HTTP app after a failed start failed'));
    await worker?.stop().catch((stopError: unknown) => logger.warn({ err: stopError }, 'stopping the worker after a failed start failed'));
    await core.close();
    throw error;
  }
}

const metricsAccess = (config: Config): MetricsAccess => (config.metricsEnabled ? { enabled: true, token: config.metricsToken } : { enabled: false });

/** Listens on `config.host`:`config.port`; resolves with the server and its URL (the port chosen when 0). */
async function listen(app: Express, config: Pick<Config, 'host' | 'port'>): Promise<{ server: Server; url: string }> {
  const server = await new Promise<Server>((resolve, reject) => {
    // Express 5 hands a listen error (EADDRINUSE…) to this callback instead of throwing it.
    const listening = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(listening)));
    listening.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return { server, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}` };
}
