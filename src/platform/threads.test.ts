import { expect, test } from '@jest/globals';
import { Worker } from 'node:worker_threads';
import { endsWithin } from '../../test/support/threads.js';
import { untilReady } from './threads.js';

type Reply = { type: 'log' } | { type: 'ready'; value: number } | { type: 'failed'; message: string };
const startReply = (reply: Reply) => (reply.type === 'ready' ? { ready: reply.value } : reply.type === 'failed' ? { failed: reply.message } : undefined);

/** A thread running `body`, with `parentPort` in scope. */
const thread = (body: string) => new Worker(`const { parentPort } = require('node:worker_threads'); ${body}`, { eval: true });

test('a thread is ready with what its ready message reports; other messages before it are passed over, and the thread keeps running', async () => {
  const worker = thread(`parentPort.postMessage({ type: 'log' }); setTimeout(() => parentPort.postMessage({ type: 'ready', value: 7 }), 50); setInterval(() => {}, 1000);`);
  try {
    await expect(untilReady(worker, 'the test thread', 10_000, startReply)).resolves.toBe(7);
    expect(await endsWithin(worker, 200)).toBe(false);
    expect(worker.listenerCount('message')).toBe(0); // its start's listeners are gone
  } finally {
    await worker.terminate();
  }
});

test('a thread that says it failed is terminated, and the wait rejects with its reason once it has ended', async () => {
  const worker = thread(`parentPort.postMessage({ type: 'failed', message: 'no files' }); setInterval(() => {}, 1000);`);
  let ended = false;
  worker.once('exit', () => (ended = true));
  await expect(untilReady(worker, 'the test thread', 10_000, startReply)).rejects.toThrow('no files');
  expect(ended).toBe(true);
});

test('a thread that ends or throws before it is ready fails the wait', async () => {
  await expect(untilReady(thread('process.exit(3)'), 'the test thread', 10_000, startReply)).rejects.toThrow('the test thread exited with code 3 while starting');
  await expect(untilReady(thread(`throw new Error('broken module')`), 'the test thread', 10_000, startReply)).rejects.toThrow('broken module');
});

test('a thread that says nothing within the timeout is terminated and fails the wait', async () => {
  const worker = thread('setInterval(() => {}, 1000)');
  let ended = false;
  worker.once('exit', () => (ended = true));
  const started = Date.now();
  await expect(untilReady(worker, 'the test thread', 300, startReply)).rejects.toThrow('the test thread did not start within 0.3 s');
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  expect(ended).toBe(true);
});
