import { Migration } from '@mikro-orm/migrations';

export class Migration20261122184816_initial extends Migration {

  override name = 'Migration20261122184816_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "organizations" ("id" uuid not null, "name" varchar(256) not null, "created_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "collections" ("id" uuid not null, "organization_id" uuid not null, "name" varchar(64) not null, "readable_id" varchar(64) not null, "sync_config" jsonb null, "vector_size" int not null, "embedding_model_name" varchar(256) not null, "created_at" timestamptz not null, "modified_at" timestamptz not null, "created_by_email" varchar(320) null, "modified_by_email" varchar(320) null, primary key ("id"));`);
    this.addSql(`create index "collections_organization_created_idx" on "collections" ("organization_id", "created_at");`);
    this.addSql(`alter table "collections" add constraint "collections_organization_readable_id_unique" unique ("organization_id", "readable_id");`);

    this.addSql(`create table "api_keys" ("id" uuid not null, "organization_id" uuid not null, "key_hash" varchar(64) not null, "key_prefix" varchar(16) not null, "created_at" timestamptz not null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);

    this.addSql(`create table "signing_keys" ("id" uuid not null, "sealed_secret" text not null, "created_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "users" ("id" uuid not null, "organization_id" uuid not null, "email" varchar(320) not null, "role" varchar(16) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "users_organization_id_index" on "users" ("organization_id");`);
    this.addSql(`alter table "users" add constraint "users_organization_id_email_unique" unique ("organization_id", "email");`);

    this.addSql(`alter table "collections" add constraint "collections_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "users" add constraint "users_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
  }

}
