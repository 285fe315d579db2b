import { Migration } from '@mikro-orm/migrations';

/** A job's counts as of its latest checkpoint (SyncJob.countsAtCheckpoint), which a resumed run continues from. */
export class Migration20261202000000_counts_at_checkpoint extends Migration {

  override name = 'Migration20261202000000_counts_at_checkpoint';

  override up(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" add column "counts_at_checkpoint" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" drop column "counts_at_checkpoint";`);
  }

}
