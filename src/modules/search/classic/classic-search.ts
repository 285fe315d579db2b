import type { Logger } from '../../../platform/logger.js';
import type { Reranker } from '../../../platform/rerank/reranker.js';
import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import { bothFilters } from '../filter-rules.js';
import type { Retrieval, SearchScope } from '../retrieval.js';
import { rerankDepth, rerankResults, type RerankReport } from '../rerank-results.js';
import type { RetrievalStrategy, SearchResultView } from '../search-result.js';
import { FIRST_KEPT_WITHIN, keptWithin, rescoreByFields } from './document-fields.js';
import { fuseByScore } from './score-fusion.js';
import type { PlanningContext, SearchPlan, SearchPlanner } from './search-plan.js';

/**
 * Weight of each variation against the primary query (1) in classic fusion, by planner. The heuristic
 * planner's pseudo-relevance feedback variation, tuned on SciFact train (809 queries): nDCG@10 against
 * the primary query alone −0.0002 at 0.02, +0.0014 at 0.05, −0.0001 at 0.1, −0.0024 at 0.2; recall@100
 * +0.0025 at 0.05, +0.007 at 0.2. Feedback brings little where about one document is relevant per
 * question (RM3 on SciFact is noise-level in the literature too), so it only reorders near-ties. A
 * language model's rephrasings count half (no model in the benchmark: not tuned).
 */
const VARIATION_WEIGHTS: Record<SearchPlan['planner'], number> = { heuristic: 0.05, language_model: 0.5, instant: 0.5 };
/**
 * Documents each ranked list of a classic plan holds at least: enough feedback documents for the
 * heuristic planner's probe (the primary query's run), and the same lists, hence the same fusion, for
 * every page within this depth.
 */
const PLAN_LIST_DEPTH = 50;

export interface ClassicRequest {
  query: string;
  filter: FilterGroup[];
  limit: number;
  offset: number;
}

/**
 * Classic search: a planner turns the question into queries and filters; each query runs; the
 * document lists are fused (the primary query's best document kept first); the first documents are
 * rescored by the question's words in their name, headings and best passage (document-fields.ts),
 * with instant search's first document for the question as asked kept among the first three,
 * reranked when a rerank endpoint is configured, then paged.
 */
export class ClassicSearch {
  constructor(
    private readonly retrieval: Retrieval,
    private readonly planner: SearchPlanner,
    private readonly reranker: Reranker | null,
    private readonly logger: Logger,
  ) {}

  async run(scope: SearchScope, { query, filter, limit, offset }: ClassicRequest, signal?: AbortSignal): Promise<{ results: SearchResultView[]; plan: SearchPlan; reranking: RerankReport | null }> {
    const depth = offset + limit;
    const listDepth = Math.max(rerankDepth(this.reranker, depth), PLAN_LIST_DEPTH);
    // Each distinct query runs once: the planner's feedback probe is the primary query's own run.
    const runs = new Map<string, Promise<SearchResultView[]>>();
    const run = (text: string, strategy: RetrievalStrategy, planFilter: FilterGroup[]) => {
      const key = JSON.stringify([text, strategy, planFilter]);
      const known = runs.get(key);
      if (known) return known;
      const results = this.retrieval.retrieve(scope, { text, strategy, filter: bothFilters(filter, planFilter), limit: listDepth, offset: 0 }, signal);
      runs.set(key, results);
      results.catch(() => runs.get(key) === results && runs.delete(key));
      return results;
    };
    const probe = async (text: string, planFilter: FilterGroup[] = []) => (await run(text, 'hybrid', planFilter)).map((r) => ({ text: r.textualRepresentation, updatedAt: r.updatedAt }));
    const plan = await this.plan(scope, query, probe, signal);
    let planFilter = plan.filterGroups;
    let primary = run(plan.primaryQuery, plan.strategy, planFilter);
    if ((await primary).length === 0 && planFilter.length > 0) {
      // The filters read from the question excluded everything: they were probably misread.
      planFilter = [];
      primary = run(plan.primaryQuery, plan.strategy, planFilter);
    }
    const weight = VARIATION_WEIGHTS[plan.planner];
    // The question as asked, as instant search runs it (under the filters read from it), when the plan
    // changed its words: its first document stays on classic's first page (see below).
    const asked = plan.primaryQuery !== query ? run(query, 'hybrid', planFilter) : null;
    const lists = await Promise.all(
      [{ results: primary, weight: 1 }, ...plan.variations.map((text) => ({ results: run(text, plan.strategy, planFilter), weight }))].map(async (list) => ({
        results: await list.results,
        weight: list.weight,
        depth: listDepth,
      })),
    );
    const fused = rescoreByFields(plan.primaryQuery, fuseByScore(lists));
    // Classic never loses instant search's best guess: the question's own first document stays within
    // the first FIRST_KEPT_WITHIN, as the primary query's does. bench:docs dev: instant's first document
    // fell out of classic's ten for 4–13 questions of 245–278 per corpus; keeping it changed recall@10 and
    // MRR@10 by at most 0.001 (never the answer there, but a ranking below instant's at its top is the
    // loss users see; fusing the question's list at weight 0.25 or 0.5 moved recall@10 by −0.004 to +0.004).
    const instantFirst = asked ? (await asked)[0] : undefined;
    const refined = instantFirst ? keptWithin(fused, instantFirst, FIRST_KEPT_WITHIN) : fused;
    const { results, report } = await rerankResults(this.reranker, query, refined, signal);
    return { results: results.slice(offset, depth), plan, reranking: report };
  }

  private async plan(scope: SearchScope, question: string, probe: PlanningContext['probe'], signal?: AbortSignal): Promise<SearchPlan> {
    const context: PlanningContext = { sourceNames: scope.sourceNames, now: new Date(), probe };
    try {
      return await this.planner.plan(question, context, signal);
    } catch (error) {
      // The rule: a planner failure falls back to instant search, never to an error.
      this.logger.warn({ err: error instanceof Error ? error.message : String(error), collection: scope.collection.readableId }, 'search planner failed; running instant search');
      return { primaryQuery: question, variations: [], filterGroups: [], strategy: 'hybrid', planner: 'instant' };
    }
  }
}
