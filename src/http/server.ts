import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Document } from 'openapi-backend';
import type { OperationLimits } from '../graphql/operation-limits.js';
import type { Logger } from '../platform/logger.js';
import { restFacade } from '../rest/facade.js';
import type { Services } from '../services.js';
import { authenticate } from './authenticate.js';
import { cors, type CorsOrigins } from './cors.js';
import { httpMetrics, metricsEndpoint, type MetricsAccess } from './metrics.js';
import type { Metrics } from '../platform/metrics/metrics.js';
import { browserPagesRouter } from './browser-pages.js';
import { consoleRouter } from './console.js';
import { graphqlEndpoints } from './graphql-endpoints.js';
import { oauthCallbackRouter } from './oauth-callback-route.js';
import { OAUTH_CALLBACK_PATH } from '../modules/connections/oauth/callback-address.js';
import { mcpEndpoint } from '../mcp/http.js';
import { createMcpServer } from '../mcp/server.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, TOO_DEEP_MESSAGE } from '../shared/json-depth.js';

export const PATHS = { graphql: '/graphql', stream: '/graphql/stream', openapiJson: '/openapi.json', docs: '/docs', mcp: '/mcp' } as const;

export interface HttpAppOptions {
  schema: GraphQLSchema;
  openapi: Document;
  services: Services;
  logger: Logger;
  maxBodyBytes: number;
  /** Browser origins allowed by CORS; none: no CORS at all. */
  corsOrigins: CorsOrigins;
  metrics: Metrics;
  /** Who may read /metrics. */
  metricsAccess: MetricsAccess;
  /** How much one GraphQL operation may ask for, on every transport. */
  operationLimits: OperationLimits;
  /** How long an unused MCP session lives. */
  mcpSessionIdleSeconds: number;
  /** Readiness: resolves when the database (and Redis, when used) answer. */
  ready(): Promise<void>;
}

export interface HttpApp {
  app: express.Express;
  /** Shutdown has begun: /readyz answers 503 and responses ask clients to close their connection. */
  drain(): void;
  stop(): Promise<void>;
}

/**
 * The HTTP surface, by request phase: request id, access log and metrics → CORS → health and /metrics → public documents and
 * browser pages (the web console at /, GraphiQL, Swagger UI) → the OAuth callback → body parsing → credentials → MCP → GraphQL (SSE stream, then Apollo) → REST facade.
 */
export async function createHttpApp(options: HttpAppOptions): Promise<HttpApp> {
  const { services, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  let draining = false;

  app.use(requestLog(logger));
  app.use(httpMetrics(options.metrics, options.openapi, ['/', '/healthz', '/readyz', '/metrics', OAUTH_CALLBACK_PATH, ...Object.values(PATHS)]));
  app.use((_req, res, next) => {
    if (draining) res.setHeader('Connection', 'close');
    next();
  });
  // Before credentials: a preflight carries none.
  if (options.corsOrigins.length > 0) app.use(cors(options.corsOrigins));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (draining) {
      res.status(503).json({ detail: 'Shutting down' });
      return;
    }
    try {
      await options.ready();
      res.json({ status: 'ready' });
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      res.status(503).json({ detail: 'Not ready: a backing service does not answer' });
    }
  });
  app.get('/metrics', metricsEndpoint(options.metrics, options.metricsAccess));
  app.get(PATHS.openapiJson, (_req, res) => {
    res.json(options.openapi);
  });
  app.use(consoleRouter());
  app.use(browserPagesRouter({ graphqlPath: PATHS.graphql, streamPath: PATHS.stream, openapiJsonPath: PATHS.openapiJson, docsPath: PATHS.docs }));

  // Before credentials: the provider sends the browser back without any; the sign-in's state authenticates it.
  app.use(oauthCallbackRouter(services.oauthCallback, logger));

  app.use(express.json({ limit: options.maxBodyBytes, type: ['application/json', 'application/*+json'] }));
  app.use(refuseDeepJson);
  app.use(authenticate(services.auth));

  // MCP (Streamable HTTP): the tools run the same GraphQL operations and services in-process.
  const mcp = mcpEndpoint(createMcpServer({ schema: options.schema, services, limits: options.operationLimits, logger }), { idleMs: options.mcpSessionIdleSeconds * 1000, logger });
  app.all(PATHS.mcp, mcp.handle);

  const graphql = await graphqlEndpoints(options.schema, services, logger, options.operationLimits, PATHS.stream);
  app.use(PATHS.stream, distinctConnectionsOnly, graphql.streamHandler);
  app.use(PATHS.graphql, graphql.router);

  const rest = await restFacade(options.openapi, options.schema, services, logger, options.operationLimits);
  app.use(rest);

  app.use(errorHandler(logger));
  return {
    app,
    drain: () => {
      draining = true;
      mcp.drain();
    },
    stop: async () => {
      await mcp.close();
      await graphql.stop();
    },
  };
}

