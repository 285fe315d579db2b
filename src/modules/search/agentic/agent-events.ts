import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import type { SearchResultView } from '../search-result.js';

/** The spec's ten agent tools. */
export const AGENT_TOOL_NAMES = [
  'search', 'read', 'add_to_results', 'remove_from_results', 'count',
  'get_children', 'get_siblings', 'get_parent', 'review_results', 'return_results_to_user',
] as const;
export type AgentToolName = (typeof AGENT_TOOL_NAMES)[number];

/**
 * What an agentic search reports while it runs, in the order it happens: `started`, then per
 * iteration one `thinking` and its `tool_call`s, then `reranking` when the rerank endpoint reordered
 * the results, then `done` (or `error`). The stream ends after
 * `done` or `error`. camelCase here; REST writes snake_case.
 */
export type AgentEvent =
  | { type: 'started'; requestId: string; tier: 'agentic'; collectionReadableId: string; query: string; thinking: boolean | null; filter: FilterGroup[] | null; limit: number | null }
  | { type: 'thinking'; thinking: string | null; text: string | null; durationMs: number; diagnostics: { iteration: number; promptTokens: number; completionTokens: number } }
  | { type: 'tool_call'; toolName: AgentToolName; durationMs: number; diagnostics: { iteration: number; toolCallId: string; arguments: Record<string, unknown>; stats: Record<string, unknown> } }
  | { type: 'reranking'; durationMs: number; diagnostics: { inputCount: number; outputCount: number; model: string | null; topRelevanceScore: number; bottomRelevanceScore: number } }
  | { type: 'done'; results: SearchResultView[]; durationMs: number; diagnostics: DoneDiagnostics }
  | { type: 'error'; message: string; durationMs: number; diagnostics: { iteration: number } | null };

export interface DoneDiagnostics {
  totalIterations: number;
  allSeenEntityIds: string[];
  allReadEntityIds: string[];
  allCollectedEntityIds: string[];
  maxIterationsHit: boolean;
  promptTokens: number;
  completionTokens: number;
}
