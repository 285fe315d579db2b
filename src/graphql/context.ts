import type { Principal } from '../modules/organizations/principal.js';
import type { RateLimitDecision } from '../platform/rate-limit/rate-limiter.js';
import type { Services } from '../services.js';

/** Per-operation context, the same whether the operation came over GraphQL or through the REST facade. */
export type GraphQLContext = {
  requestId: string;
  /** Null when the request carried no credentials (only introspection works then). */
  principal: Principal | null;
  services: Services;
  /** The latest rate-limit decision of this request, for the RateLimit-* response headers. */
  rateLimit: RateLimitDecision | null;
};
