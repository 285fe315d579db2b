import type { SourceRun } from '../../connectors/connector.js';
import type { BlobStore } from '../../platform/blobs/blob-store.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { Logger } from '../../platform/logger.js';
import type { VectorIndex } from '../../platform/vectors/vector-index.js';
import type { EntityStore } from './entity-store.js';
import type { EffectiveSyncConfig } from './sync-config-layers.js';
import type { SyncCounts } from './sync-counts.js';

export interface PipelineDependencies {
  entities: EntityStore;
  vectors: VectorIndex;
  embedder: Embedder;
  blobs: BlobStore;
  /** Entity-count guardrail per connection (bypassed by behavior.skip_guardrails). */
  maxEntities: number;
  batchSize: number;
  /** How many bytes of prepared batches may wait for the index and the entity table (default READ_AHEAD_BYTES). */
  readAheadBytes?: number;
  /** Where a failed optimize after a run goes (it runs once the run has ended: see optimizeInBackground). */
  logger: Pick<Logger, 'warn'>;
}

export interface PipelineRun {
  jobId: string;
  /** The connection's sync id (one sync per connection: its id). */
  syncId: string;
  collectionId: string;
  sourceConnectionId: string;
  sourceName: string;
  config: EffectiveSyncConfig;
  source: SourceRun;
  /**
   * The previous run of the connection did not complete: it may have left chunks of entities the
   * entity table does not know (killed between the index write and the table write).
   */
  orphansPossible: boolean;
  /**
   * The previous run completed, but the index optimize it left running is not recorded as done (its
   * process stopped during it): this run optimizes at its end whatever it writes.
   */
  optimizeOwed: boolean;
  /** Once the run owes the index nothing: at its end when it has nothing to optimize, else once its optimize has ended. */
  onIndexOptimized(): Promise<void>;
  signal: AbortSignal;
  /** The counts the run continues from: those of the job it resumes, as of the checkpoint it resumes from (none by default). */
  startCounts?: SyncCounts;
  /**
   * After each committed batch: the counts so far, how many of the source's items (from the first)
   * are committed, and the counts as of any item the batch committed (`item`, counted from the first,
   * past the previous call's `committedItems`): where a checkpoint in the batch falls.
   */
  onProgress(counts: SyncCounts, committedItems: number, countsThrough: (item: number) => SyncCounts): Promise<void>;
}
