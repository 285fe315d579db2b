import { randomUUID } from 'node:crypto';
import type { LanguageModel, ToolCall } from '../../../platform/llm/language-model.js';
import { LanguageModelError } from '../../../platform/llm/language-model.js';
import type { Logger } from '../../../platform/logger.js';
import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import type { EntityNavigator } from '../entity-navigator.js';
import { withConditions } from '../filter-rules.js';
import type { ClassicSearch } from '../classic/classic-search.js';
import type { RerankReport } from '../rerank-results.js';
import type { Retrieval, SearchScope } from '../retrieval.js';
import { distinctDocuments, type SearchResultView } from '../search-result.js';
import { AGENT_TOOL_NAMES, type AgentEvent, type AgentToolName } from './agent-events.js';
import { DEFAULT_RESULTS, DeterministicPolicy, LanguageModelPolicy, type AgentPolicy, type AgentTask } from './agent-policies.js';
import { AgentToolbox, type ToolOutcome } from './agent-tools.js';

/**
 * Collected documents the final ranking scores (more only when `limit` asks for more): classic
 * search's own depth, so its lists are cut where classic's are and the collected documents rank as
 * classic ranks them; the others follow unscored.
 */
const RANKED_DEPTH = 50;

export interface AgenticBudget {
  maxIterations: number;
  timeoutMs: number;
}

/**
 * The agent loop: each iteration the policy (a language model, or the built-in procedure) picks
 * tool calls, the toolbox runs them, and every step is reported as an event. It ends when the agent
 * returns its results, stops calling tools, or spends its iteration or time budget; an aborted
 * signal (the client went away) stops it at the next step.
 */
export class AgenticSearch {
  constructor(
    private readonly retrieval: Retrieval,
    private readonly navigator: EntityNavigator,
    private readonly languageModel: LanguageModel | null,
    /** Ranks what the agent collected against the question (its fusion of queries, and the rerank endpoint when configured). */
    private readonly ranking: ClassicSearch,
    private readonly budget: AgenticBudget,
    private readonly logger: Logger,
  ) {}

