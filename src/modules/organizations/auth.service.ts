import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, decodeProtectedHeader, errors as joseErrors } from 'jose';
import type { Orm } from '../../platform/db/database.js';
import { hashSecret, type SecretBox } from '../../platform/secrets/secrets.js';
import { UnauthenticatedError, ValidationError } from '../../shared/errors.js';
import { invalidateOnWrites, TtlCache } from '../../shared/ttl-cache.js';
import { ApiKey, Organization, ROLES, SigningKey, User, type Role } from './organization.entity.js';
import type { Principal } from './principal.js';
import type { OrganizationService } from './organization.service.js';

const ISSUER = 'catchment';
/**
 * How long a valid API key is trusted without asking the database again. A revocation made by this
 * process (any write of an API key or organization through the ORM) takes effect at once; one made
 * by another process (`catchment api-keys revoke`, another API replica) within this time.
 */
export const API_KEY_CACHE_MS = 1000;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/**
 * Turns credentials into a Principal. API keys are looked up by hash; bearer tokens are HS256 JWTs
 * signed with a key kept sealed in the database, so every process sharing the database verifies them.
 */
export class AuthService {
  /** Signing secrets by key id, opened once per process. */
  private readonly signingSecrets = new Map<string, Uint8Array>();
  /** Valid API keys by hash (invalid ones are never kept: every wrong key asks the database). */
  private readonly apiKeys: TtlCache<Principal>;
  /** Unrevoked API keys by id, for the periodic checks of open streams (one query per key and TTL, however many streams). */
  private readonly activeApiKeyIds: TtlCache<true>;

  constructor(
    private readonly orm: Orm,
    private readonly secretBox: SecretBox,
    private readonly organizations: OrganizationService,
    private readonly defaultTokenTtlSeconds: number,
    apiKeyCacheMs = API_KEY_CACHE_MS,
  ) {
    this.apiKeys = new TtlCache(apiKeyCacheMs);
    this.activeApiKeyIds = new TtlCache(apiKeyCacheMs);
    invalidateOnWrites(orm, [ApiKey, Organization], () => {
      this.apiKeys.invalidate();
      this.activeApiKeyIds.invalidate();
    });
  }

  /** Every request with a key comes here: one indexed read (no entity hydration), then cached briefly. */
  async authenticateApiKey(apiKey: string): Promise<Principal> {
    const keyHash = hashSecret(apiKey);
    const principal = await this.apiKeys.get(keyHash, async () => {
      const [record] = await this.orm.em
        .getConnection()
        .execute<{ id: string; organization_id: string }[]>('select id, organization_id from api_keys where key_hash = ? and revoked_at is null', [keyHash]);
      if (!record) throw new UnauthenticatedError('Invalid or revoked API key');
      return { kind: 'api_key', organizationId: record.organization_id, apiKeyId: record.id, role: 'admin', email: null } satisfies Principal;
    });
    return { ...principal };
  }

  /**
   * Throws UnauthenticatedError once the credentials a principal was admitted with no longer hold:
   * its API key was revoked (seen within the API key cache's TTL), or its bearer token expired.
   * Long-lived operations (subscription streams) call it periodically; requests need not.
   */
  async recheck(principal: Principal): Promise<void> {
    if (principal.kind === 'user') {
      if (Date.now() >= principal.tokenExpiresAt) throw new UnauthenticatedError('Bearer token expired');
      return;
    }
    await this.activeApiKeyIds.get(principal.apiKeyId, async () => {
      const [record] = await this.orm.em.getConnection().execute<{ id: string }[]>('select id from api_keys where id = ? and revoked_at is null', [principal.apiKeyId]);
      if (!record) throw new UnauthenticatedError('API key revoked');
      return true;
    });
  }

  async authenticateBearer(token: string): Promise<Principal> {
    try {
      const { kid } = decodeProtectedHeader(token);
      const secret = kid ? await this.signingSecret(kid) : null;
      if (!secret) throw new UnauthenticatedError('Invalid bearer token');
      const { payload } = await jwtVerify(token, secret, { issuer: ISSUER, algorithms: ['HS256'] });
      const user = await this.orm.em.fork().findOne(User, { id: String(payload.sub), organization: String(payload.org) });
      // The user record is the authority on the role: a demotion takes effect on live tokens.
      if (!user) throw new UnauthenticatedError('Invalid bearer token');
      // issueToken always sets `exp`; a token without one (signed elsewhere with our key) never expires.
      const tokenExpiresAt = payload.exp === undefined ? Number.POSITIVE_INFINITY : payload.exp * 1000;
      return { kind: 'user', organizationId: user.organization.id, userId: user.id, role: user.role, email: user.email, tokenExpiresAt };
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new UnauthenticatedError('Bearer token expired');
      throw new UnauthenticatedError('Invalid bearer token');
    }
  }

  /** Issues a bearer token for a user of the organization, creating the user or updating its role. */
  async issueToken(input: { organizationId: string; email: string; role: string; ttlSeconds?: number }): Promise<IssuedToken> {
    const issues = [];
    if (!EMAIL_PATTERN.test(input.email)) issues.push({ loc: ['email'], msg: 'Not a valid email address', type: 'value_error' });
    if (!(ROLES as readonly string[]).includes(input.role)) issues.push({ loc: ['role'], msg: `Role must be one of ${ROLES.join(', ')}`, type: 'enum' });
    const ttl = input.ttlSeconds ?? this.defaultTokenTtlSeconds;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > 31_536_000) issues.push({ loc: ['ttl'], msg: 'TTL must be 1 to 31536000 seconds', type: 'value_error' });
    if (issues.length) throw new ValidationError(issues);
    const organization = await this.organizations.getOrganization(input.organizationId);

    const em = this.orm.em.fork();
    const email = input.email.toLowerCase();
    let user = await em.findOne(User, { organization: organization.id, email });
    if (user) user.role = input.role as Role;
    else user = em.create(User, { organization: em.getReference(Organization, organization.id), email, role: input.role as Role });
    await em.flush();

    const { id: kid, secret } = await this.currentSigningKey();
    const accessToken = await new SignJWT({ org: organization.id, email, role: user.role })
      .setProtectedHeader({ alg: 'HS256', kid })
      .setIssuer(ISSUER)
      .setSubject(user.id)
      .setIssuedAt()
      .setExpirationTime(`${ttl}s`)
      .sign(secret);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl };
  }

  private async signingSecret(kid: string): Promise<Uint8Array | null> {
    const cached = this.signingSecrets.get(kid);
    if (cached) return cached;
    const record = /^[0-9a-f-]{36}$/i.test(kid) ? await this.orm.em.fork().findOne(SigningKey, { id: kid }) : null;
    if (!record) return null;
    const secret = Buffer.from(this.secretBox.open(record.sealedSecret), 'base64');
    this.signingSecrets.set(kid, secret);
    return secret;
  }

  /** The newest signing key, created on first use. */
  private async currentSigningKey(): Promise<{ id: string; secret: Uint8Array }> {
    const em = this.orm.em.fork();
    let [record] = await em.find(SigningKey, {}, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 1 });
    if (!record) {
      record = em.create(SigningKey, { sealedSecret: this.secretBox.seal(randomBytes(32).toString('base64')) });
      await em.flush();
    }
    const secret = await this.signingSecret(record.id);
    return { id: record.id, secret: secret! };
  }
}
