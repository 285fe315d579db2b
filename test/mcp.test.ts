import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeChatCompletions, type ChatRequest, type ScriptedReply } from './support/fake-chat-completions.js';
import { http, startTestServer, type TestServer } from './support/harness.js';
import { agentReply, collectProgress, MCP_DOCUMENTS, pushDocuments } from './support/mcp-fixture.js';
import { api, FAST_WORKER, type Api } from './support/sync-helpers.js';

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
const structured = (result: CallToolResult) => {
  expect(result.isError).toBeFalsy();
  return result.structuredContent as any;
};

describe('MCP over Streamable HTTP', () => {
  let server: TestServer;
  let rest: Api;
  let llm: Awaited<ReturnType<typeof startFakeChatCompletions>>;
  let agentMode: 'quick' | 'slow' = 'quick';
  let client: Client;
  let pushConnectionId: string;
  const clients: Client[] = [];
  const open = async (headers: Record<string, string>) => {
    const opened = await connect(server.url, headers);
    clients.push(opened);
    return opened;
  };

  beforeAll(async () => {
    llm = await startFakeChatCompletions((request: ChatRequest, index: number): ScriptedReply => agentReply(request, index, agentMode));
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_LLM_URL: llm.url, CATCHMENT_AGENTIC_MAX_ITERATIONS: '40' } });
    rest = api(server.url, server.apiKey);
    pushConnectionId = await pushDocuments(rest);
    client = await open({ 'x-api-key': server.apiKey });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await server?.stop();
    await llm?.close();
  });

  test('lists every tool with a JSON schema, a description and annotations', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(['add_document', 'browse', 'list_collections', 'list_source_connections', 'read_document', 'run_sync', 'search']);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe('object');
    }
    expect(byName.search!.inputSchema).toMatchObject({
      properties: { collection: { type: 'string' }, tier: { enum: ['instant', 'classic', 'agentic'] }, retrieval_strategy: { enum: ['hybrid', 'semantic', 'keyword'] }, filter: { type: 'array' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
      required: expect.arrayContaining(['collection', 'query']),
    });
    expect(byName.read_document!.inputSchema.properties).toHaveProperty('chunk_offset');
    expect(byName.browse!.inputSchema.properties!.relation).toMatchObject({ enum: ['children', 'parent', 'siblings'] });
    for (const name of ['list_collections', 'search', 'read_document', 'browse', 'list_source_connections']) {
      expect(byName[name]!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    }
    expect(byName.run_sync!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(client.getInstructions()).toMatch(/list_collections/);
  });

  test('list_collections: status, sources, entity counts and last sync', async () => {
    const { collections } = structured(await call(client, 'list_collections', {}));
    expect(collections).toEqual([
      expect.objectContaining({
        readable_id: 'field-notes',
        name: 'Field notes',
        status: 'ACTIVE',
        sources: [{ source_connection_id: pushConnectionId, name: 'Notebook', short_name: 'push', status: expect.any(String), entity_count: MCP_DOCUMENTS.length }],
        entity_count: MCP_DOCUMENTS.length,
        last_sync: { status: 'COMPLETED', completed_at: expect.any(String) },
      }),
    ]);
  });

  test('one resource per collection: its status, sources, entity count and last sync', async () => {
    const { resources } = await client.listResources();
    expect(resources).toEqual([
      { uri: 'catchment://collections/field-notes', name: 'field-notes', title: 'Field notes', mimeType: 'application/json', description: expect.stringMatching(/^ACTIVE; 4 entities from Notebook \(push\); last sync COMPLETED /) },
    ]);
    const { contents } = await client.readResource({ uri: 'catchment://collections/field-notes' });
    expect(JSON.parse((contents[0] as { text: string }).text)).toMatchObject({ readable_id: 'field-notes', sources: [{ source_connection_id: pushConnectionId, short_name: 'push' }], entity_count: 4 });
    await expect(client.readResource({ uri: 'catchment://collections/nope' })).rejects.toThrow(/Collection "nope" not found/);
    // A NUL decoded from the URI is no collection id, not an internal error.
    await expect(client.readResource({ uri: 'catchment://collections/field%00notes' })).rejects.toThrow(/not found/);
  });

  test('search: instant and classic answer what REST search answers, with filters and paging', async () => {
    for (const retrieval_strategy of ['keyword', 'hybrid', 'semantic']) {
      const viaMcp = structured(await call(client, 'search', { collection: 'field-notes', query: 'gannet colony', retrieval_strategy, limit: 3 }));
      const viaRest = await rest('POST', '/collections/field-notes/search/instant', { query: 'gannet colony', retrieval_strategy, limit: 3 });
      expect(viaMcp.results).toEqual(viaRest.body.results);
    }
    const top = await call(client, 'search', { collection: 'field-notes', query: 'gannet', retrieval_strategy: 'keyword', limit: 1 });
    expect(structured(top).results[0]).toMatchObject({ entity_id: 'birds', breadcrumbs: [{ entity_id: 'folder-field', name: 'Field folder' }], web_url: 'https://notes.example/birds' });
    expect(text(top)).toMatch(/1\. Seabirds \(entity_id birds/);

    const classic = structured(await call(client, 'search', { collection: 'field-notes', query: 'where do gannets nest', tier: 'classic', limit: 5 }));
    expect(classic.results.map((r: { entity_id: string }) => r.entity_id)).toContain('birds');

    const filtered = structured(await call(client, 'search', { collection: 'field-notes', query: 'notes', retrieval_strategy: 'keyword', filter: [{ conditions: [{ field: 'entity_id', operator: 'in', value: ['tides', 'guide'] }] }], limit: 10 }));
    expect(filtered.results.map((r: { entity_id: string }) => r.entity_id).sort()).toEqual(['guide', 'tides']);
    const page = (offset: number) => call(client, 'search', { collection: 'field-notes', query: 'notes field', retrieval_strategy: 'keyword', limit: 1, offset });
    const [first, second] = [structured(await page(0)).results[0], structured(await page(1)).results[0]];
    expect(first.entity_id).not.toBe(second.entity_id);
  });

  test('search: agentic reports each step as a progress notification and returns documents', async () => {
    agentMode = 'quick';
    const progress = collectProgress(client, 'http-agentic');
    const result = (await client.callTool({ name: 'search', arguments: { collection: 'field-notes', query: 'gannet', tier: 'agentic' }, _meta: { progressToken: 'http-agentic' } })) as CallToolResult;
    expect(structured(result).results.map((r: { entity_id: string }) => r.entity_id)).toContain('birds');
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_p, i) => i + 1));
    expect(progress[0]!.message).toBe('Agent started');
    expect(progress.some((p) => /^Step 1: search /.test(p.message ?? ''))).toBe(true);
  });

  test('read_document: the whole text in chunk order, with metadata, links and paging', async () => {
    const whole = structured(await call(client, 'read_document', { collection: 'field-notes', entity_id: 'guide' }));
    expect(whole.total_chunks).toBeGreaterThanOrEqual(4);
    expect(whole.chunks.map((c: { chunk_index: number }) => c.chunk_index)).toEqual(Array.from({ length: whole.total_chunks }, (_, i) => i));
    expect(whole).toMatchObject({ entity_id: 'guide', name: 'Field guide', entity_type: 'guide', source_name: 'push', web_url: 'https://notes.example/guide', next_chunk_offset: null, breadcrumbs: [{ entity_id: 'folder-field' }] });
    expect(whole.links).toEqual(['https://tides.example/table', 'https://birds.example/gannet']);
    const wholeText = whole.chunks.map((c: { text: string }) => c.text).join('\n\n');
    for (const section of ['Section 1', 'Section 8']) expect(wholeText).toContain(section);
    expect(wholeText.indexOf('Section 2 ')).toBeLessThan(wholeText.indexOf('Section 7 '));
    const readable = text(await call(client, 'read_document', { collection: 'field-notes', entity_id: 'guide' }));
    expect(readable).toMatch(/^# Field guide\nentity_id guide · guide · push · https:\/\/notes\.example\/guide\nin Field folder\nChunks 0–\d+ of \d+ \(end\)\.\n\n## Section 1/);

    const page1 = structured(await call(client, 'read_document', { collection: 'field-notes', entity_id: 'guide', chunk_limit: 2 }));
    expect(page1.chunks.map((c: { chunk_index: number }) => c.chunk_index)).toEqual([0, 1]);
    expect(page1.next_chunk_offset).toBe(2);
    const page2 = structured(await call(client, 'read_document', { collection: 'field-notes', entity_id: 'guide', chunk_offset: 2, chunk_limit: 2 }));
    expect(page2.chunks[0].chunk_index).toBe(2);
    const byCharacters = structured(await call(client, 'read_document', { collection: 'field-notes', entity_id: 'guide', max_characters: 10 }));
    expect(byCharacters.chunks).toHaveLength(1);
    expect(byCharacters.next_chunk_offset).toBe(1);

    const missing = await call(client, 'read_document', { collection: 'field-notes', entity_id: 'nope' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/Not found: Document "nope"/);
  });

  test('browse: children, parent and siblings', async () => {
    const children = structured(await call(client, 'browse', { collection: 'field-notes', entity_id: 'folder-field', relation: 'children' }));
    expect(children.entities.map((e: { entity_id: string }) => e.entity_id).sort()).toEqual(['birds', 'guide', 'tides']);
    const parent = structured(await call(client, 'browse', { collection: 'field-notes', entity_id: 'tides', relation: 'parent' }));
    expect(parent.entities).toEqual([{ entity_id: 'folder-field', name: 'Field folder', entity_type: 'folder', breadcrumbs: [] }]);
    const siblings = structured(await call(client, 'browse', { collection: 'field-notes', entity_id: 'tides', relation: 'siblings' }));
    expect(siblings.entities.map((e: { entity_id: string }) => e.entity_id).sort()).toEqual(['birds', 'guide']);
  });

  test('list_source_connections, add_document and run_sync', async () => {
    const listed = structured(await call(client, 'list_source_connections', { collection: 'field-notes', jobs_per_connection: 2 }));
    expect(listed.source_connections).toEqual([
      expect.objectContaining({ id: pushConnectionId, short_name: 'push', entity_count: MCP_DOCUMENTS.length, latest_jobs: [expect.objectContaining({ status: 'COMPLETED', trigger: 'push' })] }),
    ]);

    const added = structured(await call(client, 'add_document', { source_connection_id: pushConnectionId, id: 'puffins', name: 'Puffins', text: 'Puffins nest in burrows on the grassy slopes above the cliffs.' }));
    expect(added.batch.job).toMatchObject({ trigger: 'push' });
    for (let tries = 0; ; tries++) {
      const found = structured(await call(client, 'search', { collection: 'field-notes', query: 'burrows', retrieval_strategy: 'keyword', limit: 1 })).results;
      if (found[0]?.entity_id === 'puffins') break;
      if (tries > 100) throw new Error('the added document never became searchable');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const stub = (await rest('POST', '/source-connections', { short_name: 'stub', readable_collection_id: 'field-notes', authentication: { credentials: { token: 't' } }, config: { entity_count: 3, seed: 1 } })).body;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const sync = await call(client, 'run_sync', { source_connection_id: stub.id });
    // The creation's own sync may still run: a second one is then a conflict the agent is told about.
    if (sync.isError) expect(text(sync)).toMatch(/^Conflict: /);
    else expect(structured(sync).job).toMatchObject({ id: expect.any(String), status: expect.stringMatching(/PENDING|RUNNING/), trigger: 'manual' });

    const unknown = await call(client, 'run_sync', { source_connection_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/Not found: .*list_source_connections/);
  });

  test('errors are tool results an agent can act on', async () => {
    const unknown = await call(client, 'search', { collection: 'nope', query: 'x' });
    expect(unknown).toMatchObject({ isError: true });
    expect(text(unknown)).toBe('Not found: Collection "nope" not found. Call list_collections to see the readable ids of the collections you can use.');
    const misplaced = await call(client, 'search', { collection: 'field-notes', query: 'x', tier: 'classic', retrieval_strategy: 'keyword' });
    expect(text(misplaced)).toMatch(/Invalid input: retrieval_strategy applies to the instant tier only/);
    const badFilter = await call(client, 'search', { collection: 'field-notes', query: 'x', filter: [{ conditions: [{ field: 'colour', operator: 'equals', value: 'red' }] }] });
    expect(badFilter.isError).toBe(true);
    expect(text(badFilter)).toMatch(/Unknown filterable field "colour"/);
    const badType = await call(client, 'search', { collection: 'field-notes', query: 'x', limit: 'ten' });
    expect(badType.isError).toBe(true);

    const orgId = (await rest('GET', '/collections/field-notes')).body.organization_id;
    const memberToken = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'm@example.com', role: 'member' })).access_token;
    const member = await open({ authorization: `Bearer ${memberToken}` });
    const forbidden = await call(member, 'run_sync', { source_connection_id: pushConnectionId });
    expect(forbidden.isError).toBe(true);
    expect(text(forbidden)).toMatch(/^Forbidden \(403\): This operation needs the admin role or higher/);
    expect(structured(await call(member, 'search', { collection: 'field-notes', query: 'gannet', retrieval_strategy: 'keyword' })).results.length).toBeGreaterThan(0);
  });

  test('authentication: no or wrong credentials are refused with 401 and open no session', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await http(server.url, 'POST', '/mcp', { body: initialize, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('mcp-session-id')).toBeNull();
    const wrong = await http(server.url, 'POST', '/mcp', { body: initialize, headers, apiKey: 'ck_wrong_key_0000000000000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('mcp-session-id')).toBeNull();
    await expect(connect(server.url, {})).rejects.toThrow();
    // A session's later requests need credentials too.
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect((await http(server.url, 'POST', '/mcp', { body: list, headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } })).status).toBe(401);
  });

  test('organization isolation: another organization sees, searches and reads nothing, and cannot use a session', async () => {
    const other = await server.running.core.services.organizations.createOrganization('Other org');
    const outsider = await open({ 'x-api-key': other.api_key });
    expect(structured(await call(outsider, 'list_collections', {})).collections).toEqual([]);
    expect((await outsider.listResources()).resources).toEqual([]);
    await expect(outsider.readResource({ uri: 'catchment://collections/field-notes' })).rejects.toThrow(/not found/);
    for (const [name, args] of [
      ['search', { collection: 'field-notes', query: 'gannet' }],
      ['read_document', { collection: 'field-notes', entity_id: 'birds' }],
      ['browse', { collection: 'field-notes', entity_id: 'folder-field' }],
      ['list_source_connections', { collection: 'field-notes' }],
    ] as const) {
      const refused = await call(outsider, name, args);
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^Not found: Collection "field-notes" not found/);
    }
    const runOther = await call(outsider, 'run_sync', { source_connection_id: pushConnectionId });
    expect(text(runOther)).toMatch(/^Not found/);

    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const hijack = await http(server.url, 'POST', '/mcp', {
      apiKey: other.api_key,
      body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_collections', arguments: {} } },
      headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    });
    // Another organization's session is as unknown to it as the rest of this organization.
    expect(hijack.status).toBe(404);
    expect(JSON.stringify(hijack.body)).toMatch(/Session not found/);
    // Within one organization too, a session answers only the key or user that opened it.
    const orgId = (await rest('GET', '/collections/field-notes')).body.organization_id;
    const sameOrgToken = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'owner@example.com', role: 'owner' })).access_token;
    const sameOrg = await http(server.url, 'POST', '/mcp', {
      token: sameOrgToken,
      body: { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(sameOrg.status).toBe(403);
    expect(JSON.stringify(sameOrg.body)).toMatch(/another API key or user/);
  });

  /** Waits until the fake model has seen no new request for `quietMs`, and returns how many it saw. */
  async function settledModelRequests(quietMs = 1500): Promise<number> {
    let seen = llm.requests.length;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, quietMs));
      if (llm.requests.length === seen) return seen;
      seen = llm.requests.length;
    }
  }

  test('a client that cancels an agentic search stops the agent on the server', async () => {
    agentMode = 'slow';
    const before = llm.requests.length;
    const abort = new AbortController();
    const steps: string[] = [];
    collectProgress(client, 'http-cancelled', (p) => {
      steps.push(p.message ?? '');
      if (steps.filter((s) => s.startsWith('Step')).length === 2) abort.abort();
    });
    const pending = client.callTool({ name: 'search', arguments: { collection: 'field-notes', query: 'gannet', tier: 'agentic' }, _meta: { progressToken: 'http-cancelled' } }, undefined, { signal: abort.signal });
    await expect(pending).rejects.toThrow();
    const stopped = await settledModelRequests();
    // The agent had a budget of 40 turns; it stopped within a turn of the cancellation.
    expect(stopped - before).toBeLessThanOrEqual(3);
  });

  test('a client that drops the connection mid-search stops the agent on the server', async () => {
    agentMode = 'slow';
    const before = llm.requests.length;
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const abort = new AbortController();
    const response = await fetch(new URL('/mcp', server.url), {
      method: 'POST',
      signal: abort.signal,
      headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'dropped', method: 'tools/call', params: { name: 'search', arguments: { collection: 'field-notes', query: 'gannet', tier: 'agentic' }, _meta: { progressToken: 'p1' } } }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = '';
    while ((received.match(/notifications\/progress/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const stopped = await settledModelRequests();
    expect(stopped - before).toBeLessThanOrEqual(4);
    // The session goes on serving.
    expect(structured(await call(client, 'list_collections', {})).collections).toHaveLength(1);
  });
});

describe('MCP rate limits, session end and shutdown', () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  test('search tools draw on the search budget; the refusal says how long to wait', async () => {
    server = await startTestServer({ deployment: 'embedded', env: { CATCHMENT_SEARCH_RATE_LIMIT_REQUESTS: '2', CATCHMENT_RATE_LIMIT_WINDOW_SECONDS: '60', CATCHMENT_SHUTDOWN_TIMEOUT_SECONDS: '30', CATCHMENT_MCP_SESSION_IDLE_SECONDS: '2' } });
    const client = await connect(server.url, { 'x-api-key': server.apiKey });
    try {
      await http(server.url, 'POST', '/collections', { apiKey: server!.apiKey, body: { name: 'Empty', readable_id: 'empty' } });
      for (let i = 0; i < 2; i++) expect(structured(await call(client, 'search', { collection: 'empty', query: 'anything' })).results).toEqual([]);
      const limited = await call(client, 'search', { collection: 'empty', query: 'anything' });
      expect(limited.isError).toBe(true);
      expect(text(limited)).toMatch(/^Rate limited: .* Wait \d+ seconds before calling again\.$/);
      // The same budget as REST search: it is spent there too.
      expect((await http(server!.url, 'POST', '/collections/empty/search/instant', { apiKey: server!.apiKey, body: { query: 'x' } })).status).toBe(429);
      // Other families keep their own budget.
      expect(structured(await call(client, 'list_collections', {})).collections).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  test('a closed session is gone; shutdown does not wait for the streams of open sessions', async () => {
    const closing = await connect(server!.url, { 'x-api-key': server!.apiKey });
    const transport = closing.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const listWith = (id: string) =>
      http(server!.url, 'POST', '/mcp', { apiKey: server!.apiKey, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } });
    expect((await listWith(sessionId)).status).toBe(404);
    await closing.close();

    // A caller keeps at most 50 sessions: opening a 51st closes its least recently used.
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'many', version: '1' } } };
    const opened: string[] = [];
    for (let i = 0; i < 51; i++) {
      const response = await http(server!.url, 'POST', '/mcp', { apiKey: server!.apiKey, body: initialize, headers: { accept: 'application/json, text/event-stream' } });
      opened.push(response.headers.get('mcp-session-id')!);
    }
    expect((await listWith(opened[0]!)).status).toBe(404);
    expect((await listWith(opened[1]!)).status).toBe(200);
    expect((await listWith(opened[50]!)).status).toBe(200);

    // Unused for CATCHMENT_MCP_SESSION_IDLE_SECONDS (2 s here): closed.
    const idle = await connect(server!.url, { 'x-api-key': server!.apiKey });
    const idleId = (idle.transport as StreamableHTTPClientTransport).sessionId!;
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect((await listWith(idleId)).status).toBe(404);
    await idle.close();

    // A connected client holds the server's stream (GET /mcp) open; stopping ends it instead of waiting 30 s.
    const connected = await connect(server!.url, { 'x-api-key': server!.apiKey });
    expect((await connected.listTools()).tools.length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await server!.stop();
    server = undefined;
    expect(Date.now() - started).toBeLessThan(10_000);
    await connected.close().catch(() => undefined);
  });
});
