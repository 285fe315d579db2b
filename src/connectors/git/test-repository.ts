import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** Test helpers: a real repository built with the git CLI, and a smart-HTTP server for it (git http-backend). */

const AUTHOR = { GIT_AUTHOR_NAME: 'Ada Lovelace', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada Lovelace', GIT_COMMITTER_EMAIL: 'ada@example.com' };

export class TestRepository {
  private clock = Date.parse('2025-03-01T10:00:00Z') / 1000;

  constructor(readonly directory: string) {
    mkdirSync(directory, { recursive: true });
    this.git('init', '--quiet', '--initial-branch=main');
  }

  git(...args: string[]): string {
    return execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], { cwd: this.directory, env: { PATH: process.env.PATH, HOME: this.directory, GIT_CONFIG_NOSYSTEM: '1', ...AUTHOR } }).toString('utf8').trim();
  }

  write(file: string, content: string | Buffer): this {
    const target = path.join(this.directory, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content);
    return this;
  }

  remove(file: string): this {
    rmSync(path.join(this.directory, file));
    return this;
  }

  /** Commits everything, an hour after the previous commit; returns the commit's sha. */
  commit(message: string): string {
    this.clock += 3600;
    const date = `${this.clock} +0000`;
    this.git('add', '-A');
    execFileSync('git', ['-c', 'commit.gpgsign=false', 'commit', '--quiet', '-m', message], {
      cwd: this.directory,
      env: { PATH: process.env.PATH, HOME: this.directory, GIT_CONFIG_NOSYSTEM: '1', ...AUTHOR, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
    });
    return this.git('rev-parse', 'HEAD');
  }
}

/**
 * Serves the repositories under `root` over git's smart HTTP protocol on loopback, requiring HTTP
 * Basic auth with `token` as password when given. Records the Authorization headers it saw.
 * Listens on `host` (another loopback address stands for another machine).
 */
export async function serveOverHttp(root: string, token: string | null, host = '127.0.0.1'): Promise<{ url: string; authorizations: (string | undefined)[]; close(): Promise<void>; server: Server }> {
  const authorizations: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    authorizations.push(request.headers.authorization);
    const password = request.headers.authorization?.startsWith('Basic ') ? Buffer.from(request.headers.authorization.slice(6), 'base64').toString('utf8').split(':').slice(1).join(':') : null;
    if (token !== null && password !== token) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="test"' }).end('unauthorized');
      return;
    }
    const url = new URL(request.url!, 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: request.method!,
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: request.headers['content-encoding'] } : {}),
        ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
        REMOTE_USER: 'tester',
      },
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersSent = false;
    cgi.stdout.on('data', (data: Buffer) => {
      if (headersSent) return void response.write(data);
      head = Buffer.concat([head, data]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString('utf8').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      headersSent = true;
      response.write(head.subarray(end + 4));
    });
    cgi.on('close', () => response.end());
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    authorizations,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
