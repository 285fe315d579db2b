/** CollectionStatus values as the spec writes them (note the space in "NEEDS SOURCE"). */
export type CollectionStatus = 'ACTIVE' | 'NEEDS SOURCE' | 'ERROR';

/** What the status derivation needs to know about each connection of a collection. */
export interface ConnectionSyncState {
  authenticated: boolean;
  /** Status of the connection's latest sync job, or null when it never ran. */
  lastJobStatus: 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLING' | 'CANCELLED' | null;
  /** Whether any sync of the connection ever completed. */
  everCompleted: boolean;
}

/**
 * The spec's derivation: ACTIVE when a connection has completed a sync or is syncing; ERROR when
 * every connection failed its last sync; otherwise NEEDS SOURCE (no authenticated connection, or
 * none has synced yet).
 */
export function deriveCollectionStatus(connections: ConnectionSyncState[]): CollectionStatus {
  const authenticated = connections.filter((connection) => connection.authenticated);
  if (authenticated.length === 0) return 'NEEDS SOURCE';
  if (authenticated.some((c) => c.everCompleted || c.lastJobStatus === 'RUNNING' || c.lastJobStatus === 'CANCELLING')) return 'ACTIVE';
  if (authenticated.every((c) => c.lastJobStatus === 'FAILED')) return 'ERROR';
  return 'NEEDS SOURCE';
}
