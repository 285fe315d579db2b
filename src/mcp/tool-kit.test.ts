import { describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import type { Principal } from '../modules/organizations/principal.js';
import { createLogger } from '../platform/logger.js';
import { authInfoOf, ToolGroup, toolResult, type ToolDependencies } from './tool-kit.js';

/** One tool that says what it received. */
class EchoTools extends ToolGroup {
  readonly received: string[] = [];
  register(): void {
    this.tool('echo', { title: 'Echo', description: 'Echoes', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => {
      this.received.push(text);
      return toolResult({ text });
    });
  }
}

async function connect(): Promise<{ client: Client; tools: EchoTools }> {
  const server = new McpServer({ name: 'test', version: '0' });
  const tools = new EchoTools({ logger: createLogger('silent') } as unknown as ToolDependencies, server);
  tools.register();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // As the HTTP endpoint does: every request carries its caller.
  const principal = { kind: 'api_key', apiKeyId: 'k', organizationId: 'o', role: 'admin' } as unknown as Principal;
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => send(message, { ...options, authInfo: authInfoOf(principal, 'request-1') });
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '0' });
  await client.connect(clientSide);
  return { client, tools };
}

describe('MCP tool groups', () => {
  test('text PostgreSQL cannot hold (NUL, a lone surrogate) is refused as invalid input before the tool runs', async () => {
    const { client, tools } = await connect();
    try {
      for (const text of ['a\u0000b', 'x\ud800']) {
        const result = await client.callTool({ name: 'echo', arguments: { text } });
        expect(result.isError).toBe(true);
        expect((result.content as { text: string }[])[0]!.text).toMatch(/^Invalid input: text: Text must be valid Unicode/);
      }
      expect(tools.received).toEqual([]);
      const ok = await client.callTool({ name: 'echo', arguments: { text: 'fine 👍' } });
      expect(ok.isError).toBeFalsy();
      expect(tools.received).toEqual(['fine 👍']);
    } finally {
      await client.close();
    }
  });
});
