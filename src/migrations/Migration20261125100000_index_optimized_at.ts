import { Migration } from '@mikro-orm/migrations';

/**
 * When the index optimize a run leaves running after its job ended was done (SyncJob.indexOptimizedAt).
 * Jobs completed before it optimized inside the run: they are marked done as of their completion.
 */
export class Migration20261125100000_index_optimized_at extends Migration {

  override name = 'Migration20261125100000_index_optimized_at';

  override up(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" add column "index_optimized_at" timestamptz null;`);
    this.addSql(`update "sync_jobs" set "index_optimized_at" = "completed_at" where "status" = 'COMPLETED';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" drop column "index_optimized_at";`);
  }

}