  async run(scope: SearchScope, task: AgentTask & { filter: FilterGroup[] }, emit: (event: AgentEvent) => void, signal: AbortSignal): Promise<SearchResultView[]> {
    const started = Date.now();
    const elapsed = () => Date.now() - started;
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.budget.timeoutMs)]);
    const toolbox = new AgentToolbox(this.retrieval, this.ranking, scope, task.filter, this.navigator);
    let policy: AgentPolicy = this.languageModel ? new LanguageModelPolicy(this.languageModel, task) : new DeterministicPolicy(task, toolbox);
    emit({ type: 'started', requestId: randomUUID(), tier: 'agentic', collectionReadableId: scope.collection.readableId, query: task.query, thinking: task.thinking, filter: task.filter.length ? task.filter : null, limit: task.limit });

    let iteration = 0;
    let finished = false;
    const tokens = { promptTokens: 0, completionTokens: 0 };
    try {
      while (!finished && iteration < this.budget.maxIterations && !deadline.aborted) {
        iteration++;
        const turnStarted = Date.now();
        let turn;
        try {
          turn = await policy.next(deadline);
        } catch (error) {
          if (deadline.aborted) break;
          if (!(error instanceof LanguageModelError)) throw error;
          // The model failed: the built-in procedure carries on with what was found so far.
          this.logger.warn({ err: error.message }, 'agentic search: language model failed; continuing with the built-in agent');
          policy = new DeterministicPolicy(task, toolbox);
          turn = await policy.next(deadline);
          turn = { ...turn, text: `The language model failed (${error.message}); continuing with the built-in agent.` };
        }
        tokens.promptTokens += turn.usage.promptTokens;
        tokens.completionTokens += turn.usage.completionTokens;
        emit({ type: 'thinking', thinking: turn.thinking, text: turn.text, durationMs: Date.now() - turnStarted, diagnostics: { iteration, ...turn.usage } });
        if (turn.toolCalls.length === 0) break;
        const results: { call: ToolCall; outcome: ToolOutcome }[] = [];
        for (const call of turn.toolCalls) {
          if (deadline.aborted) break;
          const callStarted = Date.now();
          const outcome = await toolbox.call(call.name, call.arguments, deadline);
          results.push({ call, outcome });
          if ((AGENT_TOOL_NAMES as readonly string[]).includes(call.name)) {
            emit({ type: 'tool_call', toolName: call.name as AgentToolName, durationMs: Date.now() - callStarted, diagnostics: { iteration, toolCallId: call.id, arguments: call.arguments, stats: outcome.stats } });
          }
          if (outcome.finished) finished = true;
        }
        policy.observe(results);
      }
      if (signal.aborted) return [];
      const results = policy instanceof DeterministicPolicy ? this.rankedByClassic(task, toolbox, emit) : await this.finalResults(scope, task, toolbox, emit, signal);
      emit({
        type: 'done',
        results,
        durationMs: elapsed(),
        diagnostics: {
          totalIterations: iteration,
          allSeenEntityIds: [...toolbox.seen.keys()],
          allReadEntityIds: [...toolbox.read],
          allCollectedEntityIds: [...toolbox.collected],
          maxIterationsHit: !finished && (iteration >= this.budget.maxIterations || deadline.aborted),
          ...tokens,
        },
      });
      return results;
    } catch (error) {
      if (signal.aborted) return [];
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'agentic search failed');
      emit({ type: 'error', message: error instanceof Error ? error.message : 'Agentic search failed', durationMs: elapsed(), diagnostics: { iteration } });
      throw error;
    }
  }

  /**
   * The built-in agent's ranking: classic's own (its classic search over the whole collection: the
   * same plan, fusion, second stage and rerank), restricted to what it collected, so the agent is
   * never below classic; collected documents classic did not rank follow. `limit` of them, ten when
   * the caller left it open. Re-ranking the read documents by every heading and passage they hold
   * (classic's field weights, scaled 1, 0.5, 0.25, 0.1, 0.02; classic's first kept first or within
   * three) moved bench:docs dev MRR@10 by −0.006 to +0.004 and recall@10 by up to −0.016 (reading
   * past classic's first page), losing on at least one corpus every time: classic's second stage
   * already reads the headings that decide, so the reading is reported and not used to reorder.
   */
  private rankedByClassic(task: AgentTask, toolbox: AgentToolbox, emit: (event: AgentEvent) => void): SearchResultView[] {
    const limit = task.limit ?? DEFAULT_RESULTS;
    const classic = toolbox.classicRanking;
    if (!classic) return bestSeen(toolbox, limit);
    reportReranking(classic.reranking, emit);
    const ranked = classic.results.filter((result) => toolbox.collected.has(result.entityId));
    return rankedThenUnscored(ranked, [...toolbox.collected], toolbox, limit);
  }

  /**
   * The collected documents ranked against the question together, as classic search ranks (the
   * heuristic plan's queries fused, reranked when a rerank endpoint is configured) but over them
   * alone, so scores are comparable; at most `limit`. Nothing collected: the best seen. A rerank
   * that reordered them is reported as a `reranking` event.
   */
  private async finalResults(
    scope: SearchScope,
    task: AgentTask & { filter: FilterGroup[] },
    toolbox: AgentToolbox,
    emit: (event: AgentEvent) => void,
    signal: AbortSignal,
  ): Promise<SearchResultView[]> {
    const ids = [...toolbox.collected];
    // Left open, the model decides by what it collected (only a language model's policy gets here).
    const limit = task.limit ?? (ids.length || DEFAULT_RESULTS);
    if (ids.length === 0) return bestSeen(toolbox, limit);
    const { results: ranked, reranking } = await this.ranking.run(
      scope,
      { query: task.query, filter: withConditions(task.filter, { field: 'entity_id', operator: 'in', value: ids }), limit: Math.min(ids.length, Math.max(limit, RANKED_DEPTH)), offset: 0 },
      signal,
    );
    reportReranking(reranking, emit);
    return rankedThenUnscored(ranked, ids, toolbox, limit);
  }
}

/** Nothing collected (or no ranking to go by): the best documents the agent saw, at most `limit`. */
function bestSeen(toolbox: AgentToolbox, limit: number): SearchResultView[] {
  return distinctDocuments([...toolbox.seen.values()].sort((a, b) => b.relevanceScore - a.relevanceScore)).slice(0, limit);
}

/** The ranked documents, then the collected ones the ranking left out (federated or unscored: as the agent saw them, scored 0), at most `limit`. */
function rankedThenUnscored(ranked: SearchResultView[], collectedIds: string[], toolbox: AgentToolbox, limit: number): SearchResultView[] {
  const scored = new Set(ranked.map((result) => result.entityId));
  const unscored = collectedIds.filter((id) => !scored.has(id)).map((id) => ({ ...toolbox.seen.get(id)!, relevanceScore: 0 }));
  return distinctDocuments([...ranked, ...unscored]).slice(0, limit);
}

/** A rerank that reordered the ranking, reported as the stream's `reranking` event. */
function reportReranking(report: RerankReport | null, emit: (event: AgentEvent) => void): void {
  if (!report) return;
  const { durationMs, ...diagnostics } = report;
  emit({ type: 'reranking', durationMs, diagnostics });
}
