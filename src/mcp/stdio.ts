import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

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
 * `catchment mcp`: MCP over stdio for desktop clients, relayed to a running Catchment's /mcp endpoint
 * with the official SDK's client. One implementation of the tools (the server's) serves both
 * transports, and the process holds no database, index or model of its own: the server it reaches
 * applies its authentication, roles, organization and rate limits.
 * Progress notifications and cancellations pass through both ways.
 */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const endpoint = new URL('/mcp', options.url);
  const remote = new Client({ name: 'catchment-mcp-stdio', version });
  try {
    await remote.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
  } catch (error) {
    throw new StdioProxyError(`Could not open an MCP session at ${endpoint.href}: ${(error as Error).message}`);
  }

  const local = new Server({ name: 'catchment', title: 'Catchment', version }, { capabilities: { tools: { listChanged: false } }, instructions: remote.getInstructions() });
  local.setRequestHandler(ListToolsRequestSchema, (request, extra) => remote.listTools(request.params, { signal: extra.signal }));
  local.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    return remote.callTool(request.params, CallToolResultSchema, {
      signal: extra.signal,
      timeout: CALL_TIMEOUT_MS,
      onprogress:
        progressToken === undefined
          ? undefined
          : (progress) => void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }),
    });
  });
  const closed = new Promise<void>((resolve) => (local.onclose = resolve));
  await local.connect(new StdioServerTransport());
  // The SDK's stdio transport does not watch for the end of its input; clients close it to stop us.
  process.stdin.once('end', () => void local.close());
  await closed;
  // The desktop client closed stdin: the remote session is ended (DELETE), not left to expire.
  await (remote.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
  await remote.close();
}
