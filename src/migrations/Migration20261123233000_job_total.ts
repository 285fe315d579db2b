import { Migration } from '@mikro-orm/migrations';

export class Migration20261123233000_job_total extends Migration {

  override name = 'Migration20261123233000_job_total';

  override up(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" add column "entities_total" int null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "sync_jobs" drop column "entities_total";`);
  }

}
