import 'reflect-metadata';
import type { Server } from 'node:http';
import { isEmbedded, type Config } from './config.js';
import { graphqlSchema } from './graphql/schema.js';
import { closeServer, createHttpApp } from './http/server.js';
import { AuthService } from './modules/organizations/auth.service.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { CollectionService } from './modules/collections/collection.service.js';
import { openDatabase, type Database } from './platform/db/database.js';
import type { Logger } from './platform/logger.js';
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
  close(): Promise<void>;
}

export async function openCore(config: Config, logger: Logger, options: { migrate: boolean }): Promise<Core> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteHost: config.pgliteHost,
    pglitePort: config.pglitePort,
    logger,
  });
  try {
    if (options.migrate) {
      const applied = await database.migrate();
      if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    }
    const pubsub: PubSub = config.redisUrl ? new RedisPubSub(config.redisUrl) : new InProcessPubSub();
    const queue: JobQueue = config.redisUrl ? new BeeJobQueue(config.redisUrl) : new InProcessQueue();
    const rateLimiter = createRateLimiter({ points: config.rateLimitRequests, windowSeconds: config.rateLimitWindowSeconds, redisUrl: config.redisUrl });
    const secretBox = new SecretBox(resolveEncryptionKey(config.encryptionKey, config.dataDir));
    const organizations = new OrganizationService(database.orm);
    const services: Services = {
      organizations,
      auth: new AuthService(database.orm, secretBox, organizations, config.tokenTtlSeconds),
      collections: new CollectionService(database.orm, pubsub, { modelName: config.embeddingModel, dimensions: config.embeddingDimensions }),
      pubsub,
      rateLimiter,
    };
    return {
      config,
      logger,
      database,
      services,
      queue,
      close: async () => {
        await queue.close();
        await pubsub.close();
        await rateLimiter?.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

export interface Roles {
  /** Serve HTTP. */
  api: boolean;
  /** Run background jobs from the queue. */
  worker: boolean;
}

export interface RunningServer {
  core: Core;
  /** Null for a worker-only process. */
  server: Server | null;
  /** Base URL the server listens on ('' for a worker-only process). */
  url: string;
  /** The default organization's key, when this start created it (first start on an empty database). */
  bootstrapApiKey: string | null;
  stop(): Promise<void>;
}

/**
 * Starts the roles of one process: `start` runs both, `serve` the API, `worker` the worker. Job
 * handlers register on the queue here as features bring them (sync runs, webhook deliveries); a
 * worker with none registered idles until stopped.
 */
export async function startServer(config: Config, logger: Logger, roles: Roles = { api: true, worker: true }): Promise<RunningServer> {
  const core = await openCore(config, logger, { migrate: true });
  try {
    const bootstrap = await core.services.organizations.bootstrap(config.bootstrapApiKey);
    if (roles.worker) logger.info('worker ready');
    if (!roles.api) {
      return { core, server: null, url: '', bootstrapApiKey: bootstrap?.api_key ?? null, stop: () => core.close() };
    }
    const http = await createHttpApp({
      schema: await graphqlSchema(),
      openapi: loadOpenApiDocument(),
      services: core.services,
      logger,
      maxBodyBytes: config.maxBodyBytes,
      ready: async () => {
        await core.database.ping();
      },
    });
    const server = await new Promise<Server>((resolve, reject) => {
      const listening = http.app.listen(config.port, config.host, () => resolve(listening));
      listening.once('error', reject);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    logger.info({ url, deployment: isEmbedded(config) ? 'embedded' : 'servers', worker: roles.worker }, 'listening');
    return {
      core,
      server,
      url,
      bootstrapApiKey: bootstrap?.api_key ?? null,
      stop: async () => {
        await core.services.pubsub.close(); // ends open subscription streams so close() is not held up
        await closeServer(server, config.shutdownTimeoutSeconds * 1000);
        await http.stop();
        await core.close();
      },
    };
  } catch (error) {
    await core.close();
    throw error;
  }
}
