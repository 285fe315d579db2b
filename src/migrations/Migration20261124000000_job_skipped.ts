import { Migration } from '@mikro-orm/migrations';

export class Migration20261124000000_job_skipped extends Migration {

  override name = 'Migration20261124000000_job_skipped';

  override up(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" add column "skipped" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" drop column "skipped";`);
  }

}