/**
 * graphql-sse's single-connection mode reserves a stream per PUT and keeps it until used: anyone
 * could pile them up. Only the distinct-connections mode (one request per operation) is offered.
 */
function distinctConnectionsOnly(req: Request, res: Response, next: NextFunction) {
  if (req.method === 'PUT' || req.headers['x-graphql-event-stream-token'] !== undefined || req.query.token !== undefined) {
    res.status(405).setHeader('Allow', 'GET, POST').json({ detail: 'Only the distinct connections mode of GraphQL over SSE is supported' });
    return;
  }
  next();
}

function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.locals.principal = null;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const principal = res.locals.principal;
      logger.info(
        {
          requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          organizationId: principal?.organizationId,
        },
        'request',
      );
    });
    next();
  };
}

/** The error type of a body that nests deeper than MAX_JSON_DEPTH (body-parser's own are `entity.*`). */
const JSON_TOO_DEEP = 'entity.too.deep';

/** Refuses a JSON body nested deeper than MAX_JSON_DEPTH, on every path, before anything walks it (answered as a body that does not parse is). */
function refuseDeepJson(req: Request, _res: Response, next: NextFunction) {
  if (nestsDeeperThan(req.body, MAX_JSON_DEPTH)) next(Object.assign(new Error(TOO_DEEP_MESSAGE), { type: JSON_TOO_DEEP, status: 400 }));
  else next();
}

/** Bodies refused before any handler, by error type: what the 422 issue (or GraphQL's 400 message) says. */
const REFUSED_BODIES = new Map<string | undefined, { msg: string; type: string }>([
  ['entity.parse.failed', { msg: 'JSON decode error', type: 'json_invalid' }],
  ['encoding.unsupported', { msg: 'Unsupported body encoding', type: 'json_invalid' }],
  ['charset.unsupported', { msg: 'Unsupported body encoding', type: 'json_invalid' }],
  [JSON_TOO_DEEP, { msg: TOO_DEEP_MESSAGE, type: 'value_error' }],
]);

/** Body-parser failures get the contract's shapes; anything else is logged and answered with a bare 500. */
function errorHandler(logger: Logger) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const type = (error as { type?: string }).type;
    if (res.headersSent) {
      res.end();
      return;
    }
    if (type === 'entity.too.large') {
      res.status(413).json({ detail: 'Request body too large' });
      return;
    }
    const refused = REFUSED_BODIES.get(type);
    if (refused) {
      if (req.path.startsWith(PATHS.graphql)) res.status(400).json({ errors: [{ message: refused.msg, extensions: { code: 'BAD_REQUEST' } }] });
      else res.status(422).json({ detail: [{ loc: ['body'], ...refused }] });
      return;
    }
    // Other request errors the body reader reports (a bad Content-Encoding, an aborted upload…) are the client's.
    const status = (error as { status?: number }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json({ detail: (error as Error).message || 'Bad request' });
      return;
    }
    logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
    res.status(500).json({ detail: 'Internal server error' });
  };
}

/** Stops accepting connections and waits for in-flight requests, up to `timeoutMs`. */
export function closeServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // Idle keep-alive sockets would hold close() open; open streams (SSE) end with the process.
    server.closeIdleConnections();
  });
}
