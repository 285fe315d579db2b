import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test helper: the local servers that stand in for providers and APIs listen on 127.0.0.1 on a port
 * the system picks, stop without waiting for clients' kept-alive connections, and record the requests
 * they get.
 */

/** Starts `server` on a free loopback port; its origin (`http://127.0.0.1:<port>`). */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Stops `server` (nothing when it never started), dropping open connections instead of waiting for them. */
export async function closeLoopback(server: Server | null): Promise<void> {
  if (!server) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

/** What every fake server records of a request; each adds what its tests look at (status, body, GraphQL operation…). */
export interface RecordedRequest {
  method: string;
  /** The path as sent (still URL-encoded), without the query. */
  path: string;
  query: URLSearchParams;
  /** The Authorization header, when one was sent. */
  authorization: string | undefined;
}

/** The RecordedRequest of `request`. */
export function recordedRequest(request: IncomingMessage): RecordedRequest {
  const url = new URL(request.url ?? '/', 'http://loopback');
  return { method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, authorization: request.headers.authorization };
}
