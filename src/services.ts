import type { AuthService } from './modules/organizations/auth.service.js';
import type { OrganizationService } from './modules/organizations/organization.service.js';
import type { CollectionService } from './modules/collections/collection.service.js';
import type { PubSub } from './platform/pubsub/pubsub.js';
import type { RateLimiter } from './platform/rate-limit/rate-limiter.js';

/** What resolvers reach through their context; assembled once by the composition root (app.ts). */
export interface Services {
  organizations: OrganizationService;
  auth: AuthService;
  collections: CollectionService;
  pubsub: PubSub;
  /** Null when rate limiting is disabled. */
  rateLimiter: RateLimiter | null;
}
