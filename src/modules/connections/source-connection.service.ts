import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/core';
import { runRefusal, type Connector, type ConnectorEnvironment } from '../../connectors/connector.js';
import { parseConfig, parseCredentials } from '../../connectors/contract/schemas.js';
import type { TokenProvider } from '../../connectors/contract/source-http.js';
import type { Orm } from '../../platform/db/database.js';
import type { EventBus, RecordedEvent } from '../../platform/events/event-bus.js';
import type { JobQueue } from '../../platform/queue/queue.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { UUID_PATTERN } from '../../shared/ids.js';
import { Collection } from '../collections/collection.entity.js';
import { normalizeSyncConfig, type SyncConfigPatch } from '../collections/sync-config.js';
import { Organization } from '../organizations/organization.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { SourceService } from '../sources/source.service.js';
import type { EntityStore } from '../sync/entity-store.js';
import { SyncJob } from '../sync/sync-job.entity.js';
import { nextRun, scheduleProblem } from '../sync/schedule.js';
import { stageCleanup } from '../sync/cleanup.js';
import type { SyncService } from '../sync/sync.service.js';
import { httpUrl, planAuthentication, type AuthenticationInput } from './authentication.js';
import { recordConnectionEvent } from './connection-events.js';
import { ConnectionViews, type ConnectionView } from './connection-views.js';
import type { OperatorOAuthApps } from './oauth/operator-apps.js';
import type { OAuthSignIns, SignInLink } from './oauth/sign-in.js';
import { isOAuthCredentials, type OAuthCredentials } from './oauth/stored-credentials.js';
import type { OAuthClient } from './oauth/token-endpoint.js';
import { createTokenProvider } from './oauth/token-provider.js';
import { givenToken, SourceChecks } from './source-check.js';
import { SourceConnection } from './source-connection.entity.js';
import { authorizeSourceChange, credentialTargetIssue } from './source-change-rules.js';

export interface ConnectionCreateInput {
  name?: string | null;
  shortName: string;
  readableCollectionId: string;
  description?: string | null;
  config?: Record<string, unknown> | null;
  schedule?: { cron?: string | null } | null;
  /** Default true; a browser sign-in syncs once signed in. */
  syncImmediately?: boolean | null;
  /** Browser sign-ins: where the browser is sent with the outcome. */
  redirectUrl?: string | null;
  authentication?: AuthenticationInput | null;
  syncConfig?: SyncConfigPatch | null;
}

export interface ConnectionUpdateInput {
  name?: string | null;
  description?: string | null;
  config?: Record<string, unknown> | null;
  schedule?: { cron?: string | null } | null;
  authentication?: { credentials?: Record<string, unknown> | null } | null;
  syncConfig?: SyncConfigPatch | null;
}

/** A new browser sign-in for an existing connection. */
export interface ConnectionAuthorizeInput {
  redirectUrl?: string | null;
  redirectUri?: string | null;
  /** Another client of the caller's own (oauth_byoc); by default the one the connection signed in with. */
  clientId?: string | null;
  clientSecret?: string | null;
  /** Default true: sync once signed in. */
  syncImmediately?: boolean | null;
}

export interface SourceConnectionDependencies {
  orm: Orm;
  sources: SourceService;
  sync: SyncService;
  entityStore: EntityStore;
  events: EventBus;
  queue: JobQueue;
  secretBox: SecretBox;
  environment: ConnectorEnvironment;
  /** CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS: what a source's HTTP client may reach. */
  allowPrivateNetworks: boolean;
  operatorApps: OperatorOAuthApps;
  signIns: OAuthSignIns;
  logger: Logger;
  /** Shortest time a cron schedule may leave between runs (CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS). */
  scheduleMinIntervalSeconds: number;
}

const DELETE_WAIT_MS = 15_000;
const OAUTH_METHODS = new Set(['oauth_browser', 'oauth_byoc', 'oauth_token']);

/** Business rules of source connections; every method is scoped to the caller's organization. */
export class SourceConnectionService {
  private readonly views: ConnectionViews;
  private readonly checks: SourceChecks;

  constructor(private readonly deps: SourceConnectionDependencies) {
    this.views = new ConnectionViews(deps.orm, deps.sources, deps.entityStore, deps.secretBox, deps.signIns);
    this.checks = new SourceChecks(deps.environment, deps.allowPrivateNetworks, deps.logger);
  }

