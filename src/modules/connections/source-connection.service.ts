import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CredentialsRejectedError, isFederated, runRefusal, SourceConfigError, SourceUnreachableError, type AuthMethod, type Connector, type ConnectorEnvironment } from '../../connectors/connector.js';
import { validateFields } from '../../connectors/fields.js';
import type { Orm } from '../../platform/db/database.js';
import type { EventBus, EventType, RecordedEvent } from '../../platform/events/event-bus.js';
import type { JobQueue } from '../../platform/queue/queue.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { NotFoundError, ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { UUID_PATTERN, uuidv7 } from '../../shared/ids.js';
import { Collection } from '../collections/collection.entity.js';
import { normalizeSyncConfig, type SyncConfigPatch } from '../collections/sync-config.js';
import { Organization } from '../organizations/organization.entity.js';
import type { Principal } from '../organizations/principal.js';
import type { SourceService } from '../sources/source.service.js';
import type { EntityStore } from '../sync/entity-store.js';
import { SyncJob, type JobStatus } from '../sync/sync-job.entity.js';
import { jobView, type SyncJobView } from '../sync/sync-job.view.js';
import { nextRun, scheduleProblem } from '../sync/schedule.js';
import { CLEANUP_QUEUE, type CleanupRequest } from '../sync/cleanup.js';
import type { SyncService } from '../sync/sync.service.js';
import { SourceConnection } from './source-connection.entity.js';
import { authorizeSourceChange, credentialTargetIssue } from './source-change-rules.js';

export type ConnectionStatus = 'active' | 'pending_auth' | 'syncing' | 'error' | 'needs_reauth' | 'inactive' | 'pending_sync';

export interface AuthenticationInput {
  credentials?: Record<string, unknown> | null;
  accessToken?: string | null;
  refreshToken?: string | null;
  expiresAt?: Date | null;
  redirectUri?: string | null;
  clientId?: string | null;
  clientSecret?: string | null;
  providerReadableId?: string | null;
  providerConfig?: Record<string, unknown> | null;
}

export interface ConnectionCreateInput {
  name?: string | null;
  shortName: string;
  readableCollectionId: string;
  description?: string | null;
  config?: Record<string, unknown> | null;
  schedule?: { cron?: string | null } | null;
  syncImmediately?: boolean | null;
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

export interface ConnectionView {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  shortName: string;
  readableCollectionId: string;
  collectionId: string;
  status: ConnectionStatus;
  createdAt: Date;
  modifiedAt: Date;
  isAuthenticated: boolean;
  authMethod: AuthMethod;
  auth: { method: AuthMethod; authenticated: boolean; authenticatedAt: Date | null; expiresAt: Date | null };
  config: Record<string, unknown>;
  schedule: { cron: string | null; nextRun: Date | null; continuous: boolean; cursorValue: string | null };
  sync: { totalRuns: number; successfulRuns: number; failedRuns: number; lastJob: SyncJobView | null };
  syncId: string;
  syncConfig: SyncConfigPatch | null;
  entities: { totalEntities: number; byType: { entityType: string; count: number; lastUpdated: Date | null }[] };
  entityCount: number;
  errorMessage: string | null;
  federatedSearch: boolean;
}

const DELETE_WAIT_MS = 15_000;

/** Derivation of a connection's status (unspecified-shapes.md), from its auth state and last job. */
export function connectionStatus(authenticated: boolean, lastJob: { status: JobStatus; credentialsRejected: boolean } | null): ConnectionStatus {
  if (!authenticated) return 'pending_auth';
  if (!lastJob) return 'pending_sync';
  if (lastJob.status === 'RUNNING' || lastJob.status === 'CANCELLING' || lastJob.status === 'PENDING') return 'syncing';
  if (lastJob.status === 'FAILED') return lastJob.credentialsRejected ? 'needs_reauth' : 'error';
  return 'active';
}

/** Business rules of source connections; every method is scoped to the caller's organization. */
export class SourceConnectionService {
  constructor(
    private readonly orm: Orm,
    private readonly sources: SourceService,
    private readonly sync: SyncService,
    private readonly entityStore: EntityStore,
    private readonly events: EventBus,
    private readonly queue: JobQueue,
    private readonly secretBox: SecretBox,
    private readonly environment: ConnectorEnvironment,
    private readonly logger: Logger,
    /** Shortest time a cron schedule may leave between runs (CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS). */
    private readonly scheduleMinIntervalSeconds: number,
  ) {}

