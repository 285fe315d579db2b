import { z } from 'zod';
import type { Connector, SourceItem } from '../connector.js';

/**
 * A source whose entities are sent by its users: `POST /source-connections/{id}/entities` (GraphQL
 * `pushEntities`) stores each accepted batch, and the batch then runs as a sync job of its own
 * through the same pipeline as every other source. This connector is that job's run: it yields the
 * batch's entities and deletions (`complete: false`, so nothing else of the connection is touched).
 * There is nothing to pull: push connections are never run on demand or on a schedule.
 */
const connector: Connector<Record<string, never>, null, never> = {
  shortName: 'push',
  name: 'Push API',
  description:
    'Entities your own code sends: batches of up to 1,000 entities (id, name, text, breadcrumbs, fields) and 1,000 deletions per request to POST /source-connections/{id}/entities. Each batch is synced as a job of its own.',
  auth: { kind: 'none' },
  config: z.strictObject({}),
  supportedAuthProviders: [],
  supportsContinuous: false,
  federatedSearch: false,
  receivesPushes: true,
  labels: ['api'],
  outputEntityDefinitions: ['PushEntity'],
  credentialTargets: () => [],

  async validate() {
    // Nothing to reach: the entities come to the service.
  },

  sync({ jobId, signal, expectTotal }, environment) {
    return {
      complete: false,
      nextCursor: () => null,
      items: (async function* (): AsyncGenerator<SourceItem> {
        if (!jobId || !environment.pushedBatches) throw new Error('A push connection only syncs the batches it is sent; this run has none');
        signal.throwIfAborted();
        const items = await environment.pushedBatches.itemsOf(jobId);
        expectTotal?.(items.filter((item) => !('delete' in item)).length);
        yield* items;
      })(),
    };
  },
};

export default connector;
