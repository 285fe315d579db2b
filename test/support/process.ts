import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/catchment.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs the `catchment` CLI as a separate process with the given environment. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        // not JSON
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `catchment start` (or `worker`) as its own process and waits for its banner. */
export function startServerProcess(env: Record<string, string>, timeoutMs = 60_000, command: 'start' | 'worker' = 'start'): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, command], { env: { PATH: process.env.PATH ?? '', PORT: '0', CATCHMENT_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      // The banner is one write ending with the REST reference line (and the key line on first start).
      const match = command === 'worker' ? (/Catchment worker is running/.test(stdout) ? ['', ''] : null) : /listening on (http:\/\/\S+)/.exec(stdout);
      if (match && (command === 'worker' || /REST reference:.*\n/.test(stdout))) {
        clearTimeout(timer);
        resolve({
          child,
          url: match[1]!,
          output: () => stdout,
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
}
