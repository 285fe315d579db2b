import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CredentialsRejectedError } from '../connector.js';

/**
 * Runs the `git` CLI without a shell and without the server's own git configuration: no system or
 * global config (no credential helpers, no `insteadOf` rewrites of the operator), none of the
 * server's GIT_* variables (GIT_DIR, GIT_ALTERNATE_OBJECT_DIRECTORIES, … would make it read other
 * repositories), no terminal prompts, English messages so failures can be classified.
 *
 * Where git connects is fixed by the caller: one transport (`file`, or the remote URL's `https` or
 * `http`; never `ext::` or ssh commands), no HTTP redirects (nor the http-alternates of the dumb
 * protocol, which git treats alike), so a repository cannot send git, or its token, to another
 * host; and a remote host's addresses pinned to the ones checked against the network policy, so a
 * DNS answer that changes after the check does not lead elsewhere. A token travels as an
 * `http.<url>.extraHeader` scoped to the repository's URL, in the environment (GIT_CONFIG_KEY_n /
 * GIT_CONFIG_VALUE_n), never in argv, where `ps` would show it.
 */
export interface GitAccess {
  /** The one transport git may use. */
  protocol: 'file' | 'https' | 'http';
  /** An `Authorization` header value, sent only with requests under `url`; null for anonymous access. */
  authorization: { url: string; header: string } | null;
  /** curl's `host:port:address,…` entries: the remote host's checked addresses, the only ones git connects to. */
  pinnedAddresses: string | null;
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
    GIT_ALLOW_PROTOCOL: access.protocol,
  });
  const config: [string, string][] = [
    // A path literal, not an option, whatever the path holds.
    ['core.quotePath', 'false'],
    ['credential.helper', ''],
    ['http.followRedirects', 'false'],
  ];
  if (access.pinnedAddresses) config.push(['http.curloptResolve', access.pinnedAddresses]);
  if (access.authorization) config.push([`http.${access.authorization.url}.extraHeader`, `Authorization: ${access.authorization.header}`]);
  env.GIT_CONFIG_COUNT = String(config.length);
  for (const [index, [key, value]] of config.entries()) {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
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
    const { header } = access.authorization;
    const secret = header.split(' ').pop()!;
    clean = clean.split(header).join('[redacted]').split(secret).join('[redacted]');
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

/** curl's message for an HTTP redirect git did not follow (http.followRedirects=false). */
const REDIRECT = /returned error: (30[1-8])\b/;

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
        const redirect = REDIRECT.exec(message);
        if (redirect) return reject(new GitError(`The repository answered with a redirect (HTTP ${redirect[1]}), which is not followed (the token and the network policy hold for the configured URL only): use the URL it redirects to`, false, code));
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
