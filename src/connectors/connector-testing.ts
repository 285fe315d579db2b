import { expect } from '@jest/globals';
import { z } from 'zod';
import { createLogger } from '../platform/logger.js';
import { WebClient } from '../platform/http/web-client.js';
import type { ConnectionContext, Connector, ConnectorEnvironment, SkippedItem, SourceEntity, SourceItem, SyncContext } from './connector.js';
import { createSourceHttpClient } from './contract/http-client.js';
import { parseConfig, parseCredentials } from './contract/schemas.js';
import type { SourceHttpClient, TokenProvider } from './contract/source-http.js';

/** What connector unit tests share: a quiet logger, parsed configs, contexts, a whole run collected, a rejection. */
export const silentLogger = createLogger('silent');

/** Loopback HTTP servers stand in for the web in tests: one client that may reach private networks. */
const testWebClient = new WebClient({ allowPrivateNetworks: true });

export const connectorEnvironment = (localFolderRoots: string[] = []): ConnectorEnvironment => ({ localFolderRoots, webClient: testWebClient });

/** `config` parsed by the connector's schema, defaults applied, as the platform hands it over; the test fails on any issue. */
export function parsedConfig<Config>(connector: Connector<Config>, config: unknown): Config {
  const parsed = parseConfig(connector, config);
  expect(parsed.issues).toEqual([]);
  return parsed.value;
}

/** `credentials` parsed by the connector's schema (its fields or pasted token), as the platform stores them; the test fails on any issue. */
export function parsedCredentials<Credentials>(connector: Connector<unknown, Credentials>, credentials: unknown): Credentials | null {
  const parsed = parseCredentials(connector, credentials);
  expect(parsed.issues).toEqual([]);
  return parsed.value;
}

interface ConnectionOptions {
  /** Given as a user would send it: parsed with the connector's schema. */
  config: unknown;
  /** Given as a user would send them (null: none, as for OAuth connections): parsed with the connector's schema. */
  credentials?: unknown;
  tokens?: TokenProvider | null;
  /** Instead of the platform's client (built with `allowPrivateNetworks: true`, for loopback servers). */
  http?: SourceHttpClient;
  /** Where the platform's client records the waits it asks for (retries, pacing): tests never sleep them. */
  waits?: number[];
  signal?: AbortSignal;
}

/** The context `validate` and `search` get, built as the platform builds it. */
export function connectionContext<Config, Credentials>(
  connector: Connector<Config, Credentials>,
  { config: givenConfig, credentials: givenCredentials = null, tokens = null, http, waits = [], signal = new AbortController().signal }: ConnectionOptions,
): ConnectionContext<Config, Credentials> {
  const config = parsedConfig(connector, givenConfig);
  const credentials = givenCredentials === null ? null : parsedCredentials(connector, givenCredentials);
  return {
    config,
    credentials,
    tokens,
    http:
      http ??
      createSourceHttpClient({ connector, config, credentials, tokens, allowPrivateNetworks: true, signal, logger: silentLogger, sleep: async (ms) => void waits.push(ms) }),
    signal,
    logger: silentLogger,
  };
}

interface RunOptions<Cursor> extends ConnectionOptions {
  cursor?: Cursor | null;
  resuming?: boolean;
  /** Where saved checkpoints go: pass an array to keep those of a run that fails. */
  checkpoints?: Cursor[];
  reportSkipped?: (item: SkippedItem) => void;
}

/** The context `sync` gets, built as the platform builds it (see connectionContext). */
export function syncContext<Config, Credentials, Cursor>(
  connector: Connector<Config, Credentials, Cursor>,
  { cursor = null, resuming = false, checkpoints = [], reportSkipped, ...options }: RunOptions<Cursor>,
): SyncContext<Config, Credentials, Cursor> {
  return {
    ...connectionContext(connector, options),
    cursor,
    resuming,
    checkpoint: (saved) => checkpoints.push(structuredClone(saved)),
    ...(reportSkipped ? { reportSkipped } : {}),
  };
}

/** Runs a sync to its end (config parsed, defaults applied) and sorts what it yielded; `checkpoints` are the cursors it saved on the way, in order. */
export async function collectRun<Config, Credentials, Cursor>(
  connector: Connector<Config, Credentials, Cursor>,
  { environment = connectorEnvironment(), checkpoints = [], ...options }: RunOptions<Cursor> & { environment?: ConnectorEnvironment },
) {
  const skipped: SkippedItem[] = [];
  const run = connector.sync(syncContext(connector, { ...options, checkpoints, reportSkipped: (item) => skipped.push(item) }), environment);
  const items: SourceItem[] = [];
  for await (const item of run.items) items.push(item);
  const entities = items.filter((item): item is SourceEntity => 'entityId' in item);
  return {
    complete: run.complete,
    cursor: run.nextCursor(),
    checkpoints,
    entities,
    byId: new Map(entities.map((entity) => [entity.entityId, entity])),
    ids: entities.map((entity) => entity.entityId).sort(),
    keeps: items.flatMap((item) => ('keep' in item ? [item.keep] : [])).sort(),
    deletes: items.flatMap((item) => ('delete' in item ? [item.delete] : [])).sort(),
    /** What the run reported left out (SyncContext.reportSkipped), in its order. */
    skipped,
  };
}

/**
 * A connector with no config that syncs nothing, for tests of what the platform does around connectors
 * (the HTTP client, tokens): `definition` gives the parts the test is about.
 */
export function emptyConnector(definition: Pick<Connector, 'shortName' | 'description' | 'auth'> & Partial<Connector>): Connector {
  return {
    name: definition.shortName,
    config: z.object({}),
    supportedAuthProviders: [],
    supportsContinuous: false,
    federatedSearch: false,
    labels: [],
    outputEntityDefinitions: [],
    credentialTargets: () => [],
    validate: async () => {},
    sync: () => ({ items: (async function* () {})(), complete: true, nextCursor: () => null }),
    ...definition,
  };
}

/** The error a promise rejects with (the test fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}
