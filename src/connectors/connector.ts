import type { z } from 'zod';
import type { Logger } from '../platform/logger.js';
import type { AuthHeaders, ConnectorAuth } from './contract/auth.js';
import type { RequestRate, SourceHttpClient, TokenProvider } from './contract/source-http.js';
import type { WebClient } from '../platform/http/web-client.js';

/**
 * A source type. Each lives in `src/connectors/<short_name>/index.ts` and default-exports a
 * Connector; the registry (./registry.ts) lists them, so adding a source is adding a folder.
 */
export type AuthMethod = 'direct' | 'oauth_browser' | 'oauth_token' | 'oauth_byoc' | 'auth_provider';

export interface Breadcrumb {
  entityId: string;
  name: string;
  entityType: string;
}

/** What a source yields for each item it holds. */
export interface SourceEntity {
  /** Stable id of the item in the source (unique per connection). */
  entityId: string;
  /** Kind of item, e.g. `file`, `folder`, `stub_document`. */
  entityType: string;
  name: string;
  /** Ancestors from the root down, for hierarchy navigation and filters. */
  breadcrumbs: Breadcrumb[];
  createdAt: Date | null;
  updatedAt: Date | null;
  /** Semantically searchable text (what gets chunked and embedded). */
  text: string;
  /** Source-specific typed fields, returned to searchers as `raw_source_fields`. */
  fields: Record<string, unknown>;
  /** Link to the item in its source application. */
  webUrl: string;
  /** Present for file items; its bytes are kept by the raw data store and count in the content hash. */
  file?: { name: string; mimeType: string; size: number; bytes: Buffer };
  /** Programming language when the text is source code (chunked along code structure). */
  language?: string;
  access?: { viewers: string[] | null; isPublic: boolean | null };
}

/**
 * A run's stream. Besides entities, an incremental source may say an item is still there and
 * unchanged (`keep`, so it is neither re-read nor deleted) or that it is gone (`delete`).
 */
export type SourceItem = SourceEntity | { keep: string } | { delete: string };

export interface SyncContext<Config = Record<string, unknown>, Credentials = unknown, Cursor = unknown> {
  /** Config parsed by the connector's `config` schema (defaults applied). */
  config: Config;
  /**
   * Credentials parsed by the connector's schema: its `fields`, or the token pasted instead of OAuth
   * (`auth.pasted`). Null for sources without credentials and for OAuth-connected connections, whose
   * token comes from `tokens` (and is attached by `http` on its own).
   */
  credentials: Credentials | null;
  /**
   * Where to continue: the cursor the previous successful run stored, or the last checkpoint of a run
   * that failed or was cancelled, parsed by the connector's `cursor` schema. Null for a full sync, and
   * when a stored cursor no longer parses (the connector changed: a full sync is the safe answer).
   */
  cursor: Cursor | null;
  /** True when `cursor` is a checkpoint of an unfinished run rather than the end of a finished one. */
  resuming: boolean;
  /** The connection's HTTP client: address guard, authentication, retries, pacing (see SourceHttpClient). */
  http: SourceHttpClient;
  /** The OAuth connection's token, refreshed as needed; null for other connections. */
  tokens: TokenProvider | null;
  /**
   * Saves `cursor` as the point a failed or cancelled run resumes from, once every item yielded before
   * this call is committed (it is stored with the next committed batch). A run resumed from a
   * checkpoint yields what comes after it and is not `complete` (it cannot say what was deleted).
   */
  checkpoint(cursor: Cursor): void;
  /** Aborted when the job is cancelled: every await should honour it. */
  signal: AbortSignal;
  logger: Logger;
  /** The sync job this run is for (the `push` source reads the batch the job was created for). */
  jobId?: string;
  /**
   * Tells how many entities and keep markers the run expects to yield, when the source knows it
   * before yielding them (a listing, a count, a batch's size): the job shows progress as "n of total".
   * An estimate (an unreadable file is still counted); absent on runs that are not watched.
   */
  expectTotal?(total: number): void;
  /**
   * Tells that the run left an item out and why (unsupported file type, too large, unreadable,
   * excluded…): the job counts it in entities_skipped, by reason, and lists the first ones.
   * Absent on runs that are not recorded.
   */
  reportSkipped?(item: SkippedItem): void;
}

/** What `validate` and federated `search` get: a run's context without its cursor and checkpoints. */
export type ConnectionContext<Config = Record<string, unknown>, Credentials = unknown> = Omit<
  SyncContext<Config, Credentials, never>,
  'cursor' | 'resuming' | 'checkpoint' | 'expectTotal' | 'reportSkipped' | 'jobId'
>;

/** An item a run left out. Reasons are short fixed phrases ("unsupported file type"), so they can be counted. */
export interface SkippedItem {
  /** The entity id it would have had (local_folder: the path relative to the folder). */
  entityId: string;
  reason: string;
  /** What was found (a size, an error's message), when it helps. */
  detail?: string;
}

export interface SourceRun<Cursor = unknown> {
  items: AsyncIterable<SourceItem>;
  /**
   * True when `items` enumerates everything the source holds (every entity or keep marker), so
   * entities not seen are deleted at the end. False for incremental runs that report deletions.
   */
  complete: boolean;
  /** The cursor to store once the run succeeds (read after `items` is exhausted). */
  nextCursor(): Cursor | null;
}

