import type { Orm } from '../../platform/db/database.js';

/** An entity as navigation shows it: identity, kind and place in the hierarchy. */
export interface EntitySummary {
  entityId: string;
  name: string;
  entityType: string;
  breadcrumbs: { entityId: string; name: string; entityType: string }[];
  sourceConnectionId: string;
}

interface Row {
  entity_id: string;
  name: string;
  entity_type: string;
  breadcrumbs: EntitySummary['breadcrumbs'];
  source_connection_id: string;
}

/**
 * The entity hierarchy of a collection, from the entity table the sync keeps (every synced entity
 * with its breadcrumbs). A parent is the last breadcrumb; siblings share it; children name it last.
 * Only the given (live, indexed) connections are visible.
 */
export class EntityNavigator {
  constructor(private readonly orm: Orm) {}

  async get(connectionIds: string[], entityIds: string[]): Promise<EntitySummary[]> {
    if (entityIds.length === 0) return [];
    return this.select(connectionIds, `entity_id = any(array(select jsonb_array_elements_text(?::jsonb)))`, [JSON.stringify(entityIds)], entityIds.length * Math.max(1, connectionIds.length));
  }

  async children(connectionIds: string[], entityId: string, limit: number): Promise<EntitySummary[]> {
    return this.select(connectionIds, `breadcrumbs->-1->>'entityId' = ?`, [entityId], limit);
  }

  /** Entities with the same parent (root entities are siblings of each other), the entity itself excluded. */
  async siblings(connectionIds: string[], entityId: string, limit: number): Promise<EntitySummary[] | null> {
    const [self] = await this.get(connectionIds, [entityId]);
    if (!self) return null;
    const parent = self.breadcrumbs.at(-1);
    const clause = parent ? `breadcrumbs->-1->>'entityId' = ?` : `jsonb_array_length(breadcrumbs) = 0 and ?::text is null`;
    const rows = await this.select(connectionIds, `${clause} and entity_id <> ?`, [parent?.entityId ?? null, entityId], limit);
    return rows;
  }

  /** The parent entity: synced itself, or known only as the last breadcrumb. Null for a root or unknown entity. */
  async parent(connectionIds: string[], entityId: string): Promise<{ self: EntitySummary | null; parent: EntitySummary | null }> {
    const [self] = await this.get(connectionIds, [entityId]);
    const crumb = self?.breadcrumbs.at(-1);
    if (!self || !crumb) return { self: self ?? null, parent: null };
    const [synced] = await this.get([self.sourceConnectionId], [crumb.entityId]);
    return { self, parent: synced ?? { ...crumb, breadcrumbs: self.breadcrumbs.slice(0, -1), sourceConnectionId: self.sourceConnectionId } };
  }

  private async select(connectionIds: string[], where: string, params: unknown[], limit: number): Promise<EntitySummary[]> {
    if (connectionIds.length === 0) return [];
    const rows = await this.orm.em.getConnection().execute<Row[]>(
      `select entity_id, name, entity_type, breadcrumbs, source_connection_id from entities
        where source_connection_id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid)) and ${where}
        order by name, entity_id limit ?`,
      [JSON.stringify(connectionIds), ...params, limit],
    );
    return rows.map((row) => ({
      entityId: row.entity_id,
      name: row.name,
      entityType: row.entity_type,
      breadcrumbs: typeof row.breadcrumbs === 'string' ? JSON.parse(row.breadcrumbs) : row.breadcrumbs,
      sourceConnectionId: row.source_connection_id,
    }));
  }
}
