import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type ProgressNotification,
  ProgressNotificationSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Longest a tool call may run (an agentic search has its own, shorter budget on the server). */
const CALL_TIMEOUT_MS = 15 * 60_000;

/** The running Catchment could not be reached, or refused the credentials. */
export class StdioProxyError extends Error {}

export interface StdioProxyOptions {
  /** Base URL of a running Catchment API, e.g. http://localhost:8080. */
  url: string;
  apiKey?: string;
  /** A user's bearer token (its role applies); may be sent with the organization's API key. */
  token?: string;
}

/**
 * The session with the server's /mcp. Desktop clients keep their stdio servers for hours, longer
 * than the server keeps an unused session (or the server restarts): a request the server answers
 * 404 (no such session, so nothing of it ran) opens a new session and is sent once more.
 */
class RemoteSession {
  private client: Promise<Client> | null = null;

  constructor(
    private readonly endpoint: URL,
    private readonly headers: Record<string, string>,
    private readonly onProgress: (notification: ProgressNotification) => void,
  ) {}

  async open(): Promise<Client> {
    this.client ??= (async () => {
      const client = new Client({ name: 'catchment-mcp-stdio', version });
      // Progress is relayed as it comes, under the desktop client's own token, rather than through a
      // per-request `onprogress`: the SDK drops a request's progress handler when its result arrives,
      // before it runs the progress notifications that came in the same read, so the last steps were lost.
      client.setNotificationHandler(ProgressNotificationSchema, this.onProgress);
      try {
        await client.connect(new StreamableHTTPClientTransport(this.endpoint, { requestInit: { headers: this.headers } }));
      } catch (error) {
        this.client = null;
        throw new StdioProxyError(`Could not open an MCP session at ${this.endpoint.href}: ${(error as Error).message}`);
      }
      return client;
    })();
    return this.client;
  }

  async request<T>(send: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.open();
    try {
      return await send(client);
    } catch (error) {
      if (!(error instanceof StreamableHTTPError && error.code === 404)) throw error;
      if (this.client !== null && (await this.client) === client) {
        this.client = null;
        await client.close().catch(() => undefined);
      }
      return send(await this.open());
    }
  }

  async close(): Promise<void> {
    if (!this.client) return;
    const client = await this.client.catch(() => null);
    this.client = null;
    if (!client) return;
    // Ended here rather than left to expire on the server.
    await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
    await client.close();
  }
}

/**
 * `catchment mcp`: MCP over stdio for desktop clients, relayed to a running Catchment's /mcp endpoint
 * with the official SDK's client. One implementation of the tools (the server's) serves both
 * transports, and the process holds no database, index or model of its own: the server it reaches
 * applies its authentication, roles, organization and rate limits. Progress notifications and
 * cancellations pass through both ways.
 */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  // Progress arrives on the remote session, which must exist (for the server's instructions) before the local server.
  let relayProgress: (notification: ProgressNotification) => void = () => undefined;
  const remote = new RemoteSession(new URL('/mcp', options.url), headers, (notification) => relayProgress(notification));
  // Wrong credentials or an unreachable server end the command now, with a message, not at the first tool call.
  const first = await remote.open();

  const local = new Server(
    { name: 'catchment', title: 'Catchment', version },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: first.getInstructions() },
  );
  local.setRequestHandler(ListToolsRequestSchema, (request, extra) => remote.request((client) => client.listTools(request.params, { signal: extra.signal })));
  local.setRequestHandler(ListResourcesRequestSchema, (request, extra) => remote.request((client) => client.listResources(request.params, { signal: extra.signal })));
  local.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) => remote.request((client) => client.listResourceTemplates(request.params, { signal: extra.signal })));
  local.setRequestHandler(ReadResourceRequestSchema, (request, extra) => remote.request((client) => client.readResource(request.params, { signal: extra.signal })));
  relayProgress = (notification) => void local.notification(notification).catch(() => undefined);
  // The desktop client's progress token goes to the server as it is; its notifications come back through onProgress.
  local.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    remote.request((client) => client.callTool(request.params, CallToolResultSchema, { signal: extra.signal, timeout: CALL_TIMEOUT_MS })),
  );
  const closed = new Promise<void>((resolve) => (local.onclose = resolve));
  await local.connect(new StdioServerTransport());
  // The SDK's stdio transport does not watch for the end of its input; clients close it to stop us.
  process.stdin.once('end', () => void local.close());
  await closed;
  await remote.close();
}
