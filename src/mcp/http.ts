import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Request, Response } from 'express';
import { sendError } from '../http/send-error.js';
import type { Principal } from '../modules/organizations/principal.js';
import type { Logger } from '../platform/logger.js';
import { UnauthenticatedError } from '../shared/errors.js';
import { authInfoOf } from './tool-kit.js';

/** Open sessions per caller; opening one more closes that caller's least recently used. */
const SESSIONS_PER_CALLER = 50;

interface Session {
  /** Holds the session's MCP server (connected to it). */
  transport: StreamableHTTPServerTransport;
  /** The caller that opened it: every later request on it must come from the same one. */
  owner: string;
  organizationId: string;
  lastUsed: number;
  /** POSTs being answered: a session is not idle while a call (an agentic search…) runs. */
  inFlight: number;
}

/** The caller a session is bound to: one API key, or one user, of one organization. */
const ownerOf = (principal: Principal) => `${principal.organizationId}:${principal.kind === 'api_key' ? `key:${principal.apiKeyId}` : `user:${principal.userId}`}`;

function jsonRpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/**
 * MCP's Streamable HTTP transport (the official SDK's), stateful: `initialize` opens a session with
 * its own MCP server; its id (`Mcp-Session-Id`) names it on every later POST, GET (the server's
 * stream) and DELETE (closing it). Every request is authenticated like any other path, and a session
 * answers only the caller that opened it. Sessions live in this process: behind a load balancer with
 * several API processes, route by the Mcp-Session-Id header (or keep /mcp on one process).
 */
export function mcpEndpoint(
  createServer: () => McpServer,
  /** idleMs: a session unused this long is closed (its server and transport freed); the client opens another. */
  { idleMs, logger }: { idleMs: number; logger: Logger },
): { handle(req: Request, res: Response): Promise<void>; drain(): void; close(): Promise<void> } {
  const sessions = new Map<string, Session>();
  let draining = false;

  const close = (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    void session.transport.close().catch((error: unknown) => logger.warn({ err: error }, 'closing an MCP session failed'));
  };
  const sweep = setInterval(
    () => {
      const idleSince = Date.now() - idleMs;
      for (const [id, session] of sessions) if (session.inFlight === 0 && session.lastUsed < idleSince) close(id);
    },
    Math.min(60_000, idleMs),
  );
  sweep.unref();

  async function open(req: Request, res: Response, principal: Principal): Promise<void> {
    const owner = ownerOf(principal);
    const own = [...sessions.entries()].filter(([, s]) => s.owner === owner).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [id] of own.slice(0, Math.max(0, own.length - SESSIONS_PER_CALLER + 1))) close(id);
    const server = createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, owner, organizationId: principal.organizationId, lastUsed: Date.now(), inFlight: 0 });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  async function handle(req: Request, res: Response): Promise<void> {
    const principal = res.locals.principal;
    // Before anything else: an anonymous request opens no session and learns nothing of any.
    if (!principal) return sendError(res, new UnauthenticatedError('Missing credentials: send an x-api-key header or an Authorization: Bearer token'));
    Object.assign(req, { auth: authInfoOf(principal, res.locals.requestId) });
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId !== 'string') {
      if (req.method === 'POST' && isInitializeRequest(req.body)) return open(req, res, principal);
      return jsonRpcError(res, 400, 'Bad Request: send an initialize request without an Mcp-Session-Id header to open a session, then that header on every request');
    }
    const session = sessions.get(sessionId);
    // Another organization's session is as unknown as any other of its resources (404 on every path).
    if (!session || session.organizationId !== principal.organizationId) return jsonRpcError(res, 404, 'Session not found: it was closed or expired; initialize a new one');
    if (session.owner !== ownerOf(principal)) return jsonRpcError(res, 403, 'Forbidden: this session belongs to another API key or user of this organization');
    session.lastUsed = Date.now();
    // Shutting down: no new server stream (the SDK's client reopens a closed one after a second).
    if (draining && req.method === 'GET') return jsonRpcError(res, 503, 'Shutting down');
    if (req.method === 'POST') {
      session.inFlight++;
      res.on('close', () => {
        session.inFlight--;
        session.lastUsed = Date.now();
      });
      cancelOnDisconnect(res, session, req.body);
    }
    await session.transport.handleRequest(req, res, req.body);
  }

  return {
    handle,
    /**
     * Shutdown begins: the server-to-client streams (GET) of every session end, so the HTTP server
     * does not wait on them; calls in flight finish on their own streams.
     */
    drain: () => {
      draining = true;
      for (const session of sessions.values()) session.transport.closeStandaloneSSEStream();
    },
    /** Shutdown: every session's streams end. */
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      sessions.clear();
    },
  };
}

/**
 * Without an event store a response stream cannot be resumed, so a client that drops the stream of
 * its POST can never receive the answer: its requests are cancelled (as a notifications/cancelled
 * would), which aborts what they run, e.g. an agentic search.
 */
function cancelOnDisconnect(res: Response, session: Session, body: unknown): void {
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  const ids = messages.filter((message) => isJSONRPCRequest(message)).map((message) => (message as { id: string | number }).id);
  if (ids.length === 0) return;
  res.on('close', () => {
    if (res.writableFinished) return;
    for (const requestId of ids) {
      session.transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'The client disconnected' } });
    }
  });
}
