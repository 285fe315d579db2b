import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Connector } from '../../../connectors/connector.js';
import { parseConfig } from '../../../connectors/contract/schemas.js';
import type { Orm } from '../../../platform/db/database.js';
import type { SecretBox } from '../../../platform/secrets/secrets.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import { isHttpUrl } from '../../../shared/web-url.js';
import { OperatorOAuthApp } from './operator-app.entity.js';
import type { OAuthClient } from './token-endpoint.js';

/** What listings show of an app: never its secret. */
export interface OperatorAppSummary {
  short_name: string;
  client_id: string;
  has_client_secret: boolean;
  /** The token endpoint the app's secret is sent to; null for a source without OAuth. */
  token_url: string | null;
  modified_at: string;
}

/** An operator's app: its client, and the token endpoint it was registered for (null: the source's default). */
export interface OperatorAppInput extends OAuthClient {
  tokenUrl?: string | null;
}

const SHORT_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** CATCHMENT_OAUTH_CLIENTS_FILE: `{ "<short_name>": { "client_id": "…", "client_secret": "…" } }`. */
const clientsFile = z.record(
  z.string().regex(SHORT_NAME, 'a source short name (lowercase letters, digits, _)'),
  z.strictObject({ client_id: z.string().min(1), client_secret: z.string().min(1).nullable().optional(), token_url: z.url({ protocol: /^https?$/ }).nullable().optional() }),
);

/**
 * The OAuth apps the operator registered, one per source type, so that the users of an instance sign
 * in without handling client secrets. Set through the CLI (`catchment oauth-apps set`) or a file read
 * at start (CATCHMENT_OAUTH_CLIENTS_FILE); either way kept in the database with the secret sealed,
 * and looked up when needed, so every process sees a rotated secret at once.
 *
 * An app serves one token endpoint: the one of the source's default config, or the one the operator
 * registered it for. The endpoint of a connection comes from its config, which members write, so
 * without this binding anyone who may create a connection could have the app's secret sent to a
 * server of theirs (a "self-managed GitLab" at their own address).
 */
export class OperatorOAuthApps {
  constructor(
    private readonly orm: Orm,
    private readonly secretBox: SecretBox,
    private readonly connectors: ReadonlyMap<string, Connector>,
  ) {}

  /** The app of `shortName` for a code exchange or refresh at `tokenUrl`; null when none serves that endpoint. */
  async clientFor(shortName: string, tokenUrl: string): Promise<OAuthClient | null> {
    const row = await this.orm.em.fork().findOne(OperatorOAuthApp, { shortName });
    if (!row || !sameUrl(this.servedTokenUrl(row), tokenUrl)) return null;
    return { clientId: row.clientId, clientSecret: row.sealedClientSecret === null ? null : this.secretBox.open(row.sealedClientSecret) };
  }

  async has(shortName: string): Promise<boolean> {
    return (await this.orm.em.fork().count(OperatorOAuthApp, { shortName })) > 0;
  }

  /** Registers or replaces the app of `shortName`. */
  async set(shortName: string, app: OperatorAppInput): Promise<OperatorAppSummary> {
    if (!SHORT_NAME.test(shortName)) throw new ValidationError([{ loc: ['short_name'], msg: `"${shortName}" is not a source short name (lowercase letters, digits and _)`, type: 'string_pattern_mismatch' }]);
    if (app.clientId.trim() === '') throw new ValidationError([{ loc: ['client_id'], msg: 'String should not be empty', type: 'string_too_short' }]);
    const tokenUrl = app.tokenUrl ?? null;
    if (tokenUrl !== null && !isHttpUrl(tokenUrl)) throw new ValidationError([{ loc: ['token_url'], msg: 'Must be an absolute http or https URL', type: 'url_parsing' }]);
    const em = this.orm.em.fork();
    const sealed = app.clientSecret ? this.secretBox.seal(app.clientSecret) : null;
    const row = (await em.findOne(OperatorOAuthApp, { shortName })) ?? em.create(OperatorOAuthApp, { shortName, clientId: app.clientId });
    row.clientId = app.clientId;
    row.sealedClientSecret = sealed;
    row.tokenUrl = tokenUrl === null ? null : new URL(tokenUrl).href;
    row.modifiedAt = new Date();
    await em.flush();
    return this.summary(row);
  }

  async list(): Promise<OperatorAppSummary[]> {
    return (await this.orm.em.fork().find(OperatorOAuthApp, {}, { orderBy: { shortName: 'asc' } })).map((row) => this.summary(row));
  }

  async remove(shortName: string): Promise<OperatorAppSummary> {
    const em = this.orm.em.fork();
    const row = await em.findOne(OperatorOAuthApp, { shortName });
    if (!row) throw NotFoundError.of('OAuth app', shortName);
    await em.remove(row).flush();
    return this.summary(row);
  }

  /**
   * Registers the apps of an operator's clients file (replacing those of the same sources). The
   * error names the file and what is wrong, never a value from it.
   */
  async load(path: string): Promise<string[]> {
    let parsed: z.infer<typeof clientsFile>;
    try {
      parsed = clientsFile.parse(JSON.parse(readFileSync(path, 'utf8')));
    } catch (error) {
      // JSON.parse quotes the text around a syntax error, which may be a secret: only the kind of error is said.
      const reason =
        error instanceof z.ZodError
          ? error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')
          : error instanceof SyntaxError
            ? 'not JSON'
            : `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
      throw new OperatorAppsFileError(`CATCHMENT_OAUTH_CLIENTS_FILE ${path} is not a valid clients file: ${reason}`);
    }
    for (const [shortName, app] of Object.entries(parsed)) await this.set(shortName, { clientId: app.client_id, clientSecret: app.client_secret ?? null, tokenUrl: app.token_url ?? null });
    return Object.keys(parsed);
  }

  /** The token endpoint the app's secret may go to: the registered one, else the source's default config's. */
  private servedTokenUrl(row: OperatorOAuthApp): string | null {
    if (row.tokenUrl !== null) return row.tokenUrl;
    const connector = this.connectors.get(row.shortName);
    if (connector?.auth.kind !== 'oauth2') return null;
    const defaults = parseConfig(connector, {});
    return defaults.issues.length === 0 ? connector.auth.oauth.tokenUrl(defaults.value) : null;
  }

  private summary(row: OperatorOAuthApp): OperatorAppSummary {
    return { short_name: row.shortName, client_id: row.clientId, has_client_secret: row.sealedClientSecret !== null, token_url: this.servedTokenUrl(row), modified_at: row.modifiedAt.toISOString() };
  }
}

/** The operator's clients file cannot be read or parsed: the process does not start. */
export class OperatorAppsFileError extends Error {
  override name = 'OperatorAppsFileError';
}

/** Both absolute URLs naming the same endpoint (scheme and host case, default ports normalized). */
const sameUrl = (served: string | null, asked: string) => served !== null && URL.canParse(asked) && new URL(served).href === new URL(asked).href;
