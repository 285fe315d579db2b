import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import type { RetrievalStrategy } from '../search-result.js';

/** What classic search executes: each query runs with the strategy and filter, results are fused. */
export interface SearchPlan {
  primaryQuery: string;
  /** Rephrasings or expansions; each runs and counts less than the primary query in the fusion. */
  variations: string[];
  /** Filters read from the question (ANDed with the caller's own filter). */
  filterGroups: FilterGroup[];
  strategy: RetrievalStrategy;
  /** Who made the plan: `language_model`, `heuristic`, or `instant` after a planner failure. */
  planner: 'language_model' | 'heuristic' | 'instant';
}

/** What a planner may know about the collection to write filters. */
export interface PlanningContext {
  /** Source short names of the collection's connections, e.g. `local_folder`, `postgresql`. */
  sourceNames: string[];
  now: Date;
  /** Top texts for a query (pseudo-relevance feedback), from the collection itself. */
  probe(text: string): Promise<string[]>;
}

export interface SearchPlanner {
  plan(question: string, context: PlanningContext, signal?: AbortSignal): Promise<SearchPlan>;
}
