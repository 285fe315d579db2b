import { Migration } from '@mikro-orm/migrations';

export class Migration20261124020000_oauth extends Migration {

  override name = 'Migration20261124020000_oauth';

  override up(): void | Promise<void> {
    this.addSql(`create table "operator_oauth_apps" ("short_name" varchar(64) not null, "client_id" text not null, "sealed_client_secret" text null, "created_at" timestamptz not null, "modified_at" timestamptz not null, primary key ("short_name"));`);

    this.addSql(`create table "oauth_authorizations" ("id" uuid not null, "organization_id" uuid not null, "source_connection_id" uuid not null, "state_hash" varchar(64) not null, "sealed_secrets" text not null, "redirect_uri" text not null, "redirect_url" text null, "sync_on_completion" boolean not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "oauth_authorizations" add constraint "oauth_authorizations_source_connection_id_unique" unique ("source_connection_id");`);
    this.addSql(`alter table "oauth_authorizations" add constraint "oauth_authorizations_state_hash_unique" unique ("state_hash");`);
    this.addSql(`alter table "oauth_authorizations" add constraint "oauth_authorizations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth_authorizations" add constraint "oauth_authorizations_source_connection_id_foreign" foreign key ("source_connection_id") references "source_connections" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_authorizations" cascade;`);
    this.addSql(`drop table if exists "operator_oauth_apps" cascade;`);
  }

}
