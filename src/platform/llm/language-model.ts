/**
 * The language model port: what classic planning, the agent loop and legacy completions need from a
 * chat model. One adapter (openai-compatible-model.ts) speaks the chat-completions protocol through
 * the AI SDK; without a configured endpoint the search features use their built-in policies instead.
 */
export type JsonSchema = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonSchema;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** A conversation in the model's terms, kept by the caller between turns. */
export type ChatMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { role: 'tool'; results: { id: string; name: string; output: unknown }[] };

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface TurnResult {
  /** Text the model wrote before (or instead of) its tool calls. */
  text: string;
  /** Reasoning text, when the model returns it separately. */
  reasoning: string | null;
  toolCalls: ToolCall[];
  usage: TokenUsage;
}

export interface LanguageModel {
  readonly modelName: string;
  /** A JSON object that matches `schema` (structured output). */
  generateObject<T>(request: { system: string; prompt: string; schema: JsonSchema; signal?: AbortSignal }): Promise<{ object: T; usage: TokenUsage }>;
  /** One agent turn: the model answers, possibly calling some of `tools` (which the caller runs). */
  turn(request: { system: string; messages: ChatMessage[]; tools: ToolDefinition[]; signal?: AbortSignal; reasoning?: boolean }): Promise<TurnResult>;
  /** Free text, such as an answer written from search results. */
  complete(request: { system: string; prompt: string; signal?: AbortSignal }): Promise<{ text: string; usage: TokenUsage }>;
}

/** The model could not be reached or answered something unusable; callers fall back, never fail the search on it. */
export class LanguageModelError extends Error {}
