import { createHash } from 'node:crypto';
import { isFederated, type AuthMethod } from '../../connectors/connector.js';
import type { Orm } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import type { SyncConfigPatch } from '../collections/sync-config.js';
import type { SourceService } from '../sources/source.service.js';
import type { EntityStore } from '../sync/entity-store.js';
import { SyncJob, type JobStatus } from '../sync/sync-job.entity.js';
import { jobView, type SyncJobView } from '../sync/sync-job.view.js';
import type { OAuthSignIns, SignInLink } from './oauth/sign-in.js';
import { isOAuthCredentials } from './oauth/stored-credentials.js';
import type { SourceConnection } from './source-connection.entity.js';

export type ConnectionStatus = 'active' | 'pending_auth' | 'syncing' | 'error' | 'needs_reauth' | 'inactive' | 'pending_sync';

export interface ConnectionAuthView {
  method: AuthMethod;
  authenticated: boolean;
  authenticatedAt: Date | null;
  /** When the OAuth access token expires, when the provider said. */
  expiresAt: Date | null;
  /** The provider's sign-in URL: only in the answer that started the sign-in (its state is not kept readable). */
  authUrl: string | null;
  /** Until when a sign-in under way can complete. */
  authUrlExpires: Date | null;
  /** Where the browser goes after the sign-in under way. */
  redirectUrl: string | null;
  providerReadableId: string | null;
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
  auth: ConnectionAuthView;
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

/** Derivation of a connection's status (unspecified-shapes.md), from its auth state and last job. */
export function connectionStatus(authenticated: boolean, lastJob: { status: JobStatus; credentialsRejected: boolean } | null): ConnectionStatus {
  if (!authenticated) return 'pending_auth';
  if (!lastJob) return 'pending_sync';
  if (lastJob.status === 'RUNNING' || lastJob.status === 'CANCELLING' || lastJob.status === 'PENDING') return 'syncing';
  if (lastJob.status === 'FAILED') return lastJob.credentialsRejected ? 'needs_reauth' : 'error';
  return 'active';
}

/** The records connections are returned as: built for a page of rows with a few grouped queries, not per row. */
export class ConnectionViews {
  constructor(
    private readonly orm: Orm,
    private readonly sources: SourceService,
    private readonly entityStore: EntityStore,
    private readonly secretBox: SecretBox,
    private readonly signIns: OAuthSignIns,
  ) {}

  /** One connection's view; with `signIn`, the sign-in just started (its auth_url included). */
  async one(row: SourceConnection, signIn?: SignInLink): Promise<ConnectionView> {
    const view = (await this.of([row]))[0]!;
    if (signIn) view.auth = { ...view.auth, authUrl: signIn.authUrl, authUrlExpires: signIn.expiresAt, redirectUrl: signIn.redirectUrl };
    return view;
  }

  async of(rows: SourceConnection[]): Promise<ConnectionView[]> {
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
    const pending = await this.signIns.pending(ids);
    return rows.map((row) => {
      const lastJob = lastJobBy.get(row.id) ?? null;
      const entityStats = stats.get(row.id);
      const total = totalsBy.get(row.id);
      const connector = this.sources.connector(row.shortName);
      const signIn = pending.get(row.id);
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
        auth: {
          method: row.authMethod,
          authenticated: row.authenticated,
          authenticatedAt: row.authenticatedAt,
          expiresAt: this.tokenExpiry(row),
          authUrl: null,
          authUrlExpires: signIn?.expiresAt ?? null,
          redirectUrl: signIn?.redirectUrl ?? null,
          providerReadableId: null,
        },
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

  /** The expiry of an OAuth connection's access token (only that is read from its sealed tokens). */
  private tokenExpiry(row: SourceConnection): Date | null {
    if (row.authMethod === 'direct' || !row.sealedCredentials) return null;
    const stored: unknown = JSON.parse(this.secretBox.open(row.sealedCredentials));
    return isOAuthCredentials(stored) && stored.expiresAt ? new Date(stored.expiresAt) : null;
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
