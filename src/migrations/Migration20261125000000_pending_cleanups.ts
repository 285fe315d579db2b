import { Migration } from '@mikro-orm/migrations';

export class Migration20261125000000_pending_cleanups extends Migration {

  override name = 'Migration20261125000000_pending_cleanups';

  override up(): void | Promise<void> {
    this.addSql(`create table "pending_cleanups" ("id" uuid not null, "collection_id" uuid not null, "source_connection_id" uuid null, "requested_at" timestamptz not null, primary key ("id"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "pending_cleanups" cascade;`);
  }

}
