import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { uuidv7 } from '../../shared/ids.js';

export const ROLES = ['member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** True when `role` grants at least what `required` does (owner > admin > member). */
export function roleAtLeast(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}

@Entity({ tableName: 'organizations' })
export class Organization {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'string', length: 256 })
  name!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}

/** An API key identifies its organization. Only the SHA-256 of the key is stored. */
@Entity({ tableName: 'api_keys' })
export class ApiKey {
  [OptionalProps]?: 'id' | 'createdAt' | 'revokedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Property({ type: 'string', length: 64 })
  @Unique()
  keyHash!: string;

  /** First characters of the key, to recognise it in listings without revealing it. */
  @Property({ type: 'string', length: 16 })
  keyPrefix!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  revokedAt: Date | null = null;
}

/** A person in an organization, recorded when a bearer token is issued for them. */
@Entity({ tableName: 'users' })
@Unique({ properties: ['organization', 'email'] })
export class User {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Property({ type: 'string', length: 320 })
  email!: string;

  @Property({ type: 'string', length: 16 })
  role!: Role;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}

/** HMAC key that signs bearer tokens; its id is the JWT `kid`. Stored sealed with the encryption key. */
@Entity({ tableName: 'signing_keys' })
export class SigningKey {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'text' })
  sealedSecret!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
