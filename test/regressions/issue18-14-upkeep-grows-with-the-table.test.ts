import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import { startTestServer, type TestServer } from '../support/harness.js';
import { api, createCollection, FAST_WORKER, syncStub } from '../support/sync-helpers.js';

const SHARD_ROWS = 1000;
const BATCH = 500;

/**
 * Issue 18, finding 14 (stop 23's trace of a 1,000,000-entity sync): a collection's chunks were one
 * LanceDB table, and each compaction folds the rows added into the table's whole full-text index (the
 * vector index is also retrained as it grows), so every optimize cost more as the table grew: 4–15 s
 * each by 1,000,000 rows, resident memory between them 557 → 880 MiB and their peaks 1,006 → 1,247
 * MiB. A collection's chunks now fill tables of CATCHMENT_LANCEDB_SHARD_ROWS in turn, and searches read
 * them all. Here, through the service: a sync spreads its chunks over at least three shards (the first
 * and the last hold under the setting plus a few batches' chunks: a batch of 500 entities writes more
 * than 500 chunks, in slices), each entity's chunks in one shard only, and REST search finds an
 * entity of the first shard and one of the last by name, and counts every chunk.
 */
describe('issue 18-14: a collection’s chunks fill shards of CATCHMENT_LANCEDB_SHARD_ROWS, and search reads them all', () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  test('a sync of 2,600 entities in batches of 500 fills 1,000-row shards in turn; REST finds entities of the first and the last', async () => {
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_SYNC_BATCH_SIZE: String(BATCH), CATCHMENT_LANCEDB_SHARD_ROWS: String(SHARD_ROWS) } });
    const call = api(server.url, server.apiKey);
    const collectionId = await createCollection(call, 'sharded');
    await syncStub(call, 'sharded', { entity_count: 2600, seed: 5, size_mix: 'small', hierarchy_depth: 0, code_files: false, delay_ms: 0 });

    const directory = path.join(server.dataDir, 'lancedb');
    const first = LanceDbVectorIndex.tableName(collectionId);
    const shards = readdirSync(directory).filter((name) => name === `${first}.lance` || name.startsWith(`${first}_s`));
    expect(shards.length).toBeGreaterThanOrEqual(3);
    const db = await lancedb.connect(directory);
    const entitiesOf = async (shard: number) => {
      const table = await db.openTable(LanceDbVectorIndex.tableName(collectionId, shard));
      try {
        // The write that crossed the setting went whole to the shard it found under it; no shard grew on past it.
        expect(await table.countRows()).toBeLessThan(SHARD_ROWS + BATCH * 3);
        return new Set((await table.query().select(['entity_id']).limit(SHARD_ROWS + BATCH * 3).toArray()).map((row) => String(row.entity_id)));
      } finally {
        table.close();
      }
    };
    const perShard = await Promise.all(shards.map((_, shard) => entitiesOf(shard)));
    db.close();
    // Every entity's chunks went to one shard (a batch is written whole to one), and every entity is in one.
    const all = perShard.flatMap((entities) => [...entities]);
    expect(new Set(all).size).toBe(2600);
    expect(all).toHaveLength(2600);
    const inFirst = [...perShard[0]!][0]!;
    const inLast = [...perShard[perShard.length - 1]!][0]!;

    for (const entityId of [inFirst, inLast]) {
      const name = `Document ${entityId.slice('stub-'.length)}`;
      const found = await call('POST', '/collections/sharded/search/instant', { query: name, retrieval_strategy: 'keyword', limit: 3 });
      expect(found.status).toBe(200);
      expect(found.body.results[0]).toMatchObject({ entity_id: entityId, name });
    }
    const vectors = await server.running.core.vectors();
    const chunks = await vectors.count(collectionId);
    expect(chunks).toBeGreaterThanOrEqual(2600);
    expect((await vectors.list(collectionId, [], 100_000)).length).toBe(chunks);
  });
});
