import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { EventSource } from 'eventsource';
import { createClient } from 'graphql-sse';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeChatCompletions, type ChatRequest, type ScriptedReply } from './support/fake-chat-completions.js';
import { graphql, startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

/** A small folder tree whose documents each answer one kind of question. */
const FILES: Record<string, string> = {
  'finance/budget.md': '# Quarterly budget review\nThe quarterly budget review compares revenue and spending against the forecast for finance.',
  'finance/expenses.md': '# Travel expenses policy\nEmployees file travel expenses and receipts within thirty days; finance reimburses them monthly.',
  'engineering/onboarding.md': '# Onboarding checklist\nNew engineers set up their laptop, get repository access and pair with a mentor in their first week.',
  'engineering/postmortem.md': '# Security incident postmortem\nThe incident began with a leaked credential; we rotated keys and added alerts as follow ups.',
  'engineering/release.md': '# Mobile release notes\nThe mobile application release adds offline mode and fixes crashes on older phones.',
  'wildlife/platypus.md': '# Platypus sighting\nA platypus was seen near the river during the wildlife survey; platypus numbers are rising.',
};

/**
 * Reads a POST server-sent-event stream with the `eventsource` client (its fetch hook sends the body).
 * `hangUpAfter` lets a test disconnect early: when it returns true for an event the client closes the stream.
 */
function streamEvents(url: string, apiKey: string, body: unknown, hangUpAfter?: (event: any) => boolean): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const events: any[] = [];
    const source = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, method: 'POST', headers: { ...(init?.headers as Record<string, string>), 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) }),
    });
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      events.push(event);
      if (event.type === 'done' || event.type === 'error' || hangUpAfter?.(event)) {
        source.close();
        resolve(events);
      }
    };
    source.onerror = (error) => {
      source.close();
      if (events.length) resolve(events);
      else reject(new Error(`stream failed: ${error.message ?? error.code}`));
    };
  });
}

