import { CredentialsRejectedError, SourceRateLimitedError, TemporarilyUnavailableError } from '../../connectors/connector.js';
import type { Orm } from '../../platform/db/database.js';
import type { EventBus } from '../../platform/events/event-bus.js';
import type { Logger } from '../../platform/logger.js';
import { recordConnectionEvent } from '../connections/connection-events.js';
import { SourceConnection } from '../connections/source-connection.entity.js';

/** The wait before running again after a failure that will pass when the source did not say how long (5 minutes). */
const DEFAULT_RETRY_SECONDS = 300;

/** What a worker does about a sync that failed, past marking its job FAILED. */
export class SyncFailures {
  constructor(private readonly deps: { orm: Orm; events: EventBus; logger: Logger }) {}

  /**
   * A failure the source says will pass (rate limited, temporarily unavailable) runs the connection
   * again after the wait it asked for (see `retryLater`). Refused credentials of an OAuth connection
   * (its refresh was refused) tell the user to sign in again: `source_connection.auth_expired`.
   */
  async afterFailure(connectionId: string, error: unknown): Promise<void> {
    try {
      if (error instanceof SourceRateLimitedError || error instanceof TemporarilyUnavailableError) {
        await this.retryLater(connectionId, error.retryAfterSeconds ?? DEFAULT_RETRY_SECONDS);
      } else if (error instanceof CredentialsRejectedError) {
        await this.announceAuthExpired(connectionId);
      }
    } catch (failure) {
      this.deps.logger.error({ err: failure, sourceConnectionId: connectionId }, 'could not act on a failed sync');
    }
  }

  /**
   * Makes the connection due again in `seconds` through its `next_run_at`, which the scheduler reads
   * on every tick (see SyncUpkeep.schedule): kept in the database, it survives restarts of every process. A
   * scheduled connection whose next cron time comes first keeps it.
   */
  private async retryLater(connectionId: string, seconds: number): Promise<void> {
    const retryAt = new Date(Date.now() + seconds * 1000);
    const em = this.deps.orm.em.fork();
    await em.nativeUpdate(SourceConnection, { id: connectionId, $or: [{ nextRunAt: null }, { nextRunAt: { $gt: retryAt } }] }, { nextRunAt: retryAt });
    this.deps.logger.info({ sourceConnectionId: connectionId, retryAt }, 'sync failed for now: the connection runs again later');
  }

  private async announceAuthExpired(connectionId: string): Promise<void> {
    const em = this.deps.orm.em.fork();
    const connection = await em.findOne(SourceConnection, { id: connectionId }, { populate: ['collection'] });
    if (!connection || connection.authMethod === 'direct') return;
    const event = recordConnectionEvent(this.deps.events, em, 'source_connection.auth_expired', connection, connection.collection.readableId);
    await em.flush();
    await this.deps.events.publish({ ...event, subject: { id: connection.id } });
  }
}