  async list(principal: Principal, options: { collection?: string | null; skip?: number; limit?: number }): Promise<ConnectionView[]> {
    const em = this.deps.orm.em.fork();
    const where: Record<string, unknown> = { organization: principal.organizationId };
    if (options.collection != null) where.collection = { readableId: options.collection, organization: principal.organizationId };
    const rows = await em.find(SourceConnection, where, {
      populate: ['collection'],
      orderBy: { createdAt: 'desc', id: 'desc' },
      offset: options.skip ?? 0,
      limit: options.limit ?? 100,
    });
    return this.views.of(rows);
  }

  async get(principal: Principal, id: string): Promise<ConnectionView | null> {
    const row = await this.find(principal, id);
    return row ? this.views.one(row) : null;
  }

  /**
   * Direct and `oauth_token` connections exist authenticated at once, checked with the source; a
   * browser sign-in (`oauth_browser`, `oauth_byoc`) returns the connection `pending_auth` with the
   * provider's `auth_url`, and the callback authenticates it.
   */
  async create(principal: Principal, input: ConnectionCreateInput): Promise<ConnectionView> {
    const issues: ValidationIssue[] = [];
    const connector = this.connectorOrIssue(input.shortName, issues);
    const collection = await this.deps.orm.em.fork().findOne(Collection, { organization: principal.organizationId, readableId: input.readableCollectionId });
    if (!collection) issues.push({ loc: ['readable_collection_id'], msg: `Collection "${input.readableCollectionId}" not found`, type: 'not_found' });
    if (input.name != null && (input.name.trim().length < 1 || input.name.length > 256)) issues.push({ loc: ['name'], msg: 'String should have between 1 and 256 characters', type: 'string_length' });
    const cron = this.checkCron(input.schedule?.cron, issues);
    const syncConfig = input.syncConfig == null ? null : normalizeSyncConfig(input.syncConfig, ['sync_config']);
    issues.push(...(syncConfig?.issues ?? []));
    const redirectUrl = httpUrl(input.redirectUrl ?? null, ['redirect_url'], issues);
    const config = connector ? parseConfig(connector, input.config ?? {}) : null;
    issues.push(...(config?.issues ?? []));
    if (connector && config && cron) this.checkRunnable(connector, config.value, issues);
    if (!connector || !config || issues.length) throw new ValidationError(issues);

    const plan = await planAuthentication(connector, config.value, input.authentication ?? null, this.deps.operatorApps);
    const browser = plan.method === 'oauth_browser' || plan.method === 'oauth_byoc' ? plan : null;
    const signInClient = browser ? await this.deps.signIns.client(connector, config.value, browser.ownClient, ['authentication']) : null;
    if (plan.method === 'direct') await this.checks.check(connector, config.value, plan.credentials, null);
    if (plan.method === 'oauth_token') await this.checks.check(connector, config.value, null, givenToken(plan.credentials.accessToken));

    const em = this.deps.orm.em.fork();
    const credentials = plan.method === 'direct' || plan.method === 'oauth_token' ? plan.credentials : null;
    const row = em.create(SourceConnection, {
      organization: em.getReference(Organization, principal.organizationId),
      collection: em.getReference(Collection, collection!.id),
      name: input.name?.trim() || `${connector.name} connection`,
      description: input.description ?? null,
      shortName: connector.shortName,
      config: config.value as Record<string, unknown>,
      sealedCredentials: credentials ? this.deps.secretBox.seal(JSON.stringify(credentials)) : null,
      authMethod: plan.method,
      authenticated: !browser,
      authenticatedAt: browser ? null : new Date(),
      cron,
      nextRunAt: cron ? nextRun(cron, new Date()) : null,
      syncConfig: syncConfig?.value ?? null,
      createdByEmail: principal.email,
      modifiedByEmail: principal.email,
    });
    const events = [this.record(em, 'source_connection.created', row, collection!.readableId)];
    let signIn: SignInLink | undefined;
    if (browser && signInClient && connector.auth.kind === 'oauth2') {
      signIn = await this.deps.signIns.begin(em, {
        connection: row,
        spec: connector.auth.oauth,
        config: row.config,
        client: signInClient,
        redirectUrl,
        redirectUri: browser.redirectUri,
        syncOnCompletion: input.syncImmediately ?? true,
      });
    } else {
      events.push(this.record(em, 'source_connection.auth_completed', row, collection!.readableId));
    }
    await em.flush();
    await em.populate(row, ['collection']);
    for (const event of events) await this.deps.events.publish({ ...event, subject: { id: row.id } });
    if (!browser && (input.syncImmediately ?? true) && !runRefusal(connector, row.config)) await this.deps.sync.start(row, { trigger: 'create', forceFullSync: false });
    return this.views.one(row, signIn);
  }

