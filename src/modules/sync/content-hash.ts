import { hash as digest } from 'node:crypto';
import type { SourceEntity } from '../../connectors/connector.js';
import { isoInstant } from './iso-instant.js';

const sha256 = (data: string | Buffer) => digest('sha256', data);

/** What the content hash reads, as the JSON array it hashes, in this order. */
export type HashedItems = [
  entityType: string,
  name: string,
  breadcrumbs: SourceEntity['breadcrumbs'],
  text: string,
  fields: SourceEntity['fields'],
  webUrl: string,
  createdAt: string | null,
  updatedAt: string | null,
  language: string | null,
  access: NonNullable<SourceEntity['access']> | null,
  fileHash: string | null,
];

/** An entity with the JSON its content hash read (HashedItems): the raw data store keeps that JSON as the entity's record. */
export interface HashedEntity {
  entity: SourceEntity;
  content: string;
}

/**
 * Stable content hash: every field a reader sees, plus the file's bytes. The entity table stores it:
 * a change of what it hashes, or of how, makes the next sync of every connection rewrite every entity.
 */
export function contentHash(entity: SourceEntity): string {
  return hashedContent(entity).hash;
}

/** The content hash, and the JSON it hashed (see HashedItems; its length is what the entity holds, roughly, without its file). */
export function hashedContent(entity: SourceEntity): { hash: string; content: string } {
  const items: HashedItems = [
    entity.entityType,
    entity.name,
    entity.breadcrumbs,
    entity.text,
    entity.fields,
    entity.webUrl,
    entity.createdAt ? isoInstant(entity.createdAt) : null,
    entity.updatedAt ? isoInstant(entity.updatedAt) : null,
    entity.language ?? null,
    entity.access ?? null,
    entity.file ? sha256(entity.file.bytes) : null,
  ];
  const content = JSON.stringify(items);
  return { hash: sha256(content), content };
}

/** The entity `items` (parsed from hashedContent's JSON) describe, but its file's bytes and dates, which stay as written. */
export function entityOfHashedItems(
  entityId: string,
  items: HashedItems,
): Omit<SourceEntity, 'file' | 'createdAt' | 'updatedAt'> & { createdAt: string | null; updatedAt: string | null } {
  const [entityType, name, breadcrumbs, text, fields, webUrl, createdAt, updatedAt, language, access] = items;
  return { entityId, entityType, name, breadcrumbs, text, fields, webUrl, createdAt, updatedAt, ...(language !== null ? { language } : {}), ...(access !== null ? { access } : {}) };
}
