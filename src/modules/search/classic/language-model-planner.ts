import type { LanguageModel } from '../../../platform/llm/language-model.js';
import type { FilterGroup } from '../../../platform/vectors/vector-index.js';
import { filterIssues } from '../filter-rules.js';
import type { RetrievalStrategy } from '../search-result.js';
import type { PlanningContext, SearchPlan, SearchPlanner } from './search-plan.js';

const FILTER_FIELDS = [
  'entity_id', 'name', 'created_at', 'updated_at', 'breadcrumbs.entity_id', 'breadcrumbs.name', 'breadcrumbs.entity_type',
  'service_system_metadata.entity_type', 'service_system_metadata.source_name', 'service_system_metadata.original_entity_id',
  'service_system_metadata.chunk_index',
];

/** Structured output the model must produce (strict-mode friendly: every property required). */
const PLAN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['primary_query', 'variations', 'filter_groups', 'strategy'],
  properties: {
    primary_query: { type: 'string', description: 'The question rewritten as a search query (keywords and key phrases).' },
    variations: { type: 'array', maxItems: 4, items: { type: 'string' }, description: 'Up to 4 alternative phrasings: synonyms, expansions, related terms.' },
    filter_groups: {
      type: 'array',
      description: 'Only filters the question states explicitly (dates, sources, types). Conditions in a group are ANDed; groups ORed. Empty when none.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['conditions'],
        properties: {
          conditions: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['field', 'operator', 'value'],
              properties: {
                field: { type: 'string', enum: FILTER_FIELDS },
                operator: { type: 'string', enum: ['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal', 'in', 'not_in'] },
                value: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }] },
              },
            },
          },
        },
      },
    },
    strategy: { type: 'string', enum: ['semantic', 'keyword', 'hybrid'], description: 'hybrid unless the query is an exact identifier (keyword) or purely conceptual (semantic).' },
  },
} as const;

interface ModelPlan {
  primary_query: string;
  variations: string[];
  filter_groups: FilterGroup[];
  strategy: RetrievalStrategy;
}

/** A language model writes the plan (structured output). Errors propagate: the caller falls back to instant search. */
export class LanguageModelPlanner implements SearchPlanner {
  constructor(private readonly model: LanguageModel) {}

  async plan(question: string, context: PlanningContext, signal?: AbortSignal): Promise<SearchPlan> {
    const { object } = await this.model.generateObject<ModelPlan>({
      system:
        'You turn a user question into a search plan for a hybrid (BM25 + vector) search engine over a document collection. ' +
        `Sources in this collection: ${context.sourceNames.join(', ') || 'unknown'}. Today is ${context.now.toISOString().slice(0, 10)}. ` +
        'Dates in filters are ISO 8601 strings. Add filters only when the question explicitly asks for them.',
      prompt: question,
      schema: PLAN_SCHEMA,
      signal,
    });
    const primaryQuery = typeof object?.primary_query === 'string' && object.primary_query.trim() ? object.primary_query.trim() : question;
    const variations = Array.isArray(object?.variations) ? object.variations.filter((v): v is string => typeof v === 'string' && v.trim() !== '').slice(0, 4) : [];
    // A filter the model got wrong is dropped rather than failing the search or being half-applied.
    const groups = Array.isArray(object?.filter_groups) ? object.filter_groups : [];
    const filterGroups = filterIssues(groups).length === 0 ? groups : [];
    const strategy = (['semantic', 'keyword', 'hybrid'] as const).includes(object?.strategy) ? object.strategy : 'hybrid';
    return { primaryQuery, variations, filterGroups, strategy, planner: 'language_model' };
  }
}
