import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How much work waits, read at scrape time from the database: the same answer in every process. */
export interface Backlog {
  syncJobsPending: number;
  syncJobsRunning: number;
  /** Age of the oldest PENDING job; 0 when none waits. */
  oldestPendingSyncJobSeconds: number;
  webhookDeliveriesPending: number;
}

export type SearchTier = 'instant' | 'classic' | 'agentic' | 'legacy';
export type WebhookAttemptOutcome = 'success' | 'retrying' | 'failed';

/** A finished sync job as the metrics see it. */
export interface FinishedSyncJob {
  status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  /** From PENDING to RUNNING; null when it never ran. */
  waitSeconds: number | null;
  /** From RUNNING to the end; null when it never ran. */
  runSeconds: number | null;
  entities: { inserted: number; updated: number; deleted: number; skipped: number; failed: number };
  chunks: number;
}

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200];

/**
 * The process's Prometheus metrics (one registry per process, so several servers in one test
 * process never share counters). Services report through small observer methods; the backlog
 * gauges are read at scrape time.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({ name: 'catchment_http_requests_total', help: 'HTTP requests by method, route template and status.', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  private readonly httpDuration = new Histogram({ name: 'catchment_http_request_duration_seconds', help: 'HTTP request latency (until the response is sent; streams until they end).', labelNames: ['method', 'route', 'status'], buckets: SECONDS_BUCKETS, registers: [this.registry] });
  private readonly searchDuration = new Histogram({ name: 'catchment_search_duration_seconds', help: 'Search latency by tier and outcome, on every transport.', labelNames: ['tier', 'outcome'], buckets: [...SECONDS_BUCKETS, 60, 120], registers: [this.registry] });
  private readonly syncJobs = new Counter({ name: 'catchment_sync_jobs_total', help: 'Sync jobs finished by this process, by final status.', labelNames: ['status'], registers: [this.registry] });
  private readonly syncRun = new Histogram({ name: 'catchment_sync_job_duration_seconds', help: 'Running time of finished sync jobs, by final status.', labelNames: ['status'], buckets: JOB_BUCKETS, registers: [this.registry] });
  private readonly syncWait = new Histogram({ name: 'catchment_sync_job_wait_seconds', help: 'Time sync jobs waited in the queue before a worker started them.', buckets: JOB_BUCKETS, registers: [this.registry] });
  private readonly syncEntities = new Counter({ name: 'catchment_sync_entities_total', help: 'Entities of finished sync jobs, by outcome.', labelNames: ['outcome'], registers: [this.registry] });
  private readonly syncChunks = new Counter({ name: 'catchment_sync_chunks_total', help: 'Chunks written by finished sync jobs.', registers: [this.registry] });
  private readonly webhookAttempts = new Counter({ name: 'catchment_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (success, retrying, failed: retries exhausted).', labelNames: ['outcome'], registers: [this.registry] });
  private readonly webhookDuration = new Histogram({ name: 'catchment_webhook_delivery_duration_seconds', help: 'Webhook delivery attempt latency, by outcome.', labelNames: ['outcome'], buckets: SECONDS_BUCKETS, registers: [this.registry] });
  private readonly embeddedTexts = new Counter({ name: 'catchment_embedded_texts_total', help: 'Texts embedded by this process.', registers: [this.registry] });
  private readonly embeddingDuration = new Histogram({ name: 'catchment_embedding_batch_duration_seconds', help: 'Latency of one embedding call (a batch of texts).', buckets: SECONDS_BUCKETS, registers: [this.registry] });

  constructor(backlog: () => Promise<Backlog>) {
    collectDefaultMetrics({ register: this.registry });
    // One database read per scrape feeds the four gauges. When the database does not answer they read
    // NaN (unknown) and the scrape still succeeds: the process metrics matter most during an outage.
    let reading: Promise<Backlog | null> | null = null;
    const read = () =>
      (reading ??= backlog()
        .catch(() => null)
        .finally(() => setTimeout(() => (reading = null), 0)));
    const gauge = (name: string, help: string, pick: (backlog: Backlog) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const current = await read();
          this.set(current === null ? Number.NaN : pick(current));
        },
      });
    gauge('catchment_sync_jobs_pending', 'Sync jobs waiting for a worker (the queue depth, deployment-wide).', (b) => b.syncJobsPending);
    gauge('catchment_sync_jobs_running', 'Sync jobs running now, deployment-wide.', (b) => b.syncJobsRunning);
    gauge('catchment_sync_oldest_pending_seconds', 'Age of the oldest sync job waiting for a worker; 0 when none waits.', (b) => b.oldestPendingSyncJobSeconds);
    gauge('catchment_webhook_deliveries_pending', 'Webhook deliveries waiting for their first or next attempt, deployment-wide.', (b) => b.webhookDeliveriesPending);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  searched(tier: SearchTier, outcome: 'ok' | 'error', seconds: number): void {
    this.searchDuration.observe({ tier, outcome }, seconds);
  }

  syncJobFinished(job: FinishedSyncJob): void {
    this.syncJobs.inc({ status: job.status });
    if (job.runSeconds !== null) this.syncRun.observe({ status: job.status }, job.runSeconds);
    if (job.waitSeconds !== null) this.syncWait.observe(job.waitSeconds);
    for (const [outcome, count] of Object.entries(job.entities)) if (count > 0) this.syncEntities.inc({ outcome }, count);
    if (job.chunks > 0) this.syncChunks.inc(job.chunks);
  }

  webhookAttempt(outcome: WebhookAttemptOutcome, seconds: number): void {
    this.webhookAttempts.inc({ outcome });
    this.webhookDuration.observe({ outcome }, seconds);
  }

  embedded(texts: number, seconds: number): void {
    this.embeddedTexts.inc(texts);
    this.embeddingDuration.observe(seconds);
  }
}
