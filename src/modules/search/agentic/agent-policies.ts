import type { ChatMessage, LanguageModel, TokenUsage, ToolCall } from '../../../platform/llm/language-model.js';
import { AGENT_TOOLS, READ_MAX_ENTITIES, type AgentToolbox, type ToolOutcome } from './agent-tools.js';

export interface AgentTurn {
  thinking: string | null;
  text: string | null;
  /** No calls: the agent has finished. */
  toolCalls: ToolCall[];
  usage: TokenUsage;
}

/** Decides the agent's next tool calls from what happened so far. */
export interface AgentPolicy {
  next(signal: AbortSignal): Promise<AgentTurn>;
  observe(results: { call: ToolCall; outcome: ToolOutcome }[]): void;
}

export interface AgentTask {
  query: string;
  limit: number | null;
  thinking: boolean;
}

const SYSTEM_PROMPT = `You are a search agent working over one document collection. Find the entities that answer the user's request.
Use the tools: search (several phrasings), read to check promising entities, the navigation tools (get_parent, get_children, get_siblings) to explore around good hits, count to size a filter, add_to_results for every relevant entity, remove_from_results for mistakes, review_results before finishing, then return_results_to_user.
Collect only entities you have reason to think are relevant. Call tools; do not answer in prose.`;

/** A language model chooses the tools (OpenAI-style tool calling), seeing every tool's output. */
export class LanguageModelPolicy implements AgentPolicy {
  private readonly messages: ChatMessage[];

  constructor(
    private readonly model: LanguageModel,
    private readonly task: AgentTask,
  ) {
    const wanted = task.limit === null ? 'Decide how many results are worth returning.' : `Return at most ${task.limit} results.`;
    this.messages = [{ role: 'user', text: `${task.query}\n\n(${wanted})` }];
  }

  async next(signal: AbortSignal): Promise<AgentTurn> {
    const turn = await this.model.turn({ system: SYSTEM_PROMPT, messages: this.messages, tools: AGENT_TOOLS, signal, reasoning: this.task.thinking });
    this.messages.push({ role: 'assistant', text: turn.text, toolCalls: turn.toolCalls });
    return { thinking: turn.reasoning, text: turn.text || null, toolCalls: turn.toolCalls, usage: turn.usage };
  }

  observe(results: { call: ToolCall; outcome: ToolOutcome }[]): void {
    this.messages.push({ role: 'tool', results: results.map(({ call, outcome }) => ({ id: call.id, name: call.name, output: outcome.output })) });
  }
}

/** Most documents the built-in agent reads (its first `limit` of classic's ranking, up to this many). */
export const MAX_READ = 50;
/** Results returned when the caller leaves the number to the agent (`limit: null`), as instant search's first page. */
export const DEFAULT_RESULTS = 10;

/**
 * The built-in agent when no language model is configured: a fixed, explainable procedure over the
 * same tools — search as classic search does (its plan, fusion and second stage, over the whole
 * collection), read the documents it will return, collect classic's ranking, review, return. The
 * loop returns them in classic's order (rankedByClassic in agentic-search.ts), `limit` of them (ten
 * when the caller left it open): never fewer than classic returns, never one by accident.
 */
export class DeterministicPolicy implements AgentPolicy {
  private step = 0;
  private calls = 0;
  private readonly wanted: number;

  constructor(
    private readonly task: AgentTask,
    private readonly toolbox: AgentToolbox,
  ) {
    this.wanted = task.limit ?? DEFAULT_RESULTS;
  }

  async next(): Promise<AgentTurn> {
    const turn = this.plan();
    return { thinking: turn ? turn.why : null, text: null, toolCalls: turn ? turn.calls : [], usage: { promptTokens: 0, completionTokens: 0 } };
  }

  observe(): void {}

  private plan(): { why: string; calls: ToolCall[] } | null {
    const call = (name: string, args: Record<string, unknown>): ToolCall => ({ id: `builtin_${++this.calls}`, name, arguments: args });
    const ranked = this.toolbox.classicRanking?.results ?? [];
    switch (this.step++) {
      case 0:
        return { why: `Searching the collection as classic search does for "${this.task.query}".`, calls: [call('search', { query: this.task.query, plan: 'classic', limit: this.wanted })] };
      case 1: {
        if (ranked.length === 0) return { why: 'Nothing matched; returning.', calls: [call('return_results_to_user', {})] };
        const reading = ranked.slice(0, Math.min(this.wanted, MAX_READ)).map((r) => r.entityId);
        const batches = Array.from({ length: Math.ceil(reading.length / READ_MAX_ENTITIES) }, (_, i) => reading.slice(i * READ_MAX_ENTITIES, (i + 1) * READ_MAX_ENTITIES));
        return { why: `Reading the ${reading.length} best candidates.`, calls: batches.map((ids) => call('read', { entity_ids: ids })) };
      }
      case 2:
        return { why: `Collecting the ${ranked.length} candidates classic search ranked.`, calls: [call('add_to_results', { entity_ids: ranked.map((r) => r.entityId) })] };
      case 3:
        return { why: 'Reviewing the collected results.', calls: [call('review_results', {})] };
      case 4:
        return { why: 'Returning the results.', calls: [call('return_results_to_user', {})] };
      default:
        return null;
    }
  }
}
