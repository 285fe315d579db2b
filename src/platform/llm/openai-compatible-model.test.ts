import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startFakeChatCompletions, type ScriptedReply } from '../../../test/support/fake-chat-completions.js';
import { LanguageModelError } from './language-model.js';
import { OpenAiCompatibleModel } from './openai-compatible-model.js';

describe('OpenAI-compatible language model against a local server speaking the chat-completions protocol', () => {
  let next: ScriptedReply[] = [];
  let fake: Awaited<ReturnType<typeof startFakeChatCompletions>>;
  beforeAll(async () => {
    fake = await startFakeChatCompletions(() => next.shift() ?? { content: 'fallback' });
  });
  afterAll(() => fake.close());
  const model = () => new OpenAiCompatibleModel({ baseUrl: fake.url, apiKey: 'sk-secret-key', model: 'tiny', timeoutMs: 5000, maxRetries: 1 });

  test('a turn sends the tools and the conversation, and returns the tool calls with their arguments and usage', async () => {
    next = [{ content: 'Looking.', toolCalls: [{ name: 'search', arguments: { query: 'budget', limit: 5 } }] }];
    const turn = await model().turn({
      system: 'You search.',
      messages: [
        { role: 'user', text: 'find the budget' },
        { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'count', arguments: {} }] },
        { role: 'tool', results: [{ id: 'c1', name: 'count', output: { count: 3 } }] },
      ],
      tools: [
        { name: 'search', description: 'Search', parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] } },
        { name: 'count', description: 'Count', parameters: { type: 'object', properties: {} } },
      ],
      reasoning: true,
    });
    expect(turn.text).toBe('Looking.');
    expect(turn.toolCalls).toEqual([{ id: expect.any(String), name: 'search', arguments: { query: 'budget', limit: 5 } }]);
    expect(turn.usage.promptTokens).toBeGreaterThan(0);
    const sent = fake.requests.at(-1)!;
    expect(sent.model).toBe('tiny');
    expect(sent.authorization).toBe('Bearer sk-secret-key');
    expect(sent.tools!.map((t) => t.function.name)).toEqual(['search', 'count']);
    expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(sent.messages[2]!.tool_calls![0]!.function.name).toBe('count');
    expect(JSON.parse(String(sent.messages[3]!.content))).toEqual({ count: 3 });
    expect(sent.reasoning_effort).toBe('high');
  });

  test('generateObject parses the JSON answer; complete returns text', async () => {
    next = [{ content: JSON.stringify({ primary_query: 'q', variations: ['a'] }) }, { content: 'An answer.' }];
    const schema = { type: 'object', properties: { primary_query: { type: 'string' }, variations: { type: 'array', items: { type: 'string' } } }, required: ['primary_query', 'variations'], additionalProperties: false };
    const { object } = await model().generateObject<{ primary_query: string }>({ system: 's', prompt: 'p', schema });
    expect(object).toEqual({ primary_query: 'q', variations: ['a'] });
    expect((await model().complete({ system: 's', prompt: 'p' })).text).toBe('An answer.');
  });

  test('failures become LanguageModelError without the key; unusable JSON too', async () => {
    next = [{ status: 500 }, { status: 500 }];
    const failure = await model().complete({ system: 's', prompt: 'p' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LanguageModelError);
    expect(String((failure as Error).message)).not.toContain('sk-secret-key');
    next = [{ content: 'not json' }];
    await expect(model().generateObject({ system: 's', prompt: 'p', schema: { type: 'object' } })).rejects.toBeInstanceOf(LanguageModelError);
  });
});