async function syncFolder(call: Api, root: string, collection: string) {
  expect((await call('POST', '/collections', { name: collection, readable_id: collection })).status).toBe(200);
  const connection = (await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: collection, config: { path: root } })).body;
  const [job] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
  expect((await waitForJob(call, connection.id, job.id, ['COMPLETED', 'FAILED'])).status).toBe('COMPLETED');
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'catchment-tiers-'));
  for (const [file, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('classic, agentic and legacy search without a language model', () => {
  let server: TestServer;
  let call: Api;
  beforeAll(async () => {
    server = await startTestServer({ deployment: 'servers', env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root } });
    call = api(server.url, server.apiKey);
    await syncFolder(call, root, 'handbook');
  });
  afterAll(() => server?.stop());

  test('classic: the heuristic planner finds the answer first, pages consistently and honours the caller filter', async () => {
    const all = await call('POST', '/collections/handbook/search/classic', { query: 'quarterly budget review', limit: 6 });
    expect(all.status).toBe(200);
    expect(all.body.results[0].entity_id).toBe('finance/budget.md');
    const scores = all.body.results.map((r: any) => r.relevance_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const page = await call('POST', '/collections/handbook/search/classic', { query: 'quarterly budget review', limit: 2, offset: 1 });
    expect(page.body.results.map((r: any) => r.entity_id)).toEqual(all.body.results.slice(1, 3).map((r: any) => r.entity_id));
    const filtered = await call('POST', '/collections/handbook/search/classic', {
      query: 'quarterly budget review',
      filter: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'engineering' }] }],
    });
    expect(filtered.body.results.length).toBeGreaterThan(0);
    expect(filtered.body.results.every((r: any) => r.entity_id.startsWith('engineering/'))).toBe(true);
  });

  test('classic over GraphQL shows the plan; a date in the question is no filter when the files carry their copy date', async () => {
    const query = `query ($q: String!) { searchClassic(readableId: "handbook", input: { query: $q, limit: 3 }) { plan { primaryQuery variations filterGroups strategy planner } results { entityId } } }`;
    const plain = await graphql(server.url, query, { q: 'platypus sighting' }, { apiKey: server.apiKey });
    expect(plain.body.errors).toBeUndefined();
    expect(plain.body.data.searchClassic.plan).toMatchObject({ primaryQuery: 'platypus sighting', strategy: 'hybrid', planner: 'heuristic', filterGroups: [] });
    expect(plain.body.data.searchClassic.results[0].entityId).toBe('wildlife/platypus.md');
    // This folder was written at once, so its dates say when it was copied, not what it is about: the
    // planner keeps the date's words in the query instead of filtering (dates that hold are tested beside it).
    const dated = await graphql(server.url, query, { q: 'platypus sighting since 2024' }, { apiKey: server.apiKey });
    expect(dated.body.data.searchClassic.plan.primaryQuery).toBe('platypus sighting since 2024');
    expect(dated.body.data.searchClassic.plan.filterGroups).toEqual([]);
    expect(dated.body.data.searchClassic.results[0].entityId).toBe('wildlife/platypus.md');
  });

  test('bad input is 422 with loc for every tier; an unknown collection or another organization\'s is 404', async () => {
    for (const tier of ['classic', 'agentic', 'agentic/stream']) {
      const empty = await call('POST', `/collections/handbook/search/${tier}`, { query: '', limit: 0 });
      expect(empty.status).toBe(422);
      expect(empty.body.detail.map((d: any) => d.loc)).toEqual(expect.arrayContaining([['body', 'query'], ['body', 'limit']]));
      const field = await call('POST', `/collections/handbook/search/${tier}`, { query: 'x', filter: [{ conditions: [{ field: 'colour', operator: 'equals', value: 'red' }] }] });
      expect(field.status).toBe(422);
      expect((await call('POST', `/collections/nope/search/${tier}`, { query: 'x' })).status).toBe(404);
    }
    // Another organization's key finds no such collection, on every tier and the legacy path.
    const outsider = api(server.url, (await server.running.core.services.organizations.createOrganization('Outsiders')).api_key);
    for (const tier of ['instant', 'classic', 'agentic', 'agentic/stream']) {
      const response = await outsider('POST', `/collections/handbook/search/${tier}`, { query: 'budget' });
      expect([tier, response.status, response.body.detail]).toEqual([tier, 404, expect.stringMatching(/handbook/)]);
    }
    expect((await outsider('GET', '/collections/handbook/search?query=budget')).status).toBe(404);
    const agentic = await call('POST', '/collections/handbook/search/agentic', { query: 'x', limit: null, thinking: 'yes' });
    expect(agentic.status).toBe(422);
    expect(agentic.body.detail[0].loc).toEqual(['body', 'thinking']);
  });

  test('agentic: the built-in agent returns the relevant documents, within the limit and the caller filter', async () => {
    const response = await call('POST', '/collections/handbook/search/agentic', { query: 'security incident leaked credential', limit: 2 });
    expect(response.status).toBe(200);
    expect(response.body.results.length).toBeLessThanOrEqual(2);
    expect(response.body.results[0].entity_id).toBe('engineering/postmortem.md');
    const filtered = await call('POST', '/collections/handbook/search/agentic', {
      query: 'security incident leaked credential',
      limit: null,
      filter: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'finance' }] }],
    });
    expect(filtered.body.results.length).toBeGreaterThan(0);
    expect(filtered.body.results.every((r: any) => r.entity_id.startsWith('finance/'))).toBe(true);
  });

  test('the stream, read by an EventSource, is started, thinking/tool_call per iteration, then done with the results', async () => {
    const events = await streamEvents(`${server.url}/collections/handbook/search/agentic/stream`, server.apiKey, { query: 'platypus wildlife survey', limit: 3 });
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('started');
    expect(types.at(-1)).toBe('done');
    expect(types.slice(1, -1).every((t) => t === 'thinking' || t === 'tool_call')).toBe(true);
    expect(types[1]).toBe('thinking');
    expect(events[0]).toEqual({ type: 'started', request_id: expect.any(String), tier: 'agentic', collection_readable_id: 'handbook', query: 'platypus wildlife survey', thinking: false, filter: null, limit: 3 });
    const thinking = events[1];
    expect(thinking).toEqual({ type: 'thinking', thinking: expect.any(String), text: null, duration_ms: expect.any(Number), diagnostics: { iteration: 1, prompt_tokens: 0, completion_tokens: 0 } });
    const search = events.find((e) => e.type === 'tool_call' && e.tool_name === 'search');
    expect(search.diagnostics).toEqual({ iteration: 1, tool_call_id: expect.any(String), arguments: { query: 'platypus wildlife survey', plan: 'classic', limit: 3 }, stats: expect.objectContaining({ result_count: expect.any(Number), new_results: expect.any(Number) }) });
    expect(search.diagnostics.stats.new_results).toBe(search.diagnostics.stats.result_count);
    const tools = events.filter((e) => e.type === 'tool_call').map((e) => e.tool_name);
    expect(tools).toEqual(expect.arrayContaining(['search', 'read', 'add_to_results', 'review_results', 'return_results_to_user']));
    const done = events.at(-1);
    expect(done.results[0].entity_id).toBe('wildlife/platypus.md');
    expect(done.results[0]).toHaveProperty('service_system_metadata.sync_id');
    expect(done.diagnostics).toMatchObject({ max_iterations_hit: false, all_collected_entity_ids: expect.arrayContaining(['wildlife/platypus.md']) });
    expect(done.diagnostics.total_iterations).toBe(events.filter((e) => e.type === 'thinking').length);
  });

  test('the agenticSearch GraphQL subscription streams the same events over graphql-sse', async () => {
    const client = createClient({ url: `${server.url}/graphql/stream`, headers: { 'x-api-key': server.apiKey }, retryAttempts: 0 });
    const events = await new Promise<any[]>((resolve, reject) => {
      const received: any[] = [];
      client.subscribe(
        {
          query: `subscription { agenticSearch(readableId: "handbook", input: { query: "mobile release offline mode", limit: 1 }) {
            __typename ... on AgentStartedEvent { type query } ... on AgentToolCallEvent { type toolName diagnostics { stats } }
            ... on AgentThinkingEvent { type } ... on AgentDoneEvent { type results { entityId } diagnostics { totalIterations } } } }`,
        },
        { next: (value) => received.push(value), error: reject, complete: () => resolve(received) },
      );
    });
    client.dispose();
    const data = events.map((e) => e.data.agenticSearch);
    expect(data[0]).toEqual({ __typename: 'AgentStartedEvent', type: 'started', query: 'mobile release offline mode' });
    expect(data.at(-1)).toEqual({ __typename: 'AgentDoneEvent', type: 'done', results: [{ entityId: 'engineering/release.md' }], diagnostics: { totalIterations: expect.any(Number) } });
    expect(data.filter((d) => d.type === 'tool_call').map((d) => d.toolName)).toContain('add_to_results');
  });

  test('legacy GET search: deprecated, results with recency bias, completion unavailable without a model, no_results on an empty collection', async () => {
    const raw = await call('GET', '/collections/handbook/search?query=travel%20expenses%20receipts&limit=3');
    expect(raw.status).toBe(200);
    expect(raw.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(raw.headers.get('link')).toContain('rel="successor-version"');
    expect(raw.body).toMatchObject({ response_type: 'raw', status: 'success', completion: null });
    expect(raw.body.results[0].entity_id).toBe('finance/expenses.md');
    const recent = await call('GET', '/collections/handbook/search?query=travel&recency_bias=1&limit=6');
    const times = recent.body.results.map((r: any) => Date.parse(r.updated_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const completion = await call('GET', '/collections/handbook/search?query=travel&response_type=completion');
    expect(completion.body).toMatchObject({ response_type: 'completion', status: 'completion_unavailable', completion: null });
    expect(completion.body.results.length).toBeGreaterThan(0);
    expect((await call('GET', '/collections/handbook/search?query=travel&recency_bias=2')).status).toBe(422);
    await call('POST', '/collections', { name: 'Empty', readable_id: 'empty-one' });
    expect((await call('GET', '/collections/empty-one/search?query=travel')).body.status).toBe('no_results');
  });
});

describe('classic and agentic search with a language model (a local server speaking the chat-completions protocol)', () => {
  let server: TestServer;
  let call: Api;
  let script: (request: ChatRequest, index: number) => ScriptedReply = () => ({ content: '' });
  let fake: Awaited<ReturnType<typeof startFakeChatCompletions>>;
  beforeAll(async () => {
    fake = await startFakeChatCompletions((request, index) => script(request, index));
    server = await startTestServer({ deployment: 'servers', env: { ...FAST_WORKER, CATCHMENT_LOCAL_FOLDER_ROOTS: root, CATCHMENT_LLM_URL: fake.url, CATCHMENT_LLM_MODEL: 'scripted', CATCHMENT_LLM_API_KEY: 'sk-test-key' } });
    call = api(server.url, server.apiKey);
    await syncFolder(call, root, 'handbook');
  });
  afterAll(async () => {
    await server?.stop();
    await fake?.close();
  });

  test('classic runs the plan the model writes (structured output), and falls back to instant search when the model fails', async () => {
    script = () => ({ content: JSON.stringify({ primary_query: 'onboarding laptop mentor', variations: ['new engineer first week'], filter_groups: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'engineering' }] }], strategy: 'hybrid' }) });
    const planned = await graphql(server.url, '{ searchClassic(readableId: "handbook", input: { query: "how do new hires start?" }) { plan { primaryQuery variations planner } results { entityId } } }', {}, { apiKey: server.apiKey });
    expect(planned.body.errors).toBeUndefined();
    expect(planned.body.data.searchClassic.plan).toEqual({ primaryQuery: 'onboarding laptop mentor', variations: ['new engineer first week'], planner: 'language_model' });
    expect(planned.body.data.searchClassic.results[0].entityId).toBe('engineering/onboarding.md');
    expect(planned.body.data.searchClassic.results.every((r: any) => r.entityId.startsWith('engineering/'))).toBe(true);
    const sent = fake.requests.at(-1)!;
    expect(sent.model).toBe('scripted');
    expect(sent.authorization).toBe('Bearer sk-test-key');
    expect(JSON.stringify(sent.messages)).toContain('how do new hires start?');
    script = () => ({ status: 500 });
    const fallback = await call('POST', '/collections/handbook/search/classic', { query: 'platypus sighting' });
    expect(fallback.status).toBe(200);
    expect(fallback.body.results[0].entity_id).toBe('wildlife/platypus.md');
  });

  test('agentic: the model drives all ten tools; the stream reports each with its arguments and statistics; results are what it collected', async () => {
    const turns: ScriptedReply[] = [
      { content: 'Let me search.', toolCalls: [{ name: 'search', arguments: { query: 'budget forecast', limit: 5 } }, { name: 'count', arguments: { filter: [{ conditions: [{ field: 'breadcrumbs.name', operator: 'equals', value: 'finance' }] }] } }] },
      { toolCalls: [{ name: 'read', arguments: { entity_ids: ['finance/budget.md', 'missing.md'] } }, { name: 'get_parent', arguments: { entity_id: 'finance/budget.md' } }] },
      { toolCalls: [{ name: 'get_children', arguments: { entity_id: 'finance' } }, { name: 'get_siblings', arguments: { entity_id: 'finance/budget.md' } }] },
      { toolCalls: [{ name: 'add_to_results', arguments: { entity_ids: ['finance/budget.md', 'finance/expenses.md'] } }, { name: 'remove_from_results', arguments: { entity_ids: ['finance/expenses.md'] } }] },
      { toolCalls: [{ name: 'review_results', arguments: {} }] },
      { toolCalls: [{ name: 'return_results_to_user', arguments: {} }] },
    ];
    const start = fake.requests.length;
    script = (_request, index) => turns[index - start] ?? { content: 'done' };
    const events = await streamEvents(`${server.url}/collections/handbook/search/agentic/stream`, server.apiKey, { query: 'what is the budget forecast?', thinking: true, limit: null });
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls.map((e) => e.tool_name)).toEqual(['search', 'count', 'read', 'get_parent', 'get_children', 'get_siblings', 'add_to_results', 'remove_from_results', 'review_results', 'return_results_to_user']);
    const stats = Object.fromEntries(calls.map((e) => [e.tool_name, e.diagnostics.stats]));
    expect(stats.search).toMatchObject({ result_count: 5, new_results: 5 });
    expect(stats.count).toEqual({ count: 2 });
    expect(stats.read).toEqual({ found: 1, not_found: 1, entities: ['finance/budget.md'] });
    expect(stats.get_parent).toMatchObject({ result_count: 1, first_results: [{ entity_id: 'finance', name: 'finance' }] });
    expect(stats.get_children.first_results.map((r: any) => r.entity_id).sort()).toEqual(['finance/budget.md', 'finance/expenses.md']);
    expect(stats.get_siblings).toMatchObject({ result_count: 1, first_results: [{ entity_id: 'finance/expenses.md' }] });
    expect(stats.add_to_results).toEqual({ added: 2, already_collected: 0, not_found: 0, total_collected: 2 });
    expect(stats.remove_from_results).toEqual({ removed: 1, not_found: 0, total_collected: 1 });
    expect(stats.review_results).toMatchObject({ total_collected: 1 });
    expect(stats.return_results_to_user).toEqual({ accepted: true, total_collected: 1 });
    expect(calls[0].diagnostics.arguments).toEqual({ query: 'budget forecast', limit: 5 });
    const thinking = events.filter((e) => e.type === 'thinking');
    expect(thinking[0]).toMatchObject({ text: 'Let me search.', diagnostics: { iteration: 1, prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) } });
    expect(thinking[0].diagnostics.prompt_tokens).toBeGreaterThan(0);
    const done = events.at(-1);
    expect(done.type).toBe('done');
    expect(done.results.map((r: any) => r.entity_id)).toEqual(['finance/budget.md']);
    expect(done.diagnostics).toMatchObject({ total_iterations: 6, all_read_entity_ids: ['finance/budget.md'], all_collected_entity_ids: ['finance/budget.md'], max_iterations_hit: false });
    // Each turn after the first carried the previous tool outputs back to the model, with the tools offered.
    const second = fake.requests[start + 1]!;
    expect(second.tools!.map((t) => t.function.name).sort()).toEqual(['add_to_results', 'count', 'get_children', 'get_parent', 'get_siblings', 'read', 'remove_from_results', 'return_results_to_user', 'review_results', 'search']);
    expect(second.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
    expect(fake.requests[start]!.reasoning_effort).toBe('high');
  });

  test('a client that disconnects stops the agent loop', async () => {
    const start = fake.requests.length;
    script = () => ({ delayMs: 300, toolCalls: [{ name: 'search', arguments: { query: 'anything' } }] });
    await streamEvents(`${server.url}/collections/handbook/search/agentic/stream`, server.apiKey, { query: 'keep searching' }, (event) => event.type === 'tool_call');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const made = fake.requests.length - start;
    expect(made).toBeLessThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(fake.requests.length - start).toBe(made);
  });

  test('legacy completion: the model answers from the results', async () => {
    script = () => ({ content: 'Expenses are reimbursed monthly [1].' });
    const response = await call('GET', '/collections/handbook/search?query=when%20are%20expenses%20reimbursed&response_type=completion&limit=3');
    expect(response.body).toMatchObject({ response_type: 'completion', status: 'success', completion: 'Expenses are reimbursed monthly [1].' });
    script = () => ({ content: 'NO_RELEVANT_RESULTS' });
    expect((await call('GET', '/collections/handbook/search?query=unicorns&response_type=completion')).body).toMatchObject({ status: 'no_relevant_results', completion: null });
  });
});
