import type { ChatMessage, LanguageModel, TokenUsage, ToolCall } from '../../../platform/llm/language-model.js';
import { feedbackVariation, withoutBoilerplate } from '../classic/heuristic-planner.js';
import { AGENT_TOOLS, type AgentToolbox, type ToolOutcome } from './agent-tools.js';

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

/**
 * Candidates one search step asks for: the search tool's most (50), so what the agent collects holds
 * every document classic search's second stage looks at (its first 40) and the final ranking, which
 * ranks the collected documents as classic does, starts from at least classic's candidates.
 */
const SEARCH_DEPTH = 50;
const READ_COUNT = 5;
/** Results returned when the caller leaves the number to the agent (`limit: null`), as instant search's first page. */
export const DEFAULT_RESULTS = 10;

/**
 * The built-in agent when no language model is configured: a fixed, explainable procedure over the
 * same tools — search (the question without its asking boilerplate), search again with the terms
 * learned from the first results (pseudo-relevance feedback, as classic search's variation), read the best, collect every candidate found,
 * review, return. The loop then ranks the collected documents together and returns `limit` of them
 * (ten when the caller left it open): never fewer because scores fall off, a score gap says little.
 */
export class DeterministicPolicy implements AgentPolicy {
  private step = 0;
  private calls = 0;
  private readonly query: string;

  constructor(
    private readonly task: AgentTask,
    private readonly toolbox: AgentToolbox,
  ) {
    this.query = withoutBoilerplate(task.query) || task.query;
  }

  async next(): Promise<AgentTurn> {
    const turn = this.plan();
    return { thinking: turn ? turn.why : null, text: null, toolCalls: turn ? turn.calls : [], usage: { promptTokens: 0, completionTokens: 0 } };
  }

  observe(): void {}

  private plan(): { why: string; calls: ToolCall[] } | null {
    const call = (name: string, args: Record<string, unknown>): ToolCall => ({ id: `builtin_${++this.calls}`, name, arguments: args });
    const ranked = [...this.toolbox.seen.values()].sort((a, b) => b.relevanceScore - a.relevanceScore);
    switch (this.step++) {
      case 0:
        return { why: `Searching the collection for "${this.query}".`, calls: [call('search', { query: this.query, limit: SEARCH_DEPTH })] };
      case 1: {
        // The terms classic search's feedback variation searches: what the agent collects then holds classic's candidates.
        const terms = feedbackVariation(this.query, ranked.map((r) => r.textualRepresentation));
        if (terms) return { why: `The first results often mention ${terms.split(' ').slice(0, 6).join(', ')}…; searching with those terms to find documents worded differently.`, calls: [call('search', { query: terms, limit: SEARCH_DEPTH })] };
        return this.plan();
      }
      case 2:
        if (ranked.length === 0) return { why: 'Nothing matched; returning.', calls: [call('return_results_to_user', {})] };
        return { why: `Reading the ${Math.min(READ_COUNT, ranked.length)} best candidates.`, calls: [call('read', { entity_ids: ranked.slice(0, READ_COUNT).map((r) => r.entityId) })] };
      case 3: {
        return { why: `Collecting the ${ranked.length} candidates found, to rank them together.`, calls: [call('add_to_results', { entity_ids: ranked.map((r) => r.entityId) })] };
      }
      case 4:
        return { why: 'Reviewing the collected results.', calls: [call('review_results', {})] };
      case 5:
        return { why: 'Returning the results.', calls: [call('return_results_to_user', {})] };
      default:
        return null;
    }
  }
}
