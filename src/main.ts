import 'reflect-metadata';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startServer, type Roles } from './app.js';
import { openCore, type Core } from './core.js';
import { ConfigError, isEmbedded, loadConfig, type Config } from './config.js';
import { printGraphqlSchema } from './graphql/schema.js';
import { runStdioProxy, StdioProxyError } from './mcp/stdio.js';
import { DataDirectoryInUseError, embeddedDatabaseExists } from './platform/db/embedded-postgres.js';
import { DatabaseUnreachableError } from './platform/db/wait-for-database.js';
import { createLogger } from './platform/logger.js';
import { DomainError } from './shared/errors.js';
import { OperatorAppsFileError } from './modules/connections/oauth/operator-apps.js';

const USAGE = `Usage: catchment <command> [options]

  start                                   API and worker in one process (what npm start runs)
  serve                                   API only
  worker                                  worker only
  migrate                                 apply pending database migrations and exit
  orgs create --name N                    create an organization and its first API key
  orgs list                               list organizations (the default one first) with their active key counts
  api-keys create --org ID                create another API key for an organization
  api-keys list --org ID                  list an organization's API keys: ids, prefixes, created and revoked
                                          times (never the keys)
  api-keys rotate --id ID                 replace an API key: a new key for its organization, the old one revoked
  api-keys revoke --id ID                 revoke an API key
  tokens issue --org ID --email E --role owner|admin|member [--ttl SECONDS]
                                          issue a bearer token for a user of an organization
  oauth-apps set SHORT_NAME --client-id ID [--client-secret-stdin] [--token-url URL]
                                          register (or replace) the operator's OAuth app of a source, its secret
                                          read from stdin and sealed in the database (leave it out for a PKCE
                                          public client); users then sign in with oauth_browser. The secret is
                                          sent only to the source's default token endpoint, or to --token-url
                                          (a self-managed GitLab, GitHub Enterprise)
  oauth-apps list                         list the registered OAuth apps: source, client id, whether a secret
                                          is set (never the secret)
  oauth-apps remove SHORT_NAME            remove a source's OAuth app (browser sign-ins then need BYOC)
  schema:print                            print the GraphQL schema (SDL)
  mcp [--url URL] [--api-key KEY] [--token T]
                                          MCP over stdio (for desktop agent clients), relayed to a running
                                          Catchment's /mcp; defaults from CATCHMENT_URL, CATCHMENT_API_KEY, CATCHMENT_TOKEN
  migrate:create                          generate a migration from the entities (development)

Every operator command prints JSON. Configuration comes from the environment (see README).
Embedded (no DATABASE_URL), operator commands use the database under CATCHMENT_DATA_DIR, joining the server
running there; where none exists they stop and create nothing, unless given --create.`;

class UsageError extends Error {}

function option(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function shortNameArgument(value: string | undefined): string {
  if (!value) throw new UsageError('The source\'s short name is required, e.g. catchment oauth-apps set github --client-id …');
  return value;
}

/** A client secret piped in (never a command-line argument, which other users of the machine can read). */
async function secretFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--client-secret-stdin reads the secret from stdin: pipe it in (e.g. printf %s "$SECRET" | catchment …)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const secret = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (secret === '') throw new UsageError('--client-secret-stdin got an empty secret');
  return secret;
}

/**
 * Opens the core for one operator command; logs go to stderr so stdout holds only the JSON result.
 * Embedded, a command run from the wrong directory would otherwise create a second, empty database
 * whose keys no server accepts: it stops unless `create` says a new database is wanted.
 */
async function withCore<T>(config: Config, run: (core: Core) => Promise<T>, options = { migrate: true, create: false }): Promise<T> {
  if (isEmbedded(config) && !options.create && !embeddedDatabaseExists(config.dataDir)) {
    throw new UsageError(
      `No Catchment database in ${path.resolve(config.dataDir)}: no server runs there and none was created. Run the command where the server runs, or set CATCHMENT_DATA_DIR (or DATABASE_URL) to its data; --create makes a new database there.`,
    );
  }
  const core = await openCore(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, 2), { ...options, joinRunningServer: true });
  try {
    return await run(core);
  } finally {
    await core.close();
  }
}

