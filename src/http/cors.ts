import type { NextFunction, Request, Response } from 'express';

/** Which browser origins may call the API: a list of exact origins, or any origin. */
export type CorsOrigins = readonly string[] | '*';

/** Request headers a browser client may send: credentials, bodies, MCP sessions and SSE resumption. */
const ALLOWED_HEADERS = ['Authorization', 'X-API-Key', 'Content-Type', 'Accept', 'X-Request-Id', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID'];
/** Response headers a browser client may read beyond the safelisted ones. */
const EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'Location', 'Mcp-Session-Id', 'Mcp-Protocol-Version'];
const ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * CORS for every path (REST, GraphQL, its SSE stream, MCP). Credentials travel in headers, never
 * cookies, so no Access-Control-Allow-Credentials is needed. A preflight from a listed origin is
 * answered here (204), before authentication; one from any other origin is refused (403) so the
 * browser reports a CORS failure instead of reaching the route.
 */
export function cors(origins: CorsOrigins) {
  const allowed = (origin: string) => origins === '*' || origins.includes(origin);
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (origin === undefined) {
      next();
      return;
    }
    res.vary('Origin');
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!allowed(origin)) {
      if (preflight) res.status(403).json({ detail: 'Origin not allowed' });
      else next(); // the browser withholds the answer: no Access-Control-Allow-Origin
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origins === '*' ? '*' : origin);
    if (!preflight) {
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS.join(', '));
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS.join(', '));
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}
