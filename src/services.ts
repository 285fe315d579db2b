import type { AuthService } from './modules/organizations/auth.service.js';
import type { OrganizationService } from './modules/organizations/organization.service.js';
import type { CollectionEntities } from './modules/collections/collection-entities.js';
import type { CollectionService } from './modules/collections/collection.service.js';
import type { OAuthCallback } from './modules/connections/oauth/oauth-callback.js';
import type { OperatorOAuthApps } from './modules/connections/oauth/operator-apps.js';
import type { SourceConnectionService } from './modules/connections/source-connection.service.js';
import type { DocumentReader } from './modules/search/document-reader.js';
import type { SearchService } from './modules/search/search.service.js';
import type { SourceService } from './modules/sources/source.service.js';
import type { PushBatchService } from './modules/sync/push-batch.service.js';
import type { CollectionReembedding } from './modules/sync/reembed.service.js';
import type { SyncService } from './modules/sync/sync.service.js';
import type { WebhookService } from './modules/webhooks/webhook.service.js';
import type { EventBus } from './platform/events/event-bus.js';
import type { PubSub } from './platform/pubsub/pubsub.js';
import type { RateLimiter } from './platform/rate-limit/rate-limiter.js';

/** What resolvers reach through their context; assembled once by the composition root (core.ts). */
export interface Services {
  organizations: OrganizationService;
  auth: AuthService;
  collections: CollectionService;
  /** What collections hold: their entities listed and counted. */
  collectionEntities: CollectionEntities;
  sources: SourceService;
  connections: SourceConnectionService;
  /** The end of browser sign-ins (GET /oauth/callback). */
  oauthCallback: OAuthCallback;
  /** The OAuth apps the operator registered per source (CLI, clients file). */
  operatorApps: OperatorOAuthApps;
  sync: SyncService;
  /** Batches of entities sent to push connections. */
  push: PushBatchService;
  /** Re-embedding collections made by another embedding model. */
  reembed: CollectionReembedding;
  search: SearchService;
  /** Whole documents and their hierarchy, as search scopes them (MCP's read_document and browse). */
  documents: DocumentReader;
  webhooks: WebhookService;
  pubsub: PubSub;
  /** Lifecycle events (collection.*, source_connection.*, sync.*) per organization. */
  events: EventBus;
  /** Budgets of the resource families (collections, source connections, sources, webhooks); null when rate limiting is disabled. */
  rateLimiter: RateLimiter | null;
  /** The search family's budget (its own size); null when rate limiting or search limiting is disabled. */
  searchRateLimiter: RateLimiter | null;
}
