import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { OpenAPIRouter, type Document } from 'openapi-backend';
import type { Metrics } from '../platform/metrics/metrics.js';
import { memoizeRouting } from '../rest/memoized-routing.js';

/** Who may read /metrics: nobody (off), anyone who reaches the port, or a scraper with the bearer token. */
export type MetricsAccess = { enabled: false } | { enabled: true; token: string | undefined };

/**
 * Counts every request by its route template, never its raw path (ids would explode the label
 * set): the OpenAPI operation's path for REST, the fixed paths as they are, `unmatched` otherwise.
 */
export function httpMetrics(metrics: Metrics, openapi: Document, fixedPaths: readonly string[]) {
  const router = new OpenAPIRouter({ definition: openapi });
  // Labelled after every request: routed as the facade routes, not rebuilt and recompiled each time.
  memoizeRouting(router);
  const fixed = new Set(fixedPaths);
  const routeOf = (req: Request): string => {
    // The original path: mounted routers (GraphQL's) rewrite req.path while they handle the request.
    const pathname = new URL(req.originalUrl, 'http://localhost').pathname;
    if (fixed.has(pathname)) return pathname;
    const operation = router.matchOperation({ method: req.method, path: pathname, query: {}, headers: {} });
    return operation?.path ?? 'unmatched';
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => metrics.httpRequest(req.method, routeOf(req), res.statusCode, Number(process.hrtime.bigint() - started) / 1e9));
    next();
  };
}

/** The Prometheus text exposition, behind the configured access. */
export function metricsEndpoint(metrics: Metrics, access: MetricsAccess) {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  const expected = access.enabled && access.token ? digest(access.token) : null;
  return async (req: Request, res: Response) => {
    if (!access.enabled) {
      res.status(404).json({ detail: 'Not Found' });
      return;
    }
    if (expected) {
      const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!presented || !timingSafeEqual(digest(presented), expected)) {
        res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="metrics"').json({ detail: 'Not authenticated' });
        return;
      }
    }
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  };
}

/** A worker-only process's HTTP surface (CATCHMENT_WORKER_METRICS_PORT): liveness and its metrics, nothing else. */
export function workerHttpApp(metrics: Metrics, access: MetricsAccess): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/metrics', metricsEndpoint(metrics, access));
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ detail: 'Not Found' });
  });
  return app;
}
