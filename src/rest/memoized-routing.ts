import type { OpenAPIRouter } from 'openapi-backend';

/** Distinct method and path pairs whose route is remembered (paths carry ids, so they are many). */
const ROUTE_CACHE_SIZE = 5000;

/**
 * openapi-backend rebuilds its list of operations from the document (lodash chains, object
 * spreads), and compiles a RegExp per path template, on every routing, and routes each request
 * twice (the backend, then the validator): about half of its time per request. The document never
 * changes after init, so the list is built once and each method and path is routed once. The REST
 * facade's backend and the HTTP metrics' route labels both route through it.
 */
export function memoizeRouting(router: OpenAPIRouter): void {
  const list = router.getOperations();
  router.getOperations = () => list;
  const match = router.matchOperation.bind(router);
  const routes = new Map<string, ReturnType<typeof match>>();
  router.matchOperation = ((request: Parameters<typeof match>[0], strict?: boolean) => {
    const key = `${request.method} ${request.path}`;
    const known = routes.get(key);
    if (known) return known;
    const found = strict ? match(request, true) : match(request);
    if (found) {
      if (routes.size >= ROUTE_CACHE_SIZE) routes.clear();
      routes.set(key, found);
    }
    return found;
  }) as typeof router.matchOperation;
}
