import { Migration } from '@mikro-orm/migrations';

/**
 * The entity table's key is its natural one, (source_connection_id, entity_id): the surrogate `id`
 * column was read by nothing, and its index cost every row the sync writes. The pair's unique
 * constraint becomes the primary key (its index is built again, once). PGlite, 2,000-row upserts of bench:sync's size,
 * alternated with the previous table in one process: 76 -> 70 ms of CPU for new rows, 79 -> 66 for updates.
 */
export class Migration20261124040000_entities_key extends Migration {

  override name = 'Migration20261124040000_entities_key';

  override up(): void | Promise<void> {
    this.addSql(`alter table "entities" drop constraint "entities_pkey";`);
    this.addSql(`alter table "entities" drop column "id";`);
    this.addSql(`alter table "entities" drop constraint "entities_connection_entity_unique", add constraint "entities_pkey" primary key ("source_connection_id", "entity_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "entities" drop constraint "entities_pkey";`);
    this.addSql(`alter table "entities" add constraint "entities_connection_entity_unique" unique ("source_connection_id", "entity_id");`);
    this.addSql(`alter table "entities" add column "id" uuid not null default gen_random_uuid();`);
    this.addSql(`alter table "entities" alter column "id" drop default;`);
    this.addSql(`alter table "entities" add constraint "entities_pkey" primary key ("id");`);
  }

}
