import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, Output, tool, type LanguageModelUsage, type ModelMessage, type ToolSet } from 'ai';
import type { ChatMessage, JsonSchema, LanguageModel, TokenUsage, ToolDefinition, TurnResult } from './language-model.js';
import { LanguageModelError } from './language-model.js';

export interface OpenAiCompatibleModelOptions {
  /** Base URL; requests go to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  /** Retries on 429/5xx, with the AI SDK's exponential backoff. */
  maxRetries?: number;
}

// The SDK prints its warnings with console.warn; the service logs JSON only.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** Any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM…), through the AI SDK. */
export class OpenAiCompatibleModel implements LanguageModel {
  readonly modelName: string;
  private readonly model;

  constructor(private readonly options: OpenAiCompatibleModelOptions) {
    this.modelName = options.model;
    const provider = createOpenAICompatible({ name: 'catchmentLlm', baseURL: options.baseUrl.replace(/\/+$/, ''), apiKey: options.apiKey, supportsStructuredOutputs: true, includeUsage: true });
    this.model = provider.chatModel(options.model);
  }

  async generateObject<T>(request: { system: string; prompt: string; schema: JsonSchema; signal?: AbortSignal }): Promise<{ object: T; usage: TokenUsage }> {
    const result = await this.call(() =>
      generateText({ ...this.common(request.signal), system: request.system, prompt: request.prompt, output: Output.object({ schema: jsonSchema<T>(request.schema as never) }) }),
    );
    return { object: result.output as T, usage: usage(result.usage) };
  }

  async turn(request: { system: string; messages: ChatMessage[]; tools: ToolDefinition[]; signal?: AbortSignal; reasoning?: boolean }): Promise<TurnResult> {
    // Tools without `execute`: the SDK returns the calls and the caller runs them (it streams each one).
    const tools: ToolSet = Object.fromEntries(request.tools.map((t) => [t.name, tool({ description: t.description, inputSchema: jsonSchema(t.parameters as never) })]));
    // Extended reasoning (`thinking`) maps to the endpoint's `reasoning_effort`; models without it ignore it.
    const providerOptions = request.reasoning ? { catchmentLlm: { reasoningEffort: 'high' } } : undefined;
    const result = await this.call(() => generateText({ ...this.common(request.signal), system: request.system, messages: request.messages.map(toModelMessage), tools, providerOptions }));
    return {
      text: result.text,
      reasoning: result.reasoningText ?? null,
      toolCalls: result.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: (call.input ?? {}) as Record<string, unknown> })),
      usage: usage(result.usage),
    };
  }

  async complete(request: { system: string; prompt: string; signal?: AbortSignal }): Promise<{ text: string; usage: TokenUsage }> {
    const result = await this.call(() => generateText({ ...this.common(request.signal), system: request.system, prompt: request.prompt }));
    return { text: result.text, usage: usage(result.usage) };
  }

  private common(signal: AbortSignal | undefined) {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    return { model: this.model, maxRetries: this.options.maxRetries ?? 2, abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout };
  }

  /** Errors carry the endpoint's message but never the key (the SDK does not put it in messages). */
  private async call<R>(run: () => Promise<R>): Promise<R> {
    try {
      return await run();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new LanguageModelError(`Language model ${this.options.model} at ${this.options.baseUrl} failed: ${message}`);
    }
  }
}

function usage(value: LanguageModelUsage): TokenUsage {
  return { promptTokens: value.inputTokens ?? 0, completionTokens: value.outputTokens ?? 0 };
}

function toModelMessage(message: ChatMessage): ModelMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...(message.text ? [{ type: 'text' as const, text: message.text }] : []),
          ...message.toolCalls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: call.name, input: call.arguments })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: message.results.map((result) => ({ type: 'tool-result' as const, toolCallId: result.id, toolName: result.name, output: { type: 'json' as const, value: result.output as never } })),
      };
  }
}
