import type { SourceEntity, SourceItem } from '../../connectors/connector.js';
import type { ValidationIssue } from '../../shared/errors.js';
import { protocolOf } from '../../shared/web-url.js';
import { isStorableText } from '../../shared/well-formed-text.js';
import type { StoredPushEntity, StoredPushItems } from './push-batch.entity.js';

/**
 * What one push request may carry. The request body is also bounded by the service's body limit
 * (CATCHMENT_MAX_BODY_BYTES; larger requests get 413).
 */
export const PUSH_LIMITS = {
  entities: 1000,
  deletions: 1000,
  idLength: 512,
  nameLength: 1024,
  entityTypeLength: 128,
  breadcrumbs: 64,
  webUrlLength: 4096,
  /** Nesting depth of `fields` (objects and arrays). */
  fieldsDepth: 32,
} as const;

/** Entity type of pushed entities and breadcrumbs that do not name one. */
export const DEFAULT_PUSH_ENTITY_TYPE = 'push_entity';

export interface PushBreadcrumbInput {
  entityId: string;
  name: string;
  entityType?: string | null;
}

/** One entity as a client sends it (GraphQL `PushEntityInput`, REST `PushEntity`). */
export interface PushEntityInput {
  id: string;
  name?: string | null;
  text: string;
  entityType?: string | null;
  breadcrumbs?: PushBreadcrumbInput[] | null;
  fields?: Record<string, unknown> | null;
  webUrl?: string | null;
  createdAt?: Date | string | null;
  updatedAt?: Date | string | null;
}

export interface PushInput {
  entities?: PushEntityInput[] | null;
  deletions?: string[] | null;
}

/**
 * The transports refuse such text at their door; the rule stays here too because the push service is
 * also called by transports without that check (and must never hand PostgreSQL a NUL).
 */
const UNSTORABLE_MESSAGE = 'must not contain NUL characters (U+0000) or unpaired surrogates';

type Loc = (string | number)[];

/**
 * Checks a push request against the rules of the push source and turns it into the items stored
 * with the batch. Every problem is reported, each at its place (`["entities", 3, "text"]`), in the
 * contract's names; nothing is stored unless there are none.
 */
export function checkPush(input: PushInput): { issues: ValidationIssue[]; items: StoredPushItems } {
  const issues: ValidationIssue[] = [];
  const entities = input.entities ?? [];
  const deletions = input.deletions ?? [];
  const items: StoredPushItems = { entities: [], deletions: [] };
  if (entities.length > PUSH_LIMITS.entities) {
    issues.push({ loc: ['entities'], msg: `List should have at most ${PUSH_LIMITS.entities} items, not ${entities.length}: send larger sets in several requests`, type: 'too_long' });
  }
  if (deletions.length > PUSH_LIMITS.deletions) {
    issues.push({ loc: ['deletions'], msg: `List should have at most ${PUSH_LIMITS.deletions} items, not ${deletions.length}: send larger sets in several requests`, type: 'too_long' });
  }
  if (issues.length) return { issues, items };
  if (entities.length === 0 && deletions.length === 0) {
    issues.push({ loc: ['entities'], msg: 'Send at least one entity or one deletion', type: 'too_short' });
    return { issues, items };
  }

  const firstIndex = new Map<string, number>();
  entities.forEach((entity, index) => {
    const stored = checkEntity(entity, ['entities', index], issues);
    if (!stored) return;
    const earlier = firstIndex.get(stored.entityId);
    if (earlier !== undefined) {
      issues.push({ loc: ['entities', index, 'id'], msg: `Entity "${stored.entityId}" is already at entities[${earlier}]: send each entity once per request`, type: 'value_error' });
      return;
    }
    firstIndex.set(stored.entityId, index);
    items.entities.push(stored);
  });
  const deleted = new Set<string>();
  deletions.forEach((id, index) => {
    if (!checkString(id, ['deletions', index], issues, { min: 1, max: PUSH_LIMITS.idLength })) return;
    const upserted = firstIndex.get(id);
    if (upserted !== undefined) {
      issues.push({ loc: ['deletions', index], msg: `Entity "${id}" is also sent at entities[${upserted}]: a request either upserts or deletes an entity`, type: 'value_error' });
      return;
    }
    // Deleting an entity twice in one request deletes it once.
    if (!deleted.has(id)) items.deletions.push(id);
    deleted.add(id);
  });
  return { issues, items };
}

