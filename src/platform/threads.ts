import type { Worker } from 'node:worker_threads';

/**
 * The Node flags of a worker thread whose entry file is the module at `moduleUrl`, one that imports
 * only `node:` modules and packages. Run from TypeScript sources on a Node that strips types itself, it
 * needs none of the parent's loader flags (`--import @swc-node/register/esm-register` costs a thread
 * ~300 ms to start); otherwise (undefined) it inherits them.
 */
export function threadExecArgv(moduleUrl: string): string[] | undefined {
  const nativeTypeScript = Boolean((process.features as { typescript?: unknown }).typescript);
  return moduleUrl.endsWith('.ts') && nativeTypeScript ? [] : undefined;
}

/** What one of a starting thread's messages says of its start: ready (with what it reports), failed (why), or nothing (undefined). */
export type StartReply<Ready> = { ready: Ready } | { failed: string } | undefined;

/**
 * Waits until `thread`, just made, says it is ready (`startReply` reads each of its messages). A thread
 * that says it failed, ends, or says nothing within `timeoutMs` (a start that hangs would otherwise hold
 * its caller forever) is terminated, and the wait rejects once it has ended: nothing the thread held
 * (a database's files) is still held then. Listeners of the caller's own see every message too.
 */
export function untilReady<Message, Ready>(thread: Worker, what: string, timeoutMs: number, startReply: (message: Message) => StartReply<Ready>): Promise<Ready> {
  return new Promise<Ready>((resolve, reject) => {
    const detach = () => {
      clearTimeout(timer);
      thread.off('message', onMessage);
      thread.off('error', fail);
      thread.off('exit', exited);
    };
    const fail = (error: Error) => {
      detach();
      // Errors it still raises while it ends (an uncaught one queued) are of a thread already failed: with no listener they would crash the process.
      thread.on('error', () => undefined);
      thread.terminate().then(
        () => reject(error),
        () => reject(error),
      );
    };
    const exited = (code: number) => fail(new Error(`${what} exited with code ${code} while starting`));
    const onMessage = (message: Message) => {
      const reply = startReply(message);
      if (reply === undefined) return;
      if ('failed' in reply) return fail(new Error(reply.failed));
      detach();
      resolve(reply.ready);
    };
    const timer = setTimeout(() => fail(new Error(`${what} did not start within ${timeoutMs / 1000} s`)), timeoutMs);
    thread.on('message', onMessage);
    thread.on('error', fail);
    thread.on('exit', exited);
  });
}
