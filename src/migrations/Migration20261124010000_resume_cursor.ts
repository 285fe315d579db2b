import { Migration } from '@mikro-orm/migrations';

export class Migration20261124010000_resume_cursor extends Migration {

  override name = 'Migration20261124010000_resume_cursor';

  override up(): void | Promise<void> {
    this.addSql(`alter table "source_connections" add column "resume_cursor" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "source_connections" drop column "resume_cursor";`);
  }

}
