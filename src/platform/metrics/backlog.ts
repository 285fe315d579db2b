import type { Orm } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { Backlog, Metrics } from './metrics.js';

/** The backlog gauges' one query: waiting and running sync jobs, the oldest wait, pending webhook deliveries. */
export function databaseBacklog(orm: Orm): () => Promise<Backlog> {
  return async () => {
    const [row] = await orm.em.getConnection().execute<{ pending: string; running: string; oldest: string | null; deliveries: string }[]>(
      `select
         (select count(*) from sync_jobs where status = 'PENDING') as pending,
         (select count(*) from sync_jobs where status = 'RUNNING') as running,
         (select extract(epoch from now() - min(created_at)) from sync_jobs where status = 'PENDING') as oldest,
         (select count(*) from webhook_deliveries where status in ('pending', 'sending')) as deliveries`,
    );
    return {
      syncJobsPending: Number(row!.pending),
      syncJobsRunning: Number(row!.running),
      oldestPendingSyncJobSeconds: Math.max(0, Number(row!.oldest ?? 0)),
      webhookDeliveriesPending: Number(row!.deliveries),
    };
  };
}

/** The embedder, its throughput counted. */
export function measuredEmbedder(embedder: Embedder, metrics: Metrics): Embedder {
  return {
    modelName: embedder.modelName,
    dimensions: embedder.dimensions,
    embed: async (texts, signal) => {
      const started = performance.now();
      const vectors = await embedder.embed(texts, signal);
      metrics.embedded(texts.length, (performance.now() - started) / 1000);
      return vectors;
    },
    close: () => embedder.close(),
  };
}
