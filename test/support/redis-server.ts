import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './ports.js';

/**
 * A `redis-server` of the test's own, on a free loopback port, without persistence: killing it
 * loses every key, as a real Redis restart without AOF/RDB does. Tests kill and restart it to
 * check what survives an outage; the machine's shared Redis is never touched.
 */
export interface OwnRedis {
  url: string;
  port: number;
  /** SIGKILL: no shutdown, clients see the connection drop. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await untilListening(port);
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  return { url: `redis://127.0.0.1:${port}`, port, kill, restart: launch, stop: kill };
}

async function untilListening(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