  async list(principal: Principal, options: { collection?: string | null; skip?: number; limit?: number }): Promise<ConnectionView[]> {
    const em = this.orm.em.fork();
    const where: Record<string, unknown> = { organization: principal.organizationId };
    if (options.collection != null) where.collection = { readableId: options.collection, organization: principal.organizationId };
    const rows = await em.find(SourceConnection, where, {
      populate: ['collection'],
      orderBy: { createdAt: 'desc', id: 'desc' },
      offset: options.skip ?? 0,
      limit: options.limit ?? 100,
    });
    return this.views(rows);
  }

  async get(principal: Principal, id: string): Promise<ConnectionView | null> {
    const row = await this.find(principal, id);
    return row ? (await this.views([row]))[0]! : null;
  }

  async create(principal: Principal, input: ConnectionCreateInput): Promise<ConnectionView> {
    const issues: ValidationIssue[] = [];
    const connector = this.connectorOrIssue(input.shortName, issues);
    const collection = await this.orm.em.fork().findOne(Collection, { organization: principal.organizationId, readableId: input.readableCollectionId });
    if (!collection) issues.push({ loc: ['readable_collection_id'], msg: `Collection "${input.readableCollectionId}" not found`, type: 'not_found' });
    if (input.name != null && (input.name.trim().length < 1 || input.name.length > 256)) issues.push({ loc: ['name'], msg: 'String should have between 1 and 256 characters', type: 'string_length' });
    const cron = this.checkCron(input.schedule?.cron, issues);
    const syncConfig = input.syncConfig == null ? null : normalizeSyncConfig(input.syncConfig, ['sync_config']);
    issues.push(...(syncConfig?.issues ?? []));
    if (connector && cron) this.checkRunnable(connector, input.config ?? {}, issues);
    if (!connector || issues.length) throw new ValidationError(issues);

    const { method, credentials } = this.authentication(connector, input.authentication ?? null);
    const config = validateFields(connector.configFields, input.config, ['config']);
    if (config.issues.length) throw new ValidationError(config.issues);
    await this.validateWithSource(connector, config.value, credentials);

    const em = this.orm.em.fork();
    const row = em.create(SourceConnection, {
      organization: em.getReference(Organization, principal.organizationId),
      collection: em.getReference(Collection, collection!.id),
      name: input.name?.trim() || `${connector.name} connection`,
      description: input.description ?? null,
      shortName: connector.shortName,
      config: config.value,
      sealedCredentials: credentials ? this.secretBox.seal(JSON.stringify(credentials)) : null,
      authMethod: method,
      authenticated: true,
      authenticatedAt: new Date(),
      cron,
      nextRunAt: cron ? nextRun(cron, new Date()) : null,
      syncConfig: syncConfig?.value ?? null,
      createdByEmail: principal.email,
      modifiedByEmail: principal.email,
    });
    const events = [
      this.record(em, 'source_connection.created', row, collection!.readableId),
      this.record(em, 'source_connection.auth_completed', row, collection!.readableId),
    ];
    await em.flush();
    await em.populate(row, ['collection']);
    for (const event of events) await this.events.publish({ ...event, subject: { id: row.id } });
    if ((input.syncImmediately ?? true) && !runRefusal(connector, row.config)) await this.sync.start(row, { trigger: 'create', forceFullSync: false });
    return (await this.views([row]))[0]!;
  }

