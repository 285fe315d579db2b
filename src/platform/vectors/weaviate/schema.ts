import { createHash } from 'node:crypto';
import type { Collection, WeaviateClass, WeaviateClient } from 'weaviate-client';

/** The Weaviate collection (class) holding every Catchment collection's chunks, one tenant each. */
export const DEFAULT_CLASS_NAME = 'CatchmentChunk';
/** The named vector of each chunk object (supplied by us: no vectorizer). */
export const VECTOR_NAME = 'chunk';

/**
 * Stored properties of a chunk object. `name` is the exact value (filters), `name_words` the same
 * text tokenized into words (BM25); breadcrumbs are kept as JSON for results and as three arrays for
 * filters; JSON columns are stored, not indexed.
 */
export type ChunkProperties = {
  chunk_id: string;
  source_connection_id: string;
  entity_id: string;
  chunk_index: number;
  name: string;
  name_words: string;
  text: string;
  entity_type: string;
  source_name: string;
  breadcrumbs: string;
  breadcrumb_entity_ids: string[];
  breadcrumb_names: string[];
  breadcrumb_entity_types: string[];
  created_at?: Date;
  updated_at?: Date;
  web_url: string;
  url?: string;
  sync_id: string;
  sync_job_id: string;
  raw_source_fields: string;
  access: string;
};
export type PropertyName = keyof ChunkProperties;
export type ChunkCollection = Collection<ChunkProperties, string>;

/** How each property is stored: exact tokens for filters, words for BM25, or stored only. */
const PROPERTY_INDEXING: Record<PropertyName, { dataType: 'text' | 'text[]' | 'int' | 'date'; index: 'exact' | 'words' | 'stored' }> = {
  chunk_id: { dataType: 'text', index: 'exact' },
  source_connection_id: { dataType: 'text', index: 'exact' },
  entity_id: { dataType: 'text', index: 'exact' },
  chunk_index: { dataType: 'int', index: 'exact' },
  name: { dataType: 'text', index: 'exact' },
  name_words: { dataType: 'text', index: 'words' },
  text: { dataType: 'text', index: 'words' },
  entity_type: { dataType: 'text', index: 'exact' },
  source_name: { dataType: 'text', index: 'exact' },
  breadcrumbs: { dataType: 'text', index: 'stored' },
  breadcrumb_entity_ids: { dataType: 'text[]', index: 'exact' },
  breadcrumb_names: { dataType: 'text[]', index: 'exact' },
  breadcrumb_entity_types: { dataType: 'text[]', index: 'exact' },
  created_at: { dataType: 'date', index: 'exact' },
  updated_at: { dataType: 'date', index: 'exact' },
  web_url: { dataType: 'text', index: 'stored' },
  url: { dataType: 'text', index: 'stored' },
  sync_id: { dataType: 'text', index: 'exact' },
  sync_job_id: { dataType: 'text', index: 'exact' },
  raw_source_fields: { dataType: 'text', index: 'stored' },
  access: { dataType: 'text', index: 'stored' },
};

/** BM25 runs over the chunk text and its entity's name, as LanceDB's full-text search does. */
export const KEYWORD_PROPERTIES: PropertyName[] = ['text', 'name_words'];
/** What results carry: everything but the filter-only arrays, the word copy of the name and the vector. */
export const RESULT_PROPERTIES = (Object.keys(PROPERTY_INDEXING) as PropertyName[]).filter(
  (name) => name !== 'name_words' && !name.startsWith('breadcrumb_'),
);

/**
 * The class definition (Weaviate REST schema). Multi-tenant: a Catchment collection is a tenant,
 * which Weaviate keeps as its own shard (own HNSW and inverted indexes), so collections stay
 * isolated, a collection's delete drops one shard, and thousands of collections cost no schema
 * growth (Weaviate advises against thousands of classes). Tenants are created on first write and
 * activated on access.
 */
export function chunkClassSchema(className: string): WeaviateClass {
  return {
    class: className,
    description: 'Catchment chunks; one tenant per Catchment collection',
    multiTenancyConfig: { enabled: true, autoTenantCreation: true, autoTenantActivation: true },
    vectorConfig: {
      [VECTOR_NAME]: { vectorizer: { none: {} }, vectorIndexType: 'hnsw', vectorIndexConfig: { distance: 'cosine' } },
    },
    properties: (Object.entries(PROPERTY_INDEXING) as [PropertyName, (typeof PROPERTY_INDEXING)[PropertyName]][]).map(([name, { dataType, index }]) => {
      const text = dataType === 'text' || dataType === 'text[]';
      return {
        name,
        dataType: [dataType],
        ...(text ? { tokenization: index === 'words' ? ('word' as const) : ('field' as const) } : {}),
        indexFilterable: index === 'exact',
        indexSearchable: index === 'words',
      };
    }),
  };
}

/** A collection's tenant name. Tenant names allow [A-Za-z0-9_-]{1,64}: UUIDs as they are, other ids hashed. */
export function tenantName(collectionId: string): string {
  if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(collectionId)) return collectionId;
  return `h_${createHash('sha256').update(collectionId, 'utf8').digest('hex').slice(0, 62)}`;
}

/** Creates the class if missing (another process may win the race) and checks an existing one. */
export async function ensureClass(client: WeaviateClient, className: string): Promise<void> {
  if (!(await client.collections.exists(className))) {
    try {
      await client.collections.createFromSchema(chunkClassSchema(className));
      return;
    } catch (error) {
      if (!(await client.collections.exists(className))) throw error;
    }
  }
  // The REST schema, as createFromSchema wrote it.
  const existing = (await client.collections.exportToJson(className)) as WeaviateClass;
  const problems: string[] = [];
  if (!existing.multiTenancyConfig?.enabled) problems.push('multi-tenancy is off');
  if (!existing.vectorConfig?.[VECTOR_NAME]) problems.push(`it has no "${VECTOR_NAME}" vector`);
  const present = new Map((existing.properties ?? []).map((p) => [p.name, p]));
  for (const [name, { dataType, index }] of Object.entries(PROPERTY_INDEXING)) {
    const found = present.get(name);
    if (!found) problems.push(`property ${name} is missing`);
    else if (found.dataType?.[0] !== dataType) problems.push(`property ${name} is ${String(found.dataType?.[0])}, not ${dataType}`);
    else if (index === 'exact' && found.indexFilterable === false) problems.push(`property ${name} is not filterable`);
  }
  if (problems.length > 0) {
    throw new Error(`Weaviate class ${className} was not made by this version of Catchment (${problems.join('; ')}): delete it and resync, or set another class`);
  }
}
