import { OptionalProps } from '@mikro-orm/core';
import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { uuidv7 } from '../../../shared/ids.js';
import { Organization } from '../../organizations/organization.entity.js';
import { SourceConnection } from '../source-connection.entity.js';

/**
 * One browser sign-in under way for a connection: the `state` it was sent with (only its SHA-256,
 * so a database read cannot complete someone's flow), the PKCE verifier and a caller's own OAuth
 * client (sealed), where the browser goes afterwards, and until when it may complete. Single use:
 * `usedAt` is set by the callback that completes it. A new sign-in of the connection replaces it.
 */
@Entity({ tableName: 'oauth_authorizations' })
export class OAuthAuthorization {
  [OptionalProps]?: 'id' | 'createdAt' | 'usedAt' | 'redirectUrl';

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => SourceConnection, { deleteRule: 'cascade' })
  @Unique()
  sourceConnection!: SourceConnection;

  @Property({ type: 'string', length: 64 })
  @Unique()
  stateHash!: string;

  /** A SecretBox envelope of `PendingSecrets` (authorization-flow.ts). */
  @Property({ type: 'text' })
  sealedSecrets!: string;

  /** The `redirect_uri` sent to the provider, which the code exchange must repeat. */
  @Property({ type: 'text' })
  redirectUri!: string;

  /** The caller's page the browser is sent to with the outcome; null: the service shows a page itself. */
  @Property({ type: 'text', nullable: true })
  redirectUrl: string | null = null;

  /** Start the connection's first sync once signed in. */
  @Property({ type: 'boolean' })
  syncOnCompletion!: boolean;

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  usedAt: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