  /**
   * Only the fields sent change; credentials only for direct authentication. Config and credentials
   * need the admin role, and stored credentials stay bound to their target (source-change-rules.ts):
   * both are checked before the source is contacted, and nothing is written unless all checks pass.
   */
  async update(principal: Principal, id: string, input: ConnectionUpdateInput): Promise<ConnectionView> {
    const em = this.orm.em.fork();
    const row = await this.find(principal, id, em);
    if (!row) throw NotFoundError.of('Source connection', id);
    authorizeSourceChange(principal, { config: input.config, credentials: input.authentication?.credentials });
    const connector = this.sources.connector(row.shortName);
    const issues: ValidationIssue[] = [];
    if (input.name != null && (input.name.trim().length < 1 || input.name.length > 256)) issues.push({ loc: ['name'], msg: 'String should have between 1 and 256 characters', type: 'string_length' });
    const cron = input.schedule && 'cron' in input.schedule ? this.checkCron(input.schedule.cron, issues) : undefined;
    if (cron) this.checkRunnable(connector, input.config ?? row.config, issues);
    const syncConfig = input.syncConfig == null ? null : normalizeSyncConfig(input.syncConfig, ['sync_config']);
    issues.push(...(syncConfig?.issues ?? []));
    if (input.authentication?.credentials != null && row.authMethod !== 'direct') {
      issues.push({ loc: ['authentication', 'credentials'], msg: 'Credentials can only be changed on connections with direct authentication', type: 'value_error' });
    }
    if (issues.length) throw new ValidationError(issues);

    let credentials = row.sealedCredentials ? (JSON.parse(this.secretBox.open(row.sealedCredentials)) as Record<string, unknown>) : null;
    if (input.authentication?.credentials != null) {
      const checked = validateFields(connector.authFields ?? [], input.authentication.credentials, ['authentication', 'credentials']);
      if (checked.issues.length) throw new ValidationError(checked.issues);
      credentials = checked.value;
    }
    const config = input.config != null ? validateFields(connector.configFields, input.config, ['config']) : null;
    if (config?.issues.length) throw new ValidationError(config.issues);
    const unbound = config && input.authentication?.credentials == null ? credentialTargetIssue(connector, { config: row.config, credentials }, config.value) : null;
    if (unbound) throw new ValidationError([unbound]);
    if (config || input.authentication?.credentials != null) await this.validateWithSource(connector, config?.value ?? row.config, credentials ?? {});

    if (input.name != null) row.name = input.name.trim();
    if (input.description !== undefined) row.description = input.description;
    if (config) row.config = config.value;
    if (input.authentication?.credentials != null) {
      row.sealedCredentials = this.secretBox.seal(JSON.stringify(credentials));
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
    return (await this.views([row]))[0]!;
  }

  /**
   * Cancels a running sync and waits up to 15 s for its worker to stop writing, deletes the records
   * (the data is unsearchable from then on), and leaves index and raw-data cleanup to the worker.
   */
  async delete(principal: Principal, id: string): Promise<ConnectionView> {
    const row = await this.find(principal, id);
    if (!row) throw NotFoundError.of('Source connection', id);
    const view = (await this.views([row]))[0]!;
    await this.stopSyncs([row.id]);
    const event = await this.orm.em.fork().transactional(async (tx) => {
      await tx.nativeDelete(SourceConnection, { id: row.id });
      return this.record(tx, 'source_connection.deleted', row, row.collection.readableId);
    });
    await this.queue.add(CLEANUP_QUEUE, { collectionId: row.collection.id, sourceConnectionId: row.id } satisfies CleanupRequest);
    await this.events.publish({ ...event, subject: { id: row.id } });
    return view;
  }

  /**
   * Stages `source_connection.deleted` for each connection of a collection being deleted (the
   * database removes them with it), to commit with the collection's deletion.
   */
  async recordCollectionDeletion(em: ReturnType<Orm['em']['fork']>, collection: Pick<Collection, 'id' | 'readableId'>): Promise<RecordedEvent[]> {
    const rows = await em.find(SourceConnection, { collection: collection.id });
    return rows.map((row) => this.record(em, 'source_connection.deleted', row, collection.readableId));
  }

  /** Cancels the active syncs of these connections and waits (up to 15 s) until their workers let go. */
  async stopSyncs(connectionIds: string[]): Promise<void> {
    if (connectionIds.length === 0) return;
    const em = this.orm.em.fork();
    const active = await em.find(SyncJob, { sourceConnection: { $in: connectionIds }, status: { $in: ['PENDING', 'RUNNING', 'CANCELLING'] } });
    for (const job of active) {
      // No worker will ever see a pending job of a connection about to go: it is cancelled here.
      const now = new Date();
      if (await this.sync.transition(job.id, ['PENDING'], 'CANCELLED', { cancelRequestedAt: now, completedAt: now }, { type: 'sync.cancelled' })) continue;
      await this.sync.transition(job.id, ['RUNNING'], 'CANCELLING', { cancelRequestedAt: now });
      await this.sync.signalCancel(job.id);
    }
    const deadline = Date.now() + DELETE_WAIT_MS;
    while (active.length && Date.now() < deadline) {
      const still = await em.fork().count(SyncJob, { id: { $in: active.map((job) => job.id) }, status: 'CANCELLING', startedAt: { $ne: null } });
      if (still === 0) return;
      await sleep(100);
    }
  }

  private async find(principal: Principal, id: string, em = this.orm.em.fork()): Promise<SourceConnection | null> {
    if (!UUID_PATTERN.test(id)) return null;
    return em.findOne(SourceConnection, { id, organization: principal.organizationId }, { populate: ['collection'] });
  }

  private connectorOrIssue(shortName: string, issues: ValidationIssue[]): Connector | null {
    try {
      return this.sources.connector(shortName);
    } catch {
      issues.push({ loc: ['short_name'], msg: `Unknown source "${shortName}"`, type: 'enum' });
      return null;
    }
  }

  private checkCron(cron: string | null | undefined, issues: ValidationIssue[]): string | null {
    if (cron == null || cron === '') return null;
    const problem = scheduleProblem(cron, this.scheduleMinIntervalSeconds);
    if (!problem) return cron;
    issues.push({ loc: ['schedule', 'cron'], msg: problem, type: 'value_error' });
    return null;
  }

  /** A schedule runs the connection: refused for connections that cannot be run (federated, push). */
  private checkRunnable(connector: Connector, config: Record<string, unknown>, issues: ValidationIssue[]): void {
    const refusal = runRefusal(connector, config);
    if (refusal) issues.push({ loc: ['schedule', 'cron'], msg: `${refusal}, so it cannot have a schedule`, type: 'value_error' });
  }

  /** Infers the auth method from the fields present and validates the credentials it carries. */
  private authentication(connector: Connector, auth: AuthenticationInput | null): { method: AuthMethod; credentials: Record<string, unknown> | null } {
    const present = (keys: (keyof AuthenticationInput)[]) => auth !== null && keys.some((key) => auth[key] != null);
    let method: AuthMethod;
    if (present(['providerReadableId', 'providerConfig'])) method = 'auth_provider';
    else if (present(['accessToken', 'refreshToken', 'expiresAt'])) method = 'oauth_token';
    else if (present(['clientId', 'clientSecret'])) method = 'oauth_byoc';
    else if (present(['redirectUri'])) method = 'oauth_browser';
    else method = 'direct';
    if (!connector.authMethods.includes(method)) {
      throw new ValidationError([{ loc: ['authentication'], msg: `Source "${connector.shortName}" does not support ${method} authentication (it supports ${connector.authMethods.join(', ')})`, type: 'value_error' }]);
    }
    if (method === 'oauth_token') {
      if (!auth?.accessToken) throw new ValidationError([{ loc: ['authentication', 'access_token'], msg: 'Field required', type: 'missing' }]);
      return { method, credentials: { token: auth.accessToken, refresh_token: auth.refreshToken ?? null, expires_at: auth.expiresAt?.toISOString() ?? null } };
    }
    if (method !== 'direct') {
      throw new ValidationError([{ loc: ['authentication'], msg: `${method} authentication is not available for "${connector.shortName}" yet`, type: 'value_error' }]);
    }
    if (!connector.authFields) return { method, credentials: null };
    const checked = validateFields(connector.authFields, auth?.credentials ?? null, ['authentication', 'credentials']);
    if (checked.issues.length) throw new ValidationError(checked.issues);
    return { method, credentials: checked.value };
  }

  private async validateWithSource(connector: Connector, config: Record<string, unknown>, credentials: Record<string, unknown> | null): Promise<void> {
    try {
      await connector.validate({ config, credentials: credentials ?? {}, logger: this.logger }, this.environment);
    } catch (error) {
      if (error instanceof SourceConfigError) throw new ValidationError([{ loc: ['config', error.field], msg: error.message, type: 'value_error' }]);
      if (error instanceof CredentialsRejectedError) throw new ValidationError([{ loc: ['authentication', 'credentials'], msg: error.message, type: 'credentials_rejected' }]);
      if (error instanceof SourceUnreachableError) throw new ValidationError([{ loc: ['authentication', 'credentials'], msg: error.message, type: 'source_unreachable' }]);
      throw error;
    }
  }

  /** Stages the event of a change to `row` in `em`, so that it commits with the change. */
  private record(em: ReturnType<Orm['em']['fork']>, type: EventType & `source_connection.${string}`, row: SourceConnection, collectionReadableId: string): RecordedEvent {
    const timestamp = new Date().toISOString();
    const event: RecordedEvent = {
      id: uuidv7(),
      type,
      organizationId: row.organization.id,
      occurredAt: timestamp,
      payload: {
        event_type: type,
        organization_id: row.organization.id,
        timestamp,
        source_connection_id: row.id,
        collection_readable_id: collectionReadableId,
        source_type: row.shortName,
        is_authenticated: row.authenticated,
      },
    };
    this.events.record(em, event);
    return event;
  }

  /** Builds full views for a page of connections with three grouped queries, not three per row. */
  private async views(rows: SourceConnection[]): Promise<ConnectionView[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const connection = this.orm.em.getConnection();
    const lastJobs = await this.orm.em.fork().find(SyncJob, { id: { $in: await latestJobIds(connection, ids) } });
    const lastJobBy = new Map(lastJobs.map((job) => [job.sourceConnection.id, job]));
    const totals = await connection.execute<{ source_connection_id: string; total: string; succeeded: string; failed: string }[]>(
      `select source_connection_id, count(*) as total, count(*) filter (where status = 'COMPLETED') as succeeded,
              count(*) filter (where status = 'FAILED') as failed
       from sync_jobs where source_connection_id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid)) group by source_connection_id`,
      [JSON.stringify(ids)],
    );
    const totalsBy = new Map(totals.map((row) => [row.source_connection_id, row]));
    const stats = await this.entityStore.stats(ids);
    return rows.map((row) => {
      const lastJob = lastJobBy.get(row.id) ?? null;
      const entityStats = stats.get(row.id);
      const total = totalsBy.get(row.id);
      const connector = this.sources.connector(row.shortName);
      return {
        id: row.id,
        organizationId: row.organization.id,
        name: row.name,
        description: row.description,
        shortName: row.shortName,
        readableCollectionId: row.collection.readableId,
        collectionId: row.collection.id,
        status: connectionStatus(row.authenticated, lastJob),
        createdAt: row.createdAt,
        modifiedAt: row.modifiedAt,
        isAuthenticated: row.authenticated,
        authMethod: row.authMethod,
        auth: { method: row.authMethod, authenticated: row.authenticated, authenticatedAt: row.authenticatedAt, expiresAt: null },
        config: row.config,
        schedule: { cron: row.cron, nextRun: row.nextRunAt, continuous: connector.supportsContinuous, cursorValue: cursorValue(row.cursor) },
        sync: {
          totalRuns: Number(total?.total ?? 0),
          successfulRuns: Number(total?.succeeded ?? 0),
          failedRuns: Number(total?.failed ?? 0),
          lastJob: lastJob ? jobView(lastJob) : null,
        },
        syncId: row.id,
        syncConfig: row.syncConfig,
        entities: {
          totalEntities: entityStats?.total ?? 0,
          byType: [...(entityStats?.byType ?? new Map())].map(([entityType, value]) => ({ entityType, ...value })),
        },
        entityCount: entityStats?.total ?? 0,
        errorMessage: lastJob?.status === 'FAILED' ? lastJob.error : null,
        federatedSearch: isFederated(connector, row.config),
      };
    });
  }
}

/** The cursor as JSON, or for a large one (a folder's per-file map) its size and digest instead. */
function cursorValue(cursor: Record<string, unknown> | null): string | null {
  if (!cursor) return null;
  const json = JSON.stringify(cursor);
  if (json.length <= 2048) return json;
  return JSON.stringify({ size_bytes: Buffer.byteLength(json), sha256: createHash('sha256').update(json).digest('hex') });
}

async function latestJobIds(connection: ReturnType<Orm['em']['getConnection']>, connectionIds: string[]): Promise<string[]> {
  const rows = await connection.execute<{ id: string }[]>(
    `select distinct on (source_connection_id) id from sync_jobs where source_connection_id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid))
     order by source_connection_id, created_at desc, id desc`,
    [JSON.stringify(connectionIds)],
  );
  return rows.map((row) => row.id);
}
