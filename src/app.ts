import 'reflect-metadata';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { isEmbedded, type Config } from './config.js';
import { graphqlSchema } from './graphql/schema.js';
import { workerHttpApp, type MetricsAccess } from './http/metrics.js';
import { closeServer, createHttpApp } from './http/server.js';
import type { Logger } from './platform/logger.js';
import { loadOpenApiDocument } from './rest/facade.js';
import { type Core, openCore } from './core.js';
import { startWorker } from './worker.js';


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