  /**
   * A new browser sign-in for an OAuth connection that never finished one or whose tokens were
   * refused: a fresh `auth_url`, replacing any earlier one. Admin or owner: it replaces the
   * connection's credentials. The client is the one given, else the connection's own (a BYOC app, or
   * the client an `oauth_token` was given with), else the operator's app when it serves the
   * connection's token endpoint, else a 422. The callback makes the connection a browser sign-in one.
   */
  async authorize(principal: Principal, id: string, input: ConnectionAuthorizeInput): Promise<ConnectionView> {
    const em = this.deps.orm.em.fork();
    const row = await this.find(principal, id, em);
    if (!row) throw NotFoundError.of('Source connection', id);
    authorizeSourceChange(principal, { credentials: true });
    const connector = this.deps.sources.connector(row.shortName);
    const issues: ValidationIssue[] = [];
    if (!OAUTH_METHODS.has(row.authMethod) || connector.auth.kind !== 'oauth2') {
      issues.push({ loc: [], msg: `This connection authenticates with ${row.authMethod}: only OAuth connections (oauth_browser, oauth_byoc, oauth_token) can sign in through the browser`, type: 'value_error' });
    }
    const redirectUrl = httpUrl(input.redirectUrl ?? null, ['redirect_url'], issues);
    const redirectUri = httpUrl(input.redirectUri ?? null, ['redirect_uri'], issues);
    const publicClient = connector.auth.kind === 'oauth2' && connector.auth.oauth.pkce;
    if (input.clientSecret != null && input.clientId == null) issues.push({ loc: ['client_id'], msg: 'Field required', type: 'missing' });
    if (input.clientId != null && input.clientSecret == null && !publicClient) issues.push({ loc: ['client_secret'], msg: 'Field required', type: 'missing' });
    if (issues.length || connector.auth.kind !== 'oauth2') throw new ValidationError(issues);
    const given: OAuthClient | null = input.clientId ? { clientId: input.clientId, clientSecret: input.clientSecret ?? null } : null;
    // A connection signed in with the operator's app goes on with it; the others keep their own client.
    const own = given ?? (row.authMethod === 'oauth_browser' ? null : await this.ownClientOf(row, connector.auth.oauth.tokenUrl(row.config)));
    const client = await this.deps.signIns.client(connector, row.config, own, ['client_id']);
    const signIn = await this.deps.signIns.begin(em, {
      connection: row,
      spec: connector.auth.oauth,
      config: row.config,
      client,
      redirectUrl,
      redirectUri,
      syncOnCompletion: input.syncImmediately ?? true,
    });
    // A pasted token stays usable until the sign-in completes (the callback changes the method then).
    if (given && row.authMethod !== 'oauth_token') row.authMethod = 'oauth_byoc';
    row.modifiedAt = new Date();
    row.modifiedByEmail = principal.email;
    await em.flush();
    return this.views.one(row, signIn);
  }

