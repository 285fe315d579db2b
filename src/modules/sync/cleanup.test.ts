import { expect, test } from '@jest/globals';
import type { Logger } from '../../platform/logger.js';
import { InProcessQueue } from '../../platform/queue/queue.js';
import { CLEANUP_QUEUE, type CleanupRequest, Cleanups } from './cleanup.js';
import { PendingCleanup } from './pending-cleanup.entity.js';

/**
 * A cleanup that fails is logged, keeps its record and is run again from it on the next tick (the
 * queues drop a failed job without a word). The index here refuses every deletion; the record store
 * is the two calls Cleanups makes of the ORM. The happy path over real parts is regression issue18-11.
 */
test('a failing cleanup is logged with its record and scope, keeps its record, and runs again on each tick', async () => {
  const pending = Object.assign(new PendingCleanup(), { collectionId: '01900000-0000-7000-8000-000000000001', sourceConnectionId: null });
  const records = new Map([[pending.id, pending]]);
  const orm = {
    em: {
      fork: () => ({
        find: async () => [...records.values()],
        nativeDelete: async (_entity: unknown, { id }: { id: string }) => Number(records.delete(id)),
      }),
    },
  };
  let attempts = 0;
  let failing = true;
  const vectors = {
    deleteCollection: async () => {
      attempts++;
      if (failing) throw new Error('index unavailable');
    },
  };
  const logged: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const logger = Object.fromEntries(
    ['error', 'warn', 'info', 'debug'].map((level) => [level, (fields: Record<string, unknown>, message: string) => logged.push({ level, fields, message })]),
  ) as unknown as Logger;
  const queue = new InProcessQueue();
  const cleanups = new Cleanups({ orm, queue, vectors, blobs: { deletePrefix: async () => undefined }, logger } as never);
  queue.process<CleanupRequest>(CLEANUP_QUEUE, 1, (request) => cleanups.run(request));
  const tick = async () => {
    await cleanups.queuePending();
    await new Promise((resolve) => setTimeout(resolve, 20));
  };

  await tick();
  await tick();
  expect(attempts).toBe(2);
  expect(records.has(pending.id)).toBe(true);
  expect(logged.filter(({ level }) => level === 'error')).toHaveLength(2);
  expect(logged[0]!.fields).toMatchObject({ cleanup: pending.id, collectionId: pending.collectionId, sourceConnectionId: null });
  expect(String((logged[0]!.fields.err as Error).message)).toBe('index unavailable');

  failing = false;
  await tick();
  expect(attempts).toBe(3);
  expect(records.size).toBe(0);
  await tick();
  expect(attempts).toBe(3); // done: nothing left to queue
  await queue.close();
});
