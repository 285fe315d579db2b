import { Migration } from '@mikro-orm/migrations';

export class Migration20261122192523_sync extends Migration {

  override name = 'Migration20261122192523_sync';

  override up(): void | Promise<void> {
    this.addSql(`create table "source_connections" ("id" uuid not null, "organization_id" uuid not null, "collection_id" uuid not null, "name" varchar(256) not null, "description" text null, "short_name" varchar(64) not null, "config" jsonb not null, "sealed_credentials" text null, "auth_method" varchar(32) not null, "authenticated" boolean not null, "authenticated_at" timestamptz null, "cron" varchar(128) null, "next_run_at" timestamptz null, "cursor" jsonb null, "sync_config" jsonb null, "created_at" timestamptz not null, "modified_at" timestamptz not null, "created_by_email" varchar(320) null, "modified_by_email" varchar(320) null, primary key ("id"));`);
    this.addSql(`create index "source_connections_collection_id_index" on "source_connections" ("collection_id");`);
    this.addSql(`create index "source_connections_next_run_idx" on "source_connections" ("next_run_at");`);
    this.addSql(`create index "source_connections_organization_created_idx" on "source_connections" ("organization_id", "created_at");`);

    this.addSql(`create table "entities" ("id" uuid not null, "source_connection_id" uuid not null, "collection_id" uuid not null, "entity_id" text not null, "entity_type" varchar(128) not null, "name" text not null, "content_hash" varchar(64) not null, "chunk_count" int not null, "breadcrumbs" jsonb not null, "fields" jsonb null, "source_created_at" timestamptz null, "source_updated_at" timestamptz null, "synced_at" timestamptz not null, "last_job_id" uuid not null, primary key ("id"));`);
    this.addSql(`create index "entities_collection_idx" on "entities" ("collection_id");`);
    this.addSql(`alter table "entities" add constraint "entities_connection_entity_unique" unique ("source_connection_id", "entity_id");`);

    this.addSql(`create table "sync_jobs" ("id" uuid not null, "source_connection_id" uuid not null, "organization_id" uuid not null, "status" varchar(16) not null, "trigger" varchar(16) not null, "force_full_sync" boolean not null, "sync_config" jsonb null, "created_at" timestamptz not null, "started_at" timestamptz null, "completed_at" timestamptz null, "heartbeat_at" timestamptz null, "cancel_requested_at" timestamptz null, "entities_inserted" int not null default 0, "entities_updated" int not null default 0, "entities_deleted" int not null default 0, "entities_skipped" int not null default 0, "entities_failed" int not null default 0, "chunks_written" int not null default 0, "error" text null, "error_details" jsonb null, "credentials_rejected" boolean not null default false, primary key ("id"));`);
    this.addSql(`create index "sync_jobs_organization_id_index" on "sync_jobs" ("organization_id");`);
    this.addSql(`create unique index "sync_jobs_one_active_per_connection" on "sync_jobs" ("source_connection_id") where "status" in ('PENDING', 'RUNNING', 'CANCELLING');`);
    this.addSql(`create index "sync_jobs_connection_created_idx" on "sync_jobs" ("source_connection_id", "created_at");`);

    this.addSql(`alter table "source_connections" add constraint "source_connections_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "source_connections" add constraint "source_connections_collection_id_foreign" foreign key ("collection_id") references "collections" ("id") on delete cascade;`);

    this.addSql(`alter table "entities" add constraint "entities_source_connection_id_foreign" foreign key ("source_connection_id") references "source_connections" ("id") on delete cascade;`);

    this.addSql(`alter table "sync_jobs" add constraint "sync_jobs_source_connection_id_foreign" foreign key ("source_connection_id") references "source_connections" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "entities" drop constraint "entities_source_connection_id_foreign";`);
    this.addSql(`alter table "sync_jobs" drop constraint "sync_jobs_source_connection_id_foreign";`);

    this.addSql(`drop table if exists "source_connections" cascade;`);
    this.addSql(`drop table if exists "entities" cascade;`);
    this.addSql(`drop table if exists "sync_jobs" cascade;`);
  }

}
