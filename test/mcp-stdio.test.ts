import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeChatCompletions } from './support/fake-chat-completions.js';
import { startTestServer, type TestServer } from './support/harness.js';
import { agentReply, collectProgress, MCP_DOCUMENTS, pushDocuments } from './support/mcp-fixture.js';
import { CLI, runCli } from './support/process.js';
import { api, FAST_WORKER } from './support/sync-helpers.js';

/** `catchment mcp` as a desktop client starts it: the package's bin, credentials from the environment. */
async function stdioClient(url: string, env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--url', url], env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const client = new Client({ name: 'desktop-client', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

const structured = (result: CallToolResult) => {
  expect(result.isError).toBeFalsy();
  return result.structuredContent as any;
};

describe('MCP over stdio (catchment mcp)', () => {
  let server: TestServer;
  let llm: Awaited<ReturnType<typeof startFakeChatCompletions>>;
  let agentMode: 'quick' | 'slow' = 'quick';
  let client: Client;

  beforeAll(async () => {
    llm = await startFakeChatCompletions((request, index) => agentReply(request, index, agentMode));
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_LLM_URL: llm.url, CATCHMENT_AGENTIC_MAX_ITERATIONS: '40', CATCHMENT_MCP_SESSION_IDLE_SECONDS: '2' } });
    await pushDocuments(api(server.url, server.apiKey));
    ({ client } = await stdioClient(server.url, { CATCHMENT_API_KEY: server.apiKey }));
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
    await llm?.close();
  });

  test('the same tools, with their schemas and annotations, as over HTTP', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['add_document', 'browse', 'list_collections', 'list_source_connections', 'read_document', 'run_sync', 'search']);
    expect(tools.find((tool) => tool.name === 'search')!.inputSchema.properties).toHaveProperty('tier');
    expect(tools.find((tool) => tool.name === 'run_sync')!.annotations).toMatchObject({ destructiveHint: false, idempotentHint: false });
    expect(client.getInstructions()).toMatch(/list_collections/);
  });

  test('every read tool on the synced data', async () => {
    const { collections } = structured((await client.callTool({ name: 'list_collections', arguments: {} })) as CallToolResult);
    expect(collections).toEqual([expect.objectContaining({ readable_id: 'field-notes', entity_count: MCP_DOCUMENTS.length })]);
    const found = structured((await client.callTool({ name: 'search', arguments: { collection: 'field-notes', query: 'gannet', retrieval_strategy: 'keyword', limit: 2 } })) as CallToolResult);
    expect(found.results[0]).toMatchObject({ entity_id: 'birds', name: 'Seabirds' });
    const read = structured((await client.callTool({ name: 'read_document', arguments: { collection: 'field-notes', entity_id: 'guide', chunk_limit: 1 } })) as CallToolResult);
    expect(read).toMatchObject({ entity_id: 'guide', chunks: [{ chunk_index: 0 }], next_chunk_offset: 1 });
    const children = structured((await client.callTool({ name: 'browse', arguments: { collection: 'field-notes', entity_id: 'folder-field' } })) as CallToolResult);
    expect(children.entities).toHaveLength(3);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['catchment://collections/field-notes']);
    const resource = await client.readResource({ uri: 'catchment://collections/field-notes' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ readable_id: 'field-notes', entity_count: MCP_DOCUMENTS.length });
    const connections = structured((await client.callTool({ name: 'list_source_connections', arguments: { collection: 'field-notes' } })) as CallToolResult);
    expect(connections.source_connections[0].latest_jobs[0]).toMatchObject({ status: 'COMPLETED' });
  });

  test('agentic progress notifications pass through, and a cancellation stops the agent on the server', async () => {
    agentMode = 'quick';
    const progress = collectProgress(client, 'stdio-agentic');
    const done = (await client.callTool({ name: 'search', arguments: { collection: 'field-notes', query: 'gannet', tier: 'agentic' }, _meta: { progressToken: 'stdio-agentic' } })) as CallToolResult;
    expect(structured(done).results.map((r: { entity_id: string }) => r.entity_id)).toContain('birds');
    expect(progress.map((p) => p.message)[0]).toBe('Agent started');
    expect(progress.length).toBeGreaterThanOrEqual(3);

    agentMode = 'slow';
    const before = llm.requests.length;
    const abort = new AbortController();
    let steps = 0;
    collectProgress(client, 'stdio-cancelled', (p) => {
      if (p.message?.startsWith('Step') && ++steps === 2) abort.abort();
    });
    const pending = client.callTool({ name: 'search', arguments: { collection: 'field-notes', query: 'gannet', tier: 'agentic' }, _meta: { progressToken: 'stdio-cancelled' } }, undefined, { signal: abort.signal });
    await expect(pending).rejects.toThrow();
    let seen = llm.requests.length;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      if (llm.requests.length === seen) break;
      seen = llm.requests.length;
    }
    expect(seen - before).toBeLessThanOrEqual(3);
  });

  test('another organization\'s key sees nothing of this one', async () => {
    const other = await server.running.core.services.organizations.createOrganization('Stdio other');
    const { client: outsider } = await stdioClient(server.url, { CATCHMENT_API_KEY: other.api_key });
    try {
      expect(structured((await outsider.callTool({ name: 'list_collections', arguments: {} })) as CallToolResult).collections).toEqual([]);
      const refused = (await outsider.callTool({ name: 'search', arguments: { collection: 'field-notes', query: 'gannet' } })) as CallToolResult;
      expect(refused.isError).toBe(true);
    } finally {
      await outsider.close();
    }
  });

  test('a wrong key or no key: the command exits with a message, before any tool runs', async () => {
    const wrong = await runCli(['mcp', '--url', server.url, '--api-key', 'ck_wrong_key_000000000000000000'], {});
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stderr.trim().split('\n')[0]!).error).toMatch(/^Could not open an MCP session at http:\/\/127\.0\.0\.1:\d+\/mcp: .*Invalid or revoked API key/);
    const none = await runCli(['mcp', '--url', server.url], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/mcp needs credentials/);
  });

  test('the server closes an idle session; the relay opens another and the client notices nothing', async () => {
    await new Promise((resolve) => setTimeout(resolve, 4500));
    const { collections } = structured((await client.callTool({ name: 'list_collections', arguments: {} })) as CallToolResult);
    expect(collections).toHaveLength(1);
  });
});
