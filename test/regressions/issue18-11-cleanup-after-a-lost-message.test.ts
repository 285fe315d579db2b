import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { LanceDbVectorIndex } from '../../src/platform/vectors/lancedb/lancedb-index.js';
import type { Deployment } from '../support/harness.js';
import { startTestServer, type TestServer } from '../support/harness.js';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.js';
import { type Api, api, createCollection, eventually, FAST_WORKER, syncStub } from '../support/sync-helpers.js';

/**
 * Issue 18, finding 11 (a leftover of the deletion path, met while measuring issue 18's index): a
 * deleted connection's or collection's chunks and raw records were removed only by a queue message
 * sent after the deletion committed. A message lost — the in-process queue of an embedded server
 * stopped before its worker took it, a Redis restarted without persistence, a process stopped between
 * the commit and the enqueue — left them on disk for good (searches hid them; nothing freed them).
 * The cleanup is now recorded in the deletion's transaction (pending_cleanups) and the worker queues
 * again what is still owed when it starts and on every tick.
 *
 * Here the deletions are made by an API-only process (no worker takes the message), the message is
 * then lost (embedded: the process stops; servers: the test's own Redis is killed and restarted
 * empty), and a worker started afterwards must still clean up.
 */
describe.each<Deployment>(['embedded', 'servers'])('issue 18-11: cleanup after a lost queue message (%s deployment)', (deployment) => {
  let first: TestServer | undefined;
  const running = new Set<TestServer>();
  let redis: OwnRedis | null = null;
  const stop = async (server: TestServer) => {
    running.delete(server);
    await server.running.stop();
  };
  afterAll(async () => {
    for (const server of running) await stop(server).catch(() => undefined);
    await first?.discard();
    await redis?.stop();
  });

  test('a deleted connection and a deleted collection are cleaned up by a worker started after their message was lost', async () => {
    redis = deployment === 'servers' ? await startOwnRedis() : null;
    /** A server of the deployment; after the first, on the first's database, data directory and Redis keys. */
    const start = async (roles: { api: boolean; worker: boolean }) => {
      const server = await startTestServer({
        deployment,
        roles,
        dataDir: first?.dataDir,
        databaseUrl: first?.databaseUrl,
        redisPrefix: first?.redisPrefix,
        ...(redis ? { redisUrl: redis.url } : {}),
        env: { ...FAST_WORKER, CATCHMENT_RATE_LIMIT_REQUESTS: '0' },
      });
      running.add(server);
      return server;
    };
    first = await start({ api: true, worker: true });
    const apiKey = first.apiKey;
    const callOn = (server: TestServer): Api => api(server.url, apiKey);
    const call = callOn(first);

    const synced = async (readableId: string, seed: number) => (await syncStub(call, readableId, { entity_count: 12, seed, hierarchy_depth: 0 })).connectionId;
    const kept = await createCollection(call, 'cleanup-kept');
    const dropped = await createCollection(call, 'cleanup-dropped');
    const deletedConnection = await synced('cleanup-kept', 1);
    const keptConnection = await synced('cleanup-kept', 2);
    await synced('cleanup-dropped', 3);

    /** What the index and the raw data store hold, read through a running server's core. */
    const stored = async (server: TestServer) => {
      const core = server.running.core;
      const chunks = await (await core.vectors()).list(kept, [], 1000);
      const rawKeys = async (prefix: string) => {
        const keys: string[] = [];
        for await (const key of core.blobs.list(prefix)) keys.push(key);
        return keys.length;
      };
      const [pending] = await core.database.orm.em.getConnection().execute<{ count: string }[]>('select count(*) as count from pending_cleanups');
      return {
        connections: [...new Set(chunks.map((chunk) => chunk.sourceConnectionId))].sort(),
        deletedRaw: await rawKeys(`raw/${kept}/${deletedConnection}`),
        keptRaw: await rawKeys(`raw/${kept}/${keptConnection}`),
        droppedRaw: await rawKeys(`raw/${dropped}`),
        droppedTable: existsSync(path.join(server.dataDir, 'lancedb', `${LanceDbVectorIndex.tableName(dropped)}.lance`)),
        pending: Number(pending!.count),
      };
    };
    const before = await stored(first);
    expect(before.connections).toEqual([deletedConnection, keptConnection].sort());
    expect(before.deletedRaw).toBeGreaterThan(0);
    expect(before.droppedRaw).toBeGreaterThan(0);
    expect(before.droppedTable).toBe(true);
    await stop(first);

    // The deletions, by a process with no worker: their messages wait in the queue.
    const apiOnly = await start({ api: true, worker: false });
    expect((await callOn(apiOnly)('DELETE', `/source-connections/${deletedConnection}`)).status).toBe(200);
    expect((await callOn(apiOnly)('DELETE', '/collections/cleanup-dropped')).status).toBe(200);
    expect((await stored(apiOnly)).pending).toBe(2);
    await stop(apiOnly);
    // The messages are lost: with the embedded process's memory, or with the Redis restarted empty.
    if (redis) {
      await redis.kill();
      await redis.restart();
    }

    const worker = await start({ api: true, worker: true });
    const after = await eventually(
      () => stored(worker),
      (now) => now.pending === 0,
    );
    expect(after.connections).toEqual([keptConnection]);
    expect(after.deletedRaw).toBe(0);
    expect(after.keptRaw).toBeGreaterThan(0);
    expect(after.droppedRaw).toBe(0);
    expect(after.droppedTable).toBe(false);
  });
});
