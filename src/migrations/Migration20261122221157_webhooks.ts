import { Migration } from '@mikro-orm/migrations';

export class Migration20261122221157_webhooks extends Migration {

  override name = 'Migration20261122221157_webhooks';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_messages" ("id" uuid not null, "organization_id" uuid not null, "event_type" varchar(64) not null, "payload" jsonb not null, "created_at" timestamptz not null, "dispatched_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_messages_undispatched_idx" on "webhook_messages" ("created_at") where "dispatched_at" is null;`);
    this.addSql(`create index "webhook_messages_organization_created_idx" on "webhook_messages" ("organization_id", "created_at");`);

    this.addSql(`create table "webhook_subscriptions" ("id" uuid not null, "organization_id" uuid not null, "url" text not null, "filter_types" jsonb not null, "disabled" boolean not null default false, "sealed_secret" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_subscriptions_organization_created_idx" on "webhook_subscriptions" ("organization_id", "created_at");`);

    this.addSql(`create table "webhook_recovery_tasks" ("id" uuid not null, "subscription_id" uuid not null, "organization_id" uuid not null, "since" timestamptz not null, "until" timestamptz not null, "message_count" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_recovery_tasks_subscription_id_index" on "webhook_recovery_tasks" ("subscription_id");`);

    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "message_id" uuid not null, "subscription_id" uuid not null, "status" varchar(16) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz null, "recovery_task_id" uuid null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_recovery_task_id_index" on "webhook_deliveries" ("recovery_task_id");`);
    this.addSql(`create index "webhook_deliveries_subscription_idx" on "webhook_deliveries" ("subscription_id", "status");`);
    this.addSql(`create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "status" in ('pending', 'sending');`);
    this.addSql(`create unique index "webhook_deliveries_message_subscription_unique" on "webhook_deliveries" ("message_id", "subscription_id");`);

    this.addSql(`create table "webhook_attempts" ("id" uuid not null, "delivery_id" uuid not null, "message_id" uuid not null, "subscription_id" uuid not null, "url" text not null, "response_status_code" int null, "response" text not null, "status" varchar(16) not null, "duration_ms" int not null, "attempt_number" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_attempts_message_idx" on "webhook_attempts" ("message_id", "created_at");`);
    this.addSql(`create index "webhook_attempts_subscription_created_idx" on "webhook_attempts" ("subscription_id", "created_at");`);

    this.addSql(`alter table "webhook_messages" add constraint "webhook_messages_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_subscriptions" add constraint "webhook_subscriptions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_recovery_tasks" add constraint "webhook_recovery_tasks_subscription_id_foreign" foreign key ("subscription_id") references "webhook_subscriptions" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_message_id_foreign" foreign key ("message_id") references "webhook_messages" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_subscription_id_foreign" foreign key ("subscription_id") references "webhook_subscriptions" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_message_id_foreign";`);
    this.addSql(`alter table "webhook_recovery_tasks" drop constraint "webhook_recovery_tasks_subscription_id_foreign";`);
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_subscription_id_foreign";`);
    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_delivery_id_foreign";`);

    this.addSql(`drop table if exists "webhook_messages" cascade;`);
    this.addSql(`drop table if exists "webhook_subscriptions" cascade;`);
    this.addSql(`drop table if exists "webhook_recovery_tasks" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_attempts" cascade;`);
  }

}