function checkEntity(entity: PushEntityInput, loc: Loc, issues: ValidationIssue[]): StoredPushEntity | null {
  const before = issues.length;
  checkString(entity.id, [...loc, 'id'], issues, { min: 1, max: PUSH_LIMITS.idLength });
  if (entity.name != null) checkString(entity.name, [...loc, 'name'], issues, { min: 1, max: PUSH_LIMITS.nameLength });
  checkString(entity.text, [...loc, 'text'], issues, { min: 0, max: Infinity });
  if (entity.entityType != null) checkString(entity.entityType, [...loc, 'entity_type'], issues, { min: 1, max: PUSH_LIMITS.entityTypeLength });
  const breadcrumbs = entity.breadcrumbs ?? [];
  if (breadcrumbs.length > PUSH_LIMITS.breadcrumbs) {
    issues.push({ loc: [...loc, 'breadcrumbs'], msg: `List should have at most ${PUSH_LIMITS.breadcrumbs} items, not ${breadcrumbs.length}`, type: 'too_long' });
  } else {
    breadcrumbs.forEach((crumb, index) => {
      const at = [...loc, 'breadcrumbs', index];
      checkString(crumb.entityId, [...at, 'entity_id'], issues, { min: 1, max: PUSH_LIMITS.idLength });
      checkString(crumb.name, [...at, 'name'], issues, { min: 1, max: PUSH_LIMITS.nameLength });
      if (crumb.entityType != null) checkString(crumb.entityType, [...at, 'entity_type'], issues, { min: 1, max: PUSH_LIMITS.entityTypeLength });
    });
  }
  if (entity.fields != null) checkJson(entity.fields, [...loc, 'fields'], issues, 1);
  if (entity.webUrl != null && checkString(entity.webUrl, [...loc, 'web_url'], issues, { min: 1, max: PUSH_LIMITS.webUrlLength })) checkWebUrl(entity.webUrl, [...loc, 'web_url'], issues);
  const createdAt = checkDate(entity.createdAt, [...loc, 'created_at'], issues);
  const updatedAt = checkDate(entity.updatedAt, [...loc, 'updated_at'], issues);
  if (issues.length > before) return null;
  return {
    entityId: entity.id,
    entityType: entity.entityType ?? DEFAULT_PUSH_ENTITY_TYPE,
    name: entity.name ?? entity.id,
    text: entity.text,
    breadcrumbs: breadcrumbs.map((crumb) => ({ entityId: crumb.entityId, name: crumb.name, entityType: crumb.entityType ?? DEFAULT_PUSH_ENTITY_TYPE })),
    fields: entity.fields ?? {},
    webUrl: entity.webUrl ?? '',
    createdAt: createdAt?.toISOString() ?? null,
    updatedAt: updatedAt?.toISOString() ?? null,
  };
}

function checkString(value: unknown, loc: Loc, issues: ValidationIssue[], length: { min: number; max: number }): value is string {
  if (typeof value !== 'string') {
    issues.push({ loc, msg: value == null ? 'Field required' : 'Input should be a valid string', type: value == null ? 'missing' : 'string_type' });
    return false;
  }
  if (value.length < length.min) {
    issues.push({ loc, msg: `String should have at least ${length.min} character${length.min === 1 ? '' : 's'}`, type: 'string_too_short' });
    return false;
  }
  if (value.length > length.max) {
    issues.push({ loc, msg: `String should have at most ${length.max} characters`, type: 'string_too_long' });
    return false;
  }
  if (!isStorableText(value)) {
    issues.push({ loc, msg: `String ${UNSTORABLE_MESSAGE}`, type: 'value_error' });
    return false;
  }
  return true;
}

/** A pushed `web_url` links into the client's own web application; other schemes (`javascript:`, `data:`) could run script where it is shown. */
const PUSHED_LINK_PROTOCOLS = new Set(['http:', 'https:']);

function checkWebUrl(url: string, loc: Loc, issues: ValidationIssue[]): void {
  const protocol = protocolOf(url);
  if (protocol === null) issues.push({ loc, msg: 'Input should be an absolute URL', type: 'url_parsing' });
  else if (!PUSHED_LINK_PROTOCOLS.has(protocol)) issues.push({ loc, msg: "URL scheme should be 'http' or 'https'", type: 'url_scheme' });
}

/** Any JSON inside `fields`, bounded in depth, with storable strings (keys included). */
function checkJson(value: unknown, loc: Loc, issues: ValidationIssue[], depth: number): void {
  if (typeof value === 'string') {
    if (!isStorableText(value)) issues.push({ loc, msg: `String ${UNSTORABLE_MESSAGE}`, type: 'value_error' });
    return;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    issues.push({ loc, msg: 'Input should be a finite number', type: 'finite_number' });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth > PUSH_LIMITS.fieldsDepth) {
    issues.push({ loc, msg: `Fields may nest at most ${PUSH_LIMITS.fieldsDepth} levels deep`, type: 'value_error' });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => checkJson(item, [...loc, index], issues, depth + 1));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!isStorableText(key)) issues.push({ loc: [...loc, key], msg: `Field name ${UNSTORABLE_MESSAGE}`, type: 'value_error' });
    else checkJson(item, [...loc, key], issues, depth + 1);
  }
}

function checkDate(value: Date | string | null | undefined, loc: Loc, issues: ValidationIssue[]): Date | null {
  if (value == null) return null;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) {
    issues.push({ loc, msg: 'Input should be a valid datetime', type: 'datetime_parsing' });
    return null;
  }
  return date;
}

/**
 * The stored batch as the items of a source run: the deletions, then the entities. A request never
 * deletes and upserts one id, so the order changes nothing but this: a batch that replaces entities
 * frees their room under the entity guardrail before it adds the new ones.
 */
export function pushedItems(items: StoredPushItems): SourceItem[] {
  return [
    ...items.deletions.map((id) => ({ delete: id })),
    ...items.entities.map(
      (entity): SourceEntity => ({
        ...entity,
        createdAt: entity.createdAt ? new Date(entity.createdAt) : null,
        updatedAt: entity.updatedAt ? new Date(entity.updatedAt) : null,
      }),
    ),
  ];
}
