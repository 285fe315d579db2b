/**
 * Full sync of N stub entities and an unchanged re-sync, in the embedded deployment with the default
 * embedder. Prints entities/s for both, the re-sync speed-up, peak memory, and the ratio of the full
 * sync's rate to the rate of embedding plus index writes alone (the pipeline's floor).
 *
 *   npm run bench:sync [-- --entities 100000]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { stubEntity } from '../src/connectors/stub/index.js';
import { chunkText } from '../src/modules/sync/chunker.js';
import { startTestServer } from '../test/support/harness.js';
import { api, waitForJob } from '../test/support/sync-helpers.js';

const { values } = parseArgs({ options: { entities: { type: 'string', default: '100000' }, size: { type: 'string', default: 'small' } } });
const count = Number(values.entities);
const config = { entity_count: count, seed: 7, size_mix: values.size, hierarchy_depth: 2, code_files: false, delay_ms: 0, revision: 0 };

const server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_SYNC_BATCH_SIZE: '2000', CATCHMENT_LOG_LEVEL: 'warn' } });
try {
  const call = api(server.url, server.apiKey);
  await call('POST', '/collections', { name: 'Bench sync', readable_id: 'bench-sync' });
  const embedder = await server.running.core.embedder(); // load the model before timing

  const created = (await call('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'bench-sync', authentication: { credentials: { token: 'bench' } }, config, sync_immediately: false })).body;
  let t0 = performance.now();
  const first = (await call('POST', `/source-connections/${created.id}/run`)).body;
  const full = await waitForJob(call, created.id, first.id, ['COMPLETED', 'FAILED'], 3_600_000);
  const fullSeconds = (performance.now() - t0) / 1000;
  if (full.status !== 'COMPLETED') throw new Error(`full sync failed: ${full.error}`);

  t0 = performance.now();
  const again = (await call('POST', `/source-connections/${created.id}/run?force_full_sync=true`)).body;
  const resync = await waitForJob(call, created.id, again.id, ['COMPLETED', 'FAILED'], 3_600_000);
  const resyncSeconds = (performance.now() - t0) / 1000;

  // The floor: embedding and index writes alone, for the same texts, into another collection.
  const vectors = await server.running.core.vectors();
  const sample = Math.min(count, 20_000);
  t0 = performance.now();
  for (let start = 0; start < sample; start += 2000) {
    const entities = Array.from({ length: Math.min(2000, sample - start) }, (_, k) => stubEntity(start + k, config as never));
    const pieces = entities.flatMap((entity) => chunkText(entity.text, entity.language).map((text, index) => ({ entity, text, index })));
    const embedded = await embedder.embed(pieces.map((p) => `${p.entity.name}\n${p.text}`));
    await vectors.add(
      'bench-floor',
      pieces.map((p, i) => ({
        chunkId: `floor:${p.entity.entityId}:${p.index}`,
        sourceConnectionId: 'floor',
        entityId: p.entity.entityId,
        chunkIndex: p.index,
        name: p.entity.name,
        text: p.text,
        vector: embedded[i]!,
        entityType: p.entity.entityType,
        sourceName: 'stub',
        breadcrumbs: [],
        createdAt: p.entity.createdAt,
        updatedAt: p.entity.updatedAt,
        webUrl: p.entity.webUrl,
        url: null,
        syncId: 'floor',
        syncJobId: 'floor',
        rawSourceFields: p.entity.fields,
        access: { viewers: null, isPublic: true },
      })),
    );
  }
  const floorRate = sample / ((performance.now() - t0) / 1000);
  await vectors.deleteCollection('bench-floor');

  const total = full.entities_inserted;
  const fullRate = total / fullSeconds;
  const resyncRate = (resync.entities_skipped + resync.entities_updated + resync.entities_inserted) / resyncSeconds;
  console.log(`\nstub entities: ${count} (${total} with folders), size mix ${values.size}, chunks written ${full.chunks_written}`);
  console.log(`full sync:        ${fullSeconds.toFixed(1)} s  ${fullRate.toFixed(0)} entities/s`);
  console.log(`unchanged resync: ${resyncSeconds.toFixed(1)} s  ${resyncRate.toFixed(0)} entities/s  (${(resyncRate / fullRate).toFixed(1)}× the full sync; skipped ${resync.entities_skipped}, updated ${resync.entities_updated})`);
  console.log(`embed + index floor: ${floorRate.toFixed(0)} entities/s  → full sync runs at ${((fullRate / floorRate) * 100).toFixed(0)} % of it`);
  console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
} finally {
  await server.stop();
}
