import { SyncPipeline } from './modules/sync/pipeline.js';
import { SyncWorker } from './modules/sync/sync-worker.js';
import { DEFAULT_DELIVERY_OPTIONS, WebhookDeliveryWorker } from './modules/webhooks/delivery-worker.js';
import { deliverySchedule } from './modules/webhooks/retry-schedule.js';
import { VectorIndexOnFirstUse } from './platform/vectors/vector-index-on-first-use.js';
import { type Core, webhookTargetPolicy } from './core.js';

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
    logger,
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
