import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CredentialsRejectedError } from '../connector.js';

/**
 * Runs the `git` CLI without a shell and without the server's own git configuration: no system or
 * global config (no credential helpers, no `insteadOf` rewrites of the operator), no terminal
 * prompts, only the https, http and file transports (no `ext::` or ssh commands), English messages
 * so failures can be classified. A token travels as an `http.extraHeader` in the environment
 * (GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n), never in argv, where `ps` would show it.
 */
export interface GitAccess {
  /** The value of an `Authorization` header, or null for anonymous access. */
  authorization: string | null;
  timeoutMs: number;
  signal: AbortSignal;
}

/** Variables passed through from the server's environment: what git needs to run and reach proxies. */
const INHERITED = ['PATH', 'SYSTEMROOT', 'TMPDIR', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy'];

function gitEnvironment(access: GitAccess): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED) if (process.env[name] !== undefined) env[name] = process.env[name];
  Object.assign(env, {
    HOME: '/nonexistent',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ALLOW_PROTOCOL: 'https:http:file',
    GIT_CONFIG_COUNT: '2',
    // A path literal, not an option, whatever the path holds.
    GIT_CONFIG_KEY_0: 'core.quotePath',
    GIT_CONFIG_VALUE_0: 'false',
    GIT_CONFIG_KEY_1: 'credential.helper',
    GIT_CONFIG_VALUE_1: '',
  });
  if (access.authorization) {
    env.GIT_CONFIG_COUNT = '3';
    env.GIT_CONFIG_KEY_2 = 'http.extraHeader';
    env.GIT_CONFIG_VALUE_2 = `Authorization: ${access.authorization}`;
  }
  return env;
}

/** A git command that failed, with git's own message (secrets removed) for the job's error. */
export class GitError extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
    readonly exitCode: number | null = null,
  ) {
    super(message);
  }
}

/** Removes anything that could carry a secret from git's messages: the header value, URL user info. */
function scrub(text: string, access: GitAccess): string {
  let clean = text.replace(/(\w+:\/\/)[^/\s@]+@/g, '$1');
  if (access.authorization) {
    const secret = access.authorization.split(' ').pop()!;
    clean = clean.split(access.authorization).join('[redacted]').split(secret).join('[redacted]');
  }
  return clean;
}

/** Git's last error lines ("fatal: …"; else its last lines), scrubbed, for error messages. */
function describeFailure(stderr: string, access: GitAccess): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('hint:'));
  const errors = lines.filter((line) => /^(fatal|error|remote):/.test(line));
  return scrub((errors.length ? errors : lines).slice(-2).join(' ') || 'git failed without a message', access);
}

const AUTH_FAILURE = /authentication failed|could not read (username|password)|terminal prompts disabled|\b401\b|\b403\b|access denied|invalid credentials|permission denied/i;

/** Runs git and returns its stdout; throws CredentialsRejectedError when the remote refused access, GitError otherwise. */
export async function git(args: string[], access: GitAccess, options: { cwd?: string; maxBuffer?: number } = {}): Promise<Buffer> {
  access.signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: options.cwd, env: gitEnvironment(access), encoding: 'buffer', timeout: access.timeoutMs, killSignal: 'SIGKILL', maxBuffer: options.maxBuffer ?? 256 * 1024 * 1024, signal: access.signal },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        if (access.signal.aborted) return reject(access.signal.reason);
        const code = typeof error.code === 'number' ? error.code : null;
        if (error.killed && code === null) return reject(new GitError(`git ${args[0]} timed out after ${Math.round(access.timeoutMs / 1000)} s`, true));
        const message = describeFailure(stderr.toString('utf8'), access);
        if (AUTH_FAILURE.test(message)) return reject(new CredentialsRejectedError(`The repository refused access: ${message}`));
        reject(new GitError(message, false, code));
      },
    );
  });
}

/** Output lines of a streaming git command, for histories too long to buffer; stops git when the caller stops reading. */
export async function* gitLines(args: string[], access: GitAccess, cwd: string): AsyncGenerator<string> {
  access.signal.throwIfAborted();
  const child = spawn('git', args, { cwd, env: gitEnvironment(access), signal: access.signal });
  const timer = setTimeout(() => child.kill('SIGKILL'), access.timeoutMs);
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => (stderr = (stderr + data.toString('utf8')).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.on('error', () => {}); // reported through the exit code or the signal
  try {
    let rest = '';
    for await (const data of child.stdout) {
      const text = rest + (data as Buffer).toString('utf8');
      const lines = text.split('\n');
      rest = lines.pop()!;
      for (const line of lines) yield line;
    }
    if (rest) yield rest;
    const code = await exited;
    access.signal.throwIfAborted();
    if (code !== 0) throw new GitError(describeFailure(stderr, access) || `git ${args[0]} stopped (exit ${code})`);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/**
 * Reads blobs by id through one `git cat-file --batch` process (a process per file would cost
 * milliseconds each). Requests are answered in order, one at a time.
 */
export class BlobReader {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended = false;

  constructor(cwd: string, access: GitAccess) {
    this.child = spawn('git', ['cat-file', '--batch'], { cwd, env: gitEnvironment(access), signal: access.signal });
    this.child.on('error', () => {});
    this.child.stderr.resume();
    this.child.stdout.on('data', (data: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, data]);
      this.wake();
    });
    this.child.stdout.on('close', () => {
      this.ended = true;
      this.wake();
    });
  }

  private wake() {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }

  private async fill(length: number): Promise<void> {
    while (this.buffered.length < length) {
      if (this.ended) throw new GitError('git cat-file stopped before answering');
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  async read(id: string): Promise<Buffer | null> {
    this.child.stdin.write(`${id}\n`);
    let newline = this.buffered.indexOf(10);
    while (newline < 0) {
      await this.fill(this.buffered.length + 1);
      newline = this.buffered.indexOf(10);
    }
    const header = this.buffered.subarray(0, newline).toString('utf8');
    this.buffered = this.buffered.subarray(newline + 1);
    if (header.endsWith(' missing')) return null;
    const size = Number(header.split(' ')[2]);
    await this.fill(size + 1);
    const bytes = Buffer.from(this.buffered.subarray(0, size));
    this.buffered = this.buffered.subarray(size + 1); // the content's trailing newline
    return bytes;
  }

  close(): void {
    this.child.stdin.end();
    if (this.child.exitCode === null) this.child.kill();
  }
}