export { CredentialsRejectedError, SourceRateLimitedError, SourceConfigError, SourceHttpError, SourceUnreachableError, TemporarilyUnavailableError } from './contract/errors.js';

export interface ConnectorEnvironment {
  /** Roots under which `local_folder` may read (CATCHMENT_LOCAL_FOLDER_ROOTS). */
  localFolderRoots: string[];
  /** The guarded HTTP client of the process, for sources that stream the web themselves (web, rss, git's checks). */
  webClient: WebClient;
  /** The batches users push to their connections, for the runs of sources that receive pushes (worker role). */
  pushedBatches?: PushedBatches;
}

/** Where the stored batches of pushed entities are read (see `Connector.receivesPushes`). */
export interface PushedBatches {
  /** The entities and deletions of the batch the job was created for, in the order they were sent. */
  itemsOf(jobId: string): Promise<SourceItem[]>;
}

/**
 * A source type, typed by its config, credentials and cursor. Its schemas are zod schemas: the
 * platform parses what users send and what was stored with them (422 `detail[]` on `config.*` /
 * `authentication.credentials.*`), and the catalog's field lists are derived from them (titles and
 * descriptions from `.meta({ title, description })`, secrets from `.meta({ secret: true })`).
 */
export interface Connector<Config = any, Credentials = any, Cursor = any> {
  shortName: string;
  name: string;
  description: string;
  auth: ConnectorAuth<Config, Credentials>;
  /** Headers that authenticate a request with a token (default `Authorization: Bearer <token>`). */
  authHeaders?: AuthHeaders;
  /** A strict object schema (unknown fields refused) with defaults. */
  config: z.ZodType<Config>;
  /** The cursor it stores between runs; absent when the source keeps none. */
  cursor?: z.ZodType<Cursor>;
  /** Pacing of its requests per connection (see SourceHttpClient). */
  requestRate?: RequestRate;
  supportedAuthProviders: string[];
  /** Supports incremental (cursor-based) syncs; `force_full_sync` then ignores the cursor. */
  supportsContinuous: boolean;
  /** Searched in real time instead of synced. */
  federatedSearch: boolean;
  /**
   * Entities are sent by users (`POST /source-connections/{id}/entities`) instead of pulled: each accepted
   * batch runs as a sync job of its own, and the connection is never run on demand or on a schedule.
   */
  receivesPushes?: boolean;
  labels: string[];
  outputEntityDefinitions: string[];
  /**
   * Where the connection's stored secrets are sent with this config and these credentials: normalized
   * origins or addresses (`https://git.example.com`, `postgresql://db.internal:5432/app`), empty when
   * they go nowhere a user chooses. For OAuth sources: the API origins the token is sent to (the token
   * endpoint's origin is checked on its own). Stored secrets are bound to the targets they were given
   * for: a change that would send them to any other target must carry the credentials again (the
   * connection service enforces it before anything is sent), and `http` attaches the token only to
   * these origins. Pure: no I/O, and never a secret in the result.
   */
  credentialTargets(config: Config, credentials: Credentials | null): string[];
  /**
   * Checks config and credentials against the real source before a connection is created or
   * changed. Throws SourceConfigError or CredentialsRejectedError.
   */
  validate(context: ConnectionContext<Config, Credentials>, environment: ConnectorEnvironment): Promise<void>;
  sync(context: SyncContext<Config, Credentials, Cursor>, environment: ConnectorEnvironment): SourceRun<Cursor>;
  /**
   * Federated search: queries the source itself at search time (with its own ranking) instead of the
   * index. Present on connectors that can; used by connections that are federated (see isFederated).
   */
  search?(context: ConnectionContext<Config, Credentials>, query: FederatedQuery, environment: ConnectorEnvironment): Promise<FederatedHit[]>;
}

export interface FederatedQuery {
  text: string;
  /** Most hits wanted (the search fuses them with the index's by reciprocal rank). */
  limit: number;
}

export interface FederatedHit {
  entity: SourceEntity;
  /** The source's own relevance (only the order matters: fusion is by rank). */
  score: number;
}

/**
 * The origins of the http(s) URLs among `urls` (one URL or a list; anything else is skipped, as
 * nothing is sent to it): the credential targets of sources that send their secrets to the URLs of
 * their config.
 */
export function httpOrigins(urls: unknown): string[] {
  const origins = new Set<string>();
  for (const value of Array.isArray(urls) ? urls : [urls]) {
    if (typeof value !== 'string') continue;
    try {
      const url = new URL(value.trim());
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // Not a URL: the source refuses it, and sends nothing there.
    }
  }
  return [...origins];
}

/**
 * A connection is federated when its source only searches in real time (`federatedSearch`), or when
 * the source can do both and the connection's config sets `federated_search: true`. Federated
 * connections never sync.
 */
export function isFederated(connector: Connector, config: Record<string, unknown>): boolean {
  return connector.federatedSearch || (connector.search !== undefined && config.federated_search === true);
}

/**
 * Why a connection cannot be run (on demand, on a schedule or when created), or null when it can: a
 * federated connection is searched in its source, and a push connection only syncs the batches it is sent.
 */
export function runRefusal(connector: Connector, config: Record<string, unknown>): string | null {
  if (isFederated(connector, config)) return 'This source connection is federated: it is searched in its source at query time and does not sync';
  if (connector.receivesPushes) {
    return 'This source connection receives its entities by push (POST /source-connections/{id}/entities): each pushed batch runs as a sync job of its own, and there is nothing to pull';
  }
  return null;
}
