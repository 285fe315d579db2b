import type { Worker } from 'node:worker_threads';

/** Whether `worker` has ended: true once it exits (at once if it already has), false if it is still running after `ms`. */
export function endsWithin(worker: Worker, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    if (worker.threadId === -1) return resolve(true);
    worker.once('exit', () => resolve(true));
    setTimeout(() => resolve(false), ms).unref();
  });
}
