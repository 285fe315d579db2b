import { Migration } from '@mikro-orm/migrations';

export class Migration20261123105925_push extends Migration {

  override name = 'Migration20261123105925_push';

  override up(): void | Promise<void> {
    this.addSql(`create table "push_batches" ("id" uuid not null, "source_connection_id" uuid not null, "organization_id" uuid not null, "job_id" uuid null, "attempts" int not null default 0, "entity_count" int not null, "deletion_count" int not null, "items" jsonb null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "push_batches" add constraint "push_batches_job_unique" unique ("job_id");`);
    this.addSql(`create index "push_batches_unfinished_idx" on "push_batches" ("job_id") where "items" is not null;`);
    this.addSql(`create index "push_batches_waiting_idx" on "push_batches" ("source_connection_id", "created_at") where "job_id" is null;`);
    this.addSql(`create index "push_batches_connection_created_idx" on "push_batches" ("source_connection_id", "created_at");`);

    this.addSql(`alter table "push_batches" add constraint "push_batches_source_connection_id_foreign" foreign key ("source_connection_id") references "source_connections" ("id") on delete cascade;`);
    this.addSql(`alter table "push_batches" add constraint "push_batches_job_id_foreign" foreign key ("job_id") references "sync_jobs" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "push_batches" cascade;`);
  }

}
