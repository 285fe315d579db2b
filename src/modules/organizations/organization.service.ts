import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../../platform/db/database.js';
import { hashSecret, randomToken } from '../../platform/secrets/secrets.js';
import { NotFoundError, ValidationError } from '../../shared/errors.js';
import { UUID_PATTERN } from '../../shared/ids.js';
import { ApiKey, Organization } from './organization.entity.js';

export interface CreatedApiKey {
  id: string;
  organization_id: string;
  /** Shown once; only its hash is stored. */
  api_key: string;
  created_at: string;
}

/** An API key as listings show it: never the key, only its first characters. */
export interface ApiKeyListing {
  id: string;
  organization_id: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface OrganizationListing {
  id: string;
  name: string;
  created_at: string;
  active_api_keys: number;
}

const API_KEY_PREFIX = 'ck_';

/** Organizations and their API keys: what operators manage through the CLI. */
export class OrganizationService {
  constructor(private readonly orm: Orm) {}

  async createOrganization(name: string, apiKey?: string): Promise<{ organization: { id: string; name: string }; api_key: string }> {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 256) {
      throw new ValidationError([{ loc: ['name'], msg: 'Organization name must be 1 to 256 characters', type: 'string_length' }]);
    }
    return this.orm.em.fork().transactional(async (em) => {
      const organization = em.create(Organization, { name: trimmed });
      const key = this.newApiKey(em, organization, apiKey);
      await em.flush();
      return { organization: { id: organization.id, name: organization.name }, api_key: key };
    });
  }

  async getOrganization(id: string): Promise<Organization> {
    const organization = UUID_PATTERN.test(id) ? await this.orm.em.fork().findOne(Organization, { id }) : null;
    if (!organization) throw NotFoundError.of('Organization', id);
    return organization;
  }

  async createApiKey(organizationId: string): Promise<CreatedApiKey> {
    const organization = await this.getOrganization(organizationId);
    const em = this.orm.em.fork();
    const key = this.newApiKey(em, em.getReference(Organization, organization.id));
    await em.flush();
    const record = await em.findOneOrFail(ApiKey, { keyHash: hashSecret(key) });
    return { id: record.id, organization_id: organization.id, api_key: key, created_at: record.createdAt.toISOString() };
  }

  /** Every organization, oldest (the default one) first, with how many of its keys still authenticate. */
  async listOrganizations(): Promise<OrganizationListing[]> {
    const em = this.orm.em.fork();
    const organizations = await em.find(Organization, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const active = await em.find(ApiKey, { revokedAt: null }, { fields: ['organization'] });
    const counts = new Map<string, number>();
    for (const key of active) counts.set(key.organization.id, (counts.get(key.organization.id) ?? 0) + 1);
    return organizations.map((organization) => ({
      id: organization.id,
      name: organization.name,
      created_at: organization.createdAt.toISOString(),
      active_api_keys: counts.get(organization.id) ?? 0,
    }));
  }

  async listApiKeys(organizationId: string): Promise<ApiKeyListing[]> {
    const organization = await this.getOrganization(organizationId);
    const keys = await this.orm.em.fork().find(ApiKey, { organization: organization.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return keys.map((key) => ({
      id: key.id,
      organization_id: organization.id,
      prefix: key.keyPrefix,
      created_at: key.createdAt.toISOString(),
      revoked_at: key.revokedAt?.toISOString() ?? null,
    }));
  }

  /** A new key for the same organization and the old one revoked, in one transaction (a lost or leaked key). */
  async rotateApiKey(id: string): Promise<CreatedApiKey & { replaced: { id: string; revoked_at: string } }> {
    return this.orm.em.fork().transactional(async (em) => {
      const old = UUID_PATTERN.test(id) ? await em.findOne(ApiKey, { id }) : null;
      if (!old) throw NotFoundError.of('API key', id);
      old.revokedAt ??= new Date();
      const key = this.newApiKey(em, old.organization);
      await em.flush();
      const record = await em.findOneOrFail(ApiKey, { keyHash: hashSecret(key) });
      return {
        id: record.id,
        organization_id: old.organization.id,
        api_key: key,
        created_at: record.createdAt.toISOString(),
        replaced: { id: old.id, revoked_at: old.revokedAt.toISOString() },
      };
    });
  }

  /** Revoked keys stop authenticating at once; the record stays for audit. Revoking twice is harmless. */
  async revokeApiKey(id: string): Promise<{ id: string; organization_id: string; revoked_at: string }> {
    const em = this.orm.em.fork();
    const record = UUID_PATTERN.test(id) ? await em.findOne(ApiKey, { id }) : null;
    if (!record) throw NotFoundError.of('API key', id);
    record.revokedAt ??= new Date();
    await em.flush();
    return { id: record.id, organization_id: record.organization.id, revoked_at: record.revokedAt.toISOString() };
  }

  /**
   * First start on an empty database: creates the default organization and returns its key so the
   * caller can print it once. Returns null when organizations already exist. Safe to race: the
   * insert happens under an advisory lock, and the loser sees the winner's organization.
   */
  async bootstrap(configuredKey: string | undefined): Promise<{ organization: { id: string; name: string }; api_key: string } | null> {
    return this.orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute('select pg_advisory_xact_lock(?)', [0x626f6f74], 'all', em.getTransactionContext());
      if ((await em.count(Organization)) > 0) return null;
      const organization = em.create(Organization, { name: 'Default' });
      const key = this.newApiKey(em, organization, configuredKey);
      await em.flush();
      return { organization: { id: organization.id, name: organization.name }, api_key: key };
    });
  }

  private newApiKey(em: EntityManager, organization: Organization, value = randomToken(API_KEY_PREFIX)): string {
    em.create(ApiKey, { organization, keyHash: hashSecret(value), keyPrefix: value.slice(0, 8) });
    return value;
  }
}
