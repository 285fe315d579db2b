import { hash as digest } from 'node:crypto';
import type { SourceEntity } from '../../connectors/connector.js';
import { isoInstant } from './iso-instant.js';

const sha256 = (data: string | Buffer) => digest('sha256', data);

/**
 * Stable content hash: every field a reader sees, plus the file's bytes. The entity table stores it:
 * a change of what it hashes, or of how, makes the next sync of every connection rewrite every entity.
 */
export function contentHash(entity: SourceEntity): string {
  return hashedContent(entity).hash;
}

/** The content hash, and the length of the JSON it hashed (what the entity holds, roughly, without its file). */
export function hashedContent(entity: SourceEntity): { hash: string; size: number } {
  const content = JSON.stringify([
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
  ]);
  return { hash: sha256(content), size: content.length };
}