  /**
   * Only the fields sent change; credentials only for direct authentication. Config and credentials
   * need the admin role, and stored credentials stay bound to their target (source-change-rules.ts):
   * both are checked before the source is contacted, and nothing is written unless all checks pass.
   */
  async update(principal: Principal, id: string, input: ConnectionUpdateInput): Promise<ConnectionView> {
    const em = this.deps.orm.em.fork();
    const row = await this.find(principal, id, em);
    if (!row) throw NotFoundError.of('Source connection', id);
    authorizeSourceChange(principal, { config: input.config, credentials: input.authentication?.credentials });
    const connector = this.deps.sources.connector(row.shortName);
    const issues: ValidationIssue[] = [];
    if (input.name != null && (input.name.trim().length < 1 || input.name.length > 256)) issues.push({ loc: ['name'], msg: 'String should have between 1 and 256 characters', type: 'string_length' });
    const cron = input.schedule && 'cron' in input.schedule ? this.checkCron(input.schedule.cron, issues) : undefined;
    const syncConfig = input.syncConfig == null ? null : normalizeSyncConfig(input.syncConfig, ['sync_config']);
    issues.push(...(syncConfig?.issues ?? []));
    const newCredentials = input.authentication?.credentials ?? null;
    if (newCredentials !== null && row.authMethod !== 'direct') {
      issues.push({ loc: ['authentication', 'credentials'], msg: 'Credentials can only be changed on connections with direct authentication', type: 'value_error' });
    }
    const config = input.config != null ? parseConfig(connector, input.config) : null;
    issues.push(...(config?.issues ?? []));
    const parsedCredentials = newCredentials !== null && row.authMethod === 'direct' ? parseCredentials(connector, newCredentials) : null;
    issues.push(...(parsedCredentials?.issues ?? []));
    if (cron) this.checkRunnable(connector, (config?.value as Record<string, unknown> | undefined) ?? row.config, issues);
    if (issues.length) throw new ValidationError(issues);

    const stored: unknown = row.sealedCredentials ? JSON.parse(this.deps.secretBox.open(row.sealedCredentials)) : null;
    const credentials = parsedCredentials ? parsedCredentials.value : stored;
    const unbound = config && !parsedCredentials ? credentialTargetIssue(connector, { config: row.config, credentials: stored }, config.value as Record<string, unknown>) : null;
    if (unbound) throw new ValidationError([unbound]);
    if (config || parsedCredentials) await this.checkStored(row, connector, config?.value ?? row.config, credentials);

    if (input.name != null) row.name = input.name.trim();
    if (input.description !== undefined) row.description = input.description;
    if (config) row.config = config.value as Record<string, unknown>;
    if (parsedCredentials) {
      row.sealedCredentials = this.deps.secretBox.seal(JSON.stringify(parsedCredentials.value));
      row.authenticatedAt = new Date();
    }
    if (cron !== undefined) {
      row.cron = cron;
      row.nextRunAt = cron ? nextRun(cron, new Date()) : null;
    }
    if (input.syncConfig !== undefined) row.syncConfig = syncConfig?.value ?? null;
    row.modifiedAt = new Date();
    row.modifiedByEmail = principal.email;
    await em.flush();
    return this.views.one(row);
  }

  /**
   * Cancels a running sync and waits up to 15 s for its worker to stop writing, deletes the records
   * (the data is unsearchable from then on), and leaves index and raw-data cleanup to the worker.
   */
  async delete(principal: Principal, id: string): Promise<ConnectionView> {
    const row = await this.find(principal, id);
    if (!row) throw NotFoundError.of('Source connection', id);
    const view = await this.views.one(row);
    await this.stopSyncs([row.id]);
    const { event, queueCleanup } = await this.deps.orm.em.fork().transactional(async (tx) => {
      await tx.nativeDelete(SourceConnection, { id: row.id });
      return {
        event: this.record(tx, 'source_connection.deleted', row, row.collection.readableId),
        queueCleanup: this.stageCleanup(tx, { collectionId: row.collection.id, sourceConnectionId: row.id }),
      };
    });
    await queueCleanup();
    await this.deps.events.publish({ ...event, subject: { id: row.id } });
    return view;
  }

  /**
   * Stages `source_connection.deleted` for each connection of a collection being deleted (the
   * database removes them with it), to commit with the collection's deletion.
   */
  async recordCollectionDeletion(em: EntityManager, collection: Pick<Collection, 'id' | 'readableId'>): Promise<RecordedEvent[]> {
    const rows = await em.find(SourceConnection, { collection: collection.id });
    return rows.map((row) => this.record(em, 'source_connection.deleted', row, collection.readableId));
  }

