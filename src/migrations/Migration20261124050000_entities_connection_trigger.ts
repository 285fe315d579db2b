import { Migration } from '@mikro-orm/migrations';

/**
 * The entity table loses its foreign key to source_connections and its index on collection_id: in a
 * 2,000-row upsert (PGlite, bench:sync's rows, one process) they cost ~13 and ~4-5 of ~54 ms of CPU,
 * the key's check being a lookup per row. What they gave is kept another way:
 * - a deleted connection's rows go with it: a trigger on source_connections deletes them, as the
 *   key's cascade did (also when a collection's deletion cascades to its connections);
 * - no row outlives its connection: the upsert locks the connection's row once per statement (`for key
 *   share`, the lock the key's check took per row) and writes nothing when it is gone (EntityStore);
 * - a collection's entities are found through its connections (source_connections_collection_id_index,
 *   then the entity table's key, whose first column is the connection).
 */
export class Migration20261124050000_entities_connection_trigger extends Migration {

  override name = 'Migration20261124050000_entities_connection_trigger';

  override up(): void | Promise<void> {
    this.addSql(`alter table "entities" drop constraint "entities_source_connection_id_foreign";`);
    this.addSql(`drop index "entities_collection_idx";`);
    this.addSql(`create function "entities_of_deleted_connection"() returns trigger language plpgsql as $$
begin
  delete from "entities" where "source_connection_id" = old."id";
  return null;
end
$$;`);
    this.addSql(`create trigger "source_connections_delete_entities" after delete on "source_connections" for each row execute function "entities_of_deleted_connection"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "source_connections_delete_entities" on "source_connections";`);
    this.addSql(`drop function "entities_of_deleted_connection"();`);
    this.addSql(`create index "entities_collection_idx" on "entities" ("collection_id");`);
    this.addSql(`alter table "entities" add constraint "entities_source_connection_id_foreign" foreign key ("source_connection_id") references "source_connections" ("id") on delete cascade;`);
  }

}