/** Runs the process's roles until SIGTERM/SIGINT, then finishes in-flight work and exits. */
async function serve(config: Config, roles: Roles): Promise<void> {
  const logger = createLogger(config.logLevel);
  const running = await startServer(config, logger, roles);
  const lines = roles.api
    ? [`Catchment is listening on ${running.url}`, `  Web console:        ${running.url}/`, `  GraphQL playground: ${running.url}/graphql`, `  REST reference:     ${running.url}/docs`]
    : ['Catchment worker is running', ...(running.url ? [`  Metrics: ${running.url}/metrics`] : [])];
  if (running.bootstrapOrganizationId) lines.push(`  Default organization: ${running.bootstrapOrganizationId}`);
  if (running.bootstrapApiKey) {
    // Printed once, straight to the terminal and never through the logger: only its hash is stored.
    lines.push(`  API key of the default organization (shown once): ${running.bootstrapApiKey}`);
  }
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await running.stop();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

async function main(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      org: { type: 'string' },
      id: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      ttl: { type: 'string' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      token: { type: 'string' },
      create: { type: 'boolean' },
      'client-id': { type: 'string' },
      'client-secret-stdin': { type: 'boolean' },
      'token-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  // `oauth-apps set|remove` take the source's short name after the command.
  const [command, argument] = positionals[0] === 'oauth-apps' ? [positionals.slice(0, 2).join(' '), positionals[2]] : [positionals.join(' '), undefined];
  if (values.help || command === '' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return undefined;
  }
  if (command === 'schema:print') {
    process.stdout.write(await printGraphqlSchema());
    return undefined;
  }
  if (command === 'mcp') {
    // A client of a running server: none of the server's configuration applies.
    const url = (values.url as string | undefined) ?? process.env.CATCHMENT_URL ?? 'http://127.0.0.1:8080';
    const apiKey = (values['api-key'] as string | undefined) ?? process.env.CATCHMENT_API_KEY;
    const token = (values.token as string | undefined) ?? process.env.CATCHMENT_TOKEN;
    if (!apiKey && !token) throw new UsageError('mcp needs credentials: --api-key or CATCHMENT_API_KEY (or --token / CATCHMENT_TOKEN)');
    await runStdioProxy({ url, apiKey, token });
    return undefined;
  }
  const config = loadConfig();
  const operator = { migrate: true, create: values.create === true };
  switch (command) {
    case 'start':
      await serve(config, { api: true, worker: true });
      return undefined;
    case 'serve':
      await serve(config, { api: true, worker: false });
      return undefined;
    case 'worker':
      await serve(config, { api: false, worker: true });
      return undefined;
    case 'migrate':
      return withCore(config, async (core) => ({ applied: await core.database.migrate() }), { ...operator, migrate: false });
    case 'migrate:create':
      return withCore(
        config,
        async (core) => {
          const result = await core.database.orm.migrator.create(new URL('./migrations', import.meta.url).pathname);
          return { file: result.fileName, up: result.diff.up, note: 'append it to src/migrations/index.ts' };
        },
        { ...operator, migrate: false },
      );
    case 'orgs create':
      return withCore(config, (core) => core.services.organizations.createOrganization(option(values, 'name')), operator);
    case 'orgs list':
      return withCore(config, (core) => core.services.organizations.listOrganizations(), operator);
    case 'api-keys create':
      return withCore(config, (core) => core.services.organizations.createApiKey(option(values, 'org')), operator);
    case 'api-keys list':
      return withCore(config, (core) => core.services.organizations.listApiKeys(option(values, 'org')), operator);
    case 'api-keys rotate':
      return withCore(config, (core) => core.services.organizations.rotateApiKey(option(values, 'id')), operator);
    case 'api-keys revoke':
      return withCore(config, (core) => core.services.organizations.revokeApiKey(option(values, 'id')), operator);
    case 'tokens issue': {
      const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
      if (ttl !== undefined && !Number.isInteger(ttl)) throw new UsageError('--ttl must be a whole number of seconds');
      return withCore(config, (core) =>
        core.services.auth.issueToken({ organizationId: option(values, 'org'), email: option(values, 'email'), role: option(values, 'role'), ttlSeconds: ttl }),
      operator,
      );
    }
    case 'oauth-apps set': {
      const shortName = shortNameArgument(argument);
      const clientId = option(values, 'client-id');
      const clientSecret = values['client-secret-stdin'] === true ? await secretFromStdin() : null;
      const tokenUrl = typeof values['token-url'] === 'string' ? values['token-url'] : null;
      return withCore(config, (core) => core.services.operatorApps.set(shortName, { clientId, clientSecret, tokenUrl }), operator);
    }
    case 'oauth-apps list':
      return withCore(config, (core) => core.services.operatorApps.list(), operator);
    case 'oauth-apps remove': {
      const shortName = shortNameArgument(argument);
      return withCore(config, (core) => core.services.operatorApps.remove(shortName), operator);
    }
    default:
      throw new UsageError(`Unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (output) => {
    if (output !== undefined) process.stdout.write(JSON.stringify(output, null, 2) + '\n');
  },
  (error: unknown) => {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const known = usage || error instanceof ConfigError || error instanceof DomainError || error instanceof DataDirectoryInUseError || error instanceof DatabaseUnreachableError || error instanceof StdioProxyError || error instanceof OperatorAppsFileError;
    const message = known ? (error as Error).message : `Unexpected error: ${(error as Error).stack ?? String(error)}`;
    process.stderr.write(JSON.stringify({ error: message, ...(error instanceof DomainError ? { code: error.code } : {}) }) + '\n');
    if (usage) process.stderr.write('\n' + USAGE + '\n');
    process.exit(usage ? 2 : 1);
  },
);
