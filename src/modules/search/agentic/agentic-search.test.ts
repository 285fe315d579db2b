import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import { FIRST_KEPT_WITHIN } from '../classic/document-fields.js';
import { documentKey, type SearchResultView } from '../search-result.js';
import { openTiers, type TestEntity } from '../search-tiers.fixture.js';
import type { AgentEvent } from './agent-events.js';

const VOCABULARY = ['heron', 'osprey', 'gannet', 'nesting', 'migration', 'cliff', 'river', 'survey', 'winter', 'colony', 'feather', 'estuary'];
const noFilter: FilterGroup[] = [];
const keys = (results: SearchResultView[]) => results.map(documentKey);

let tiers: Awaited<ReturnType<typeof openTiers>>;
beforeAll(async () => {
  tiers = await openTiers();
});
afterAll(() => tiers?.close());

const word = fc.constantFrom(...VOCABULARY);
const heading = fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' '));
const entities = fc
  .uniqueArray(
    fc.record({
      id: fc.stringMatching(/^[a-z]{1,6}\.md$/),
      // Chunks as synced documents carry them: a heading path, then the passage.
      chunks: fc.array(fc.tuple(heading, fc.array(word, { minLength: 1, maxLength: 10 })).map(([path, words]) => `Guide › ${path}\n${words.join(' ')}`), { minLength: 1, maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 16, selector: (entity) => entity.id },
  )
  .map((list) => list as TestEntity[]);
const question = fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => `How do I ${words.join(' ')}?`);

const runAgent = (scope: Parameters<typeof tiers.agentic.run>[0], query: string, limit: number | null, emit: (event: AgentEvent) => void = () => undefined) =>
  tiers.agentic.run(scope, { query, limit, thinking: false, filter: noFilter }, emit, new AbortController().signal);

describe('the built-in agent (no language model) starts from classic search', () => {
  test("the agent returns classic's documents in classic's order: its first document first, never fewer documents (random collections and questions)", async () => {
    await fc.assert(
      fc.asyncProperty(entities, question, fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }), async (collection, query, limit) => {
        const scope = await tiers.collection(collection);
        const { results: classic } = await tiers.classic.run(scope, { query, filter: noFilter, limit: limit ?? 10, offset: 0 });
        const agentic = await runAgent(scope, query, limit);
        expect(new Set(keys(agentic)).size).toBe(agentic.length);
        expect(agentic.length).toBe(classic.length);
        if (classic.length > 0) expect(keys(agentic).slice(0, FIRST_KEPT_WITHIN)).toContain(documentKey(classic[0]!));
        // Classic's ranking, as classic returns it.
        expect(keys(agentic)).toEqual(keys(classic));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  test('it searches as classic does, reads the documents it returns, and reports both steps', async () => {
    const collection = Array.from({ length: 14 }, (_, i) => ({ id: `note-${i}.md`, chunks: [`Guide › ${VOCABULARY[i % VOCABULARY.length]}\nriver survey ${'feather '.repeat(i % 3)}`] }));
    const scope = await tiers.collection(collection);
    const events: AgentEvent[] = [];
    const results = await runAgent(scope, 'What should I know about the river survey?', 12, (event) => events.push(event));
    const calls = events.flatMap((event) => (event.type === 'tool_call' ? [event] : []));
    expect(calls[0]).toMatchObject({ toolName: 'search', diagnostics: { arguments: { plan: 'classic', limit: 12 } } });
    expect(calls.filter((call) => call.toolName === 'read')).toHaveLength(2);
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(results).toHaveLength(12);
    expect(new Set(done.diagnostics.allReadEntityIds)).toEqual(new Set(results.map((r) => r.entityId)));
  });
});
