/** Queue for index and raw-data cleanup after a connection (or a whole collection) is deleted. */
export const CLEANUP_QUEUE = 'cleanup';

export interface CleanupRequest {
  collectionId: string;
  /** Null: the whole collection. */
  sourceConnectionId: string | null;
}
