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
  /**
   * A query's top documents, best first, one per document (its best chunk's text and its date), for
   * pseudo-relevance feedback and to check that a date read from the question can filter them. The query runs as a hybrid search with the caller's filter and
   * `filterGroups`, the way classic search runs a plan's primary query: a plan whose primary query is
   * the probed one reuses that run instead of searching again.
   */
  probe(text: string, filterGroups?: FilterGroup[]): Promise<ProbedDocument[]>;
}

/** One of a probe's documents: its best chunk's text and its date. */
export interface ProbedDocument {
  text: string;
  updatedAt: Date | null;
}

export interface SearchPlanner {
  plan(question: string, context: PlanningContext, signal?: AbortSignal): Promise<SearchPlan>;
}