  /** Cancels the active syncs of these connections and waits (up to 15 s) until their workers let go. */
  async stopSyncs(connectionIds: string[]): Promise<void> {
    if (connectionIds.length === 0) return;
    const em = this.deps.orm.em.fork();
    const active = await em.find(SyncJob, { sourceConnection: { $in: connectionIds }, status: { $in: ['PENDING', 'RUNNING', 'CANCELLING'] } });
    for (const job of active) {
      // No worker will ever see a pending job of a connection about to go: it is cancelled here.
      const now = new Date();
      if (await this.deps.sync.transition(job.id, ['PENDING'], 'CANCELLED', { cancelRequestedAt: now, completedAt: now }, { type: 'sync.cancelled' })) continue;
      await this.deps.sync.transition(job.id, ['RUNNING'], 'CANCELLING', { cancelRequestedAt: now });
      await this.deps.sync.signalCancel(job.id);
    }
    const deadline = Date.now() + DELETE_WAIT_MS;
    while (active.length && Date.now() < deadline) {
      const still = await em.fork().count(SyncJob, { id: { $in: active.map((job) => job.id) }, status: 'CANCELLING', startedAt: { $ne: null } });
      if (still === 0) return;
      await sleep(100);
    }
  }

  private async find(principal: Principal, id: string, em = this.deps.orm.em.fork()): Promise<SourceConnection | null> {
    if (!UUID_PATTERN.test(id)) return null;
    return em.findOne(SourceConnection, { id, organization: principal.organizationId }, { populate: ['collection'] });
  }

  private connectorOrIssue(shortName: string, issues: ValidationIssue[]): Connector | null {
    try {
      return this.deps.sources.connector(shortName);
    } catch {
      issues.push({ loc: ['short_name'], msg: `Unknown source "${shortName}"`, type: 'enum' });
      return null;
    }
  }

  private checkCron(cron: string | null | undefined, issues: ValidationIssue[]): string | null {
    if (cron == null || cron === '') return null;
    const problem = scheduleProblem(cron, this.deps.scheduleMinIntervalSeconds);
    if (!problem) return cron;
    issues.push({ loc: ['schedule', 'cron'], msg: problem, type: 'value_error' });
    return null;
  }

  /** A schedule runs the connection: refused for connections that cannot be run (federated, push). */
  private checkRunnable(connector: Connector, config: Record<string, unknown>, issues: ValidationIssue[]): void {
    const refusal = runRefusal(connector, config);
    if (refusal) issues.push({ loc: ['schedule', 'cron'], msg: `${refusal}, so it cannot have a schedule`, type: 'value_error' });
  }

  /**
   * Checks a changed config (or new direct credentials) with the source: with the credentials of a
   * direct connection, or the tokens of a signed-in OAuth one. A sign-in not yet completed has nothing
   * to check with.
   */
  private async checkStored(row: SourceConnection, connector: Connector, config: unknown, credentials: unknown): Promise<void> {
    if (row.authMethod === 'direct') return this.checks.check(connector, config, credentials, null);
    if (!isOAuthCredentials(credentials)) return;
    const tokens: TokenProvider = createTokenProvider({
      orm: this.deps.orm,
      secretBox: this.deps.secretBox,
      connectionId: row.id,
      connector,
      config,
      operatorApps: this.deps.operatorApps,
      allowPrivateNetworks: this.deps.allowPrivateNetworks,
      logger: this.deps.logger,
    });
    return this.checks.check(connector, config, null, tokens);
  }

  /** The caller's own client of a connection (`oauth_byoc`, `oauth_token`): from its tokens, or the sign-in that never finished (made for `tokenUrl`). */
  private async ownClientOf(row: SourceConnection, tokenUrl: string): Promise<OAuthClient | null> {
    const stored: unknown = row.sealedCredentials ? JSON.parse(this.deps.secretBox.open(row.sealedCredentials)) : null;
    const client: OAuthCredentials['client'] | null = isOAuthCredentials(stored) ? stored.client : null;
    if (client?.kind === 'connection') return { clientId: client.clientId, clientSecret: client.clientSecret };
    return this.deps.signIns.lastOwnClient(row.id, tokenUrl);
  }

  /**
   * Records in `em` the index and raw-data cleanup a deletion owes (a connection's, or with a null
   * connection its whole collection's); the function it returns queues it once `em` is committed.
   */
  stageCleanup(em: EntityManager, scope: { collectionId: string; sourceConnectionId: string | null }): () => Promise<void> {
    return stageCleanup(em, this.deps.queue, this.deps.logger, scope);
  }

  private record(em: EntityManager, type: 'source_connection.created' | 'source_connection.auth_completed' | 'source_connection.deleted', row: SourceConnection, collectionReadableId: string): RecordedEvent {
    return recordConnectionEvent(this.deps.events, em, type, row, collectionReadableId);
  }
}
