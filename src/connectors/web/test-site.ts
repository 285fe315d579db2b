import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test helper: a small website on loopback whose pages can be changed between crawls. It answers
 * conditional requests (ETag, Last-Modified) with 304 and records every request it gets.
 */
export interface TestPage {
  body: string;
  contentType?: string;
  lastModified?: Date;
  /** Answer with this status instead (e.g. 503 for a page down for a moment). */
  status?: number;
  /** Answer with a 302 redirect to this URL instead. */
  redirectTo?: string;
  /** Close the connection without answering (a fetch error of this page alone). */
  hangUp?: boolean;
}

export class TestSite {
  readonly pages = new Map<string, TestPage>();
  readonly requests: { path: string; userAgent: string | undefined; conditional: boolean; status: number }[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      if (this.pages.get(request.url!)?.hangUp) {
        this.requests.push({ path: request.url!, userAgent: request.headers['user-agent'], conditional: false, status: 0 });
        request.socket.destroy();
        return;
      }
      const { status, headers, body } = this.answer(request);
      this.requests.push({ path: request.url!, userAgent: request.headers['user-agent'], conditional: Boolean(request.headers['if-none-match'] || request.headers['if-modified-since']), status });
      response.writeHead(status, headers).end(body);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private answer(request: IncomingMessage): { status: number; headers: Record<string, string>; body?: string } {
    const page = this.pages.get(request.url!);
    if (!page) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
    if (page.redirectTo) return { status: 302, headers: { location: page.redirectTo } };
    if (page.status) return { status: page.status, headers: { 'content-type': 'text/plain' }, body: 'unavailable' };
    const etag = `"${createHash('sha256').update(page.body).digest('hex').slice(0, 16)}"`;
    const headers: Record<string, string> = { 'content-type': page.contentType ?? 'text/html; charset=utf-8', etag };
    if (page.lastModified) headers['last-modified'] = page.lastModified.toUTCString();
    if (request.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
    return { status: 200, headers, body: page.body };
  }

  /** Paths requested (without the query), in order. */
  paths(): string[] {
    return this.requests.map((request) => request.path);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** An HTML page with a title, a heading, a paragraph and links. */
export function htmlPage(title: string, text: string, links: string[] = []): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><h1>${title}</h1><p>${text}</p><ul>${links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('')}</ul></body></html>`;
}
