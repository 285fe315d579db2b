import { expect } from '@jest/globals';
import { createLogger } from '../platform/logger.js';
import type { Connector, ConnectorEnvironment, SkippedItem, SourceEntity, SourceItem } from './connector.js';
import { WebClient } from '../platform/http/web-client.js';

/** What connector unit tests share: a quiet logger, config defaults, a whole run collected, a rejection. */
export const silentLogger = createLogger('silent');

export const configDefaults = (connector: Connector) =>
  Object.fromEntries(connector.configFields.filter((field) => field.default !== undefined).map((field) => [field.name, field.default]));

/** Loopback HTTP servers stand in for the web in tests: one client that may reach private networks. */
const testWebClient = new WebClient({ allowPrivateNetworks: true });

export const connectorEnvironment = (localFolderRoots: string[] = []): ConnectorEnvironment => ({ localFolderRoots, webClient: testWebClient });

/** Runs a sync to its end (config over the connector's defaults) and sorts what it yielded. */
export async function collectRun(
  connector: Connector,
  { config, credentials = {}, cursor = null, environment = connectorEnvironment() }: { config: Record<string, unknown>; credentials?: Record<string, unknown>; cursor?: Record<string, unknown> | null; environment?: ConnectorEnvironment },
) {
  const skipped: SkippedItem[] = [];
  const reportSkipped = (item: SkippedItem) => skipped.push(item);
  const run = connector.sync({ config: { ...configDefaults(connector), ...config }, credentials, cursor, signal: new AbortController().signal, logger: silentLogger, reportSkipped }, environment);
  const items: SourceItem[] = [];
  for await (const item of run.items) items.push(item);
  const entities = items.filter((item): item is SourceEntity => 'entityId' in item);
  return {
    complete: run.complete,
    cursor: run.nextCursor(),
    entities,
    byId: new Map(entities.map((entity) => [entity.entityId, entity])),
    ids: entities.map((entity) => entity.entityId).sort(),
    keeps: items.flatMap((item) => ('keep' in item ? [item.keep] : [])).sort(),
    deletes: items.flatMap((item) => ('delete' in item ? [item.delete] : [])).sort(),
    /** What the run reported left out (SyncContext.reportSkipped), in its order. */
    skipped,
  };
}

/** The error a promise rejects with (the test fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}
