import { OptionalProps } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** The OAuth app the operator registered for one source type; its secret sealed, never returned. */
@Entity({ tableName: 'operator_oauth_apps' })
export class OperatorOAuthApp {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'sealedClientSecret' | 'tokenUrl';

  @PrimaryKey({ type: 'string', length: 64 })
  shortName!: string;

  @Property({ type: 'text' })
  clientId!: string;

  /** Null for public clients (PKCE without a secret). */
  @Property({ type: 'text', nullable: true })
  sealedClientSecret: string | null = null;

  /**
   * The token endpoint the app's secret may be sent to (a self-managed GitLab, GitHub Enterprise…);
   * null: the one of the source's default config (gitlab.com, github.com…).
   */
  @Property({ type: 'text', nullable: true })
  tokenUrl: string | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime' })
  modifiedAt: Date = new Date();
}
