import { tokenize } from '../../../platform/embeddings/word-vector-core.js';
import type { FilterCondition, FilterGroup } from '../../../platform/vectors/vector-index.js';
import { conditionHolds } from '../filter-rules.js';
import type { PlanningContext, ProbedDocument, SearchPlan, SearchPlanner } from './search-plan.js';

/**
 * Feedback documents and expansion terms of the pseudo-relevance feedback variation. SciFact train,
 * nDCG@10 of classic against its primary (hybrid) query, the variation weighing 0.05: 5 documents and
 * 6 terms −0.0013, 10 and 10 +0.0008, 10 and 15 +0.0014 (at 0.1: −0.0025, −0.0012, −0.0001).
 */
const FEEDBACK_DOCUMENTS = 10;
const EXPANSION_TERMS = 15;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAY_MS = 86_400_000;

/**
 * The planner used when no language model is configured. It reads explicit dates and source names
 * from the question into filters (removing those words from the query; a date only when the
 * documents' dates can answer it, see dateFilterHolds), drops the asking boilerplate
 * ("how do I", "what should I know about") from the primary query, and adds one variation by
 * pseudo-relevance feedback: the terms that stand out in the top results of the query (the relevance
 * model of RM3), which brings in documents that use other words for the same thing. The variation
 * holds the expansion terms alone: classic fusion weighs it against the primary query, which is RM3's
 * interpolation of the query with its relevance model, done on scores.
 */
export class HeuristicPlanner implements SearchPlanner {
  async plan(question: string, context: PlanningContext): Promise<SearchPlan> {
    const source = readSource(question, context);
    const undated = source ? source.rest : question;
    const conditions: FilterCondition[] = source ? [...source.conditions] : [];
    let query = undated;
    const date = readDateRange(undated, context);
    // A date read from the question filters only when the collection's dates can answer it; otherwise its words stay in the query.
    if (date && dateFilterHolds(date.conditions, await context.probe(primaryOf(undated), conditions.length ? [{ conditions: [...conditions] }] : []))) {
      conditions.push(...date.conditions);
      query = date.rest;
    }
    query = primaryOf(query) || question.trim();
    const filterGroups: FilterGroup[] = conditions.length ? [{ conditions }] : [];
    // The probe is the primary query's own run (same text, filters and strategy): no extra search.
    const variation = feedbackVariation(query, (await context.probe(query, filterGroups)).map((document) => document.text));
    const variations = variation ? [variation] : [];
    return { primaryQuery: query, variations, filterGroups, strategy: 'hybrid', planner: 'heuristic' };
  }
}

/** The pseudo-relevance feedback variation of a query from its top documents' texts (best first): its expansion terms, or null. */
export function feedbackVariation(query: string, feedback: string[]): string | null {
  const expansion = expansionTerms(query, feedback, { documents: FEEDBACK_DOCUMENTS, terms: EXPANSION_TERMS });
  return expansion.length > 0 ? expansion.join(' ') : null;
}

const primaryOf = (text: string) => withoutBoilerplate(text.replace(/\s+/g, ' ').trim());

/**
 * Least spread of the candidates' dates for a date filter to mean anything: documents whose dates all
 * fall within a day were most likely written by one copy or import (files copied, a dump restored),
 * and their dates say when that happened, not when the content was written.
 */
const MEANINGFUL_DATE_SPREAD_MS = DAY_MS;

/**
 * Whether a date filter read from the question holds on the documents the question finds without it
 * (`candidates`, best first): their dates must spread over more than a day, and the filter must keep
 * at least one of them. Otherwise the filter would empty the results or select by copy time.
 */
export function dateFilterHolds(conditions: FilterCondition[], candidates: ProbedDocument[]): boolean {
  const dates = candidates.flatMap(({ updatedAt }) => (updatedAt ? [updatedAt.getTime()] : []));
  if (dates.length < 2 || Math.max(...dates) - Math.min(...dates) < MEANINGFUL_DATE_SPREAD_MS) return false;
  return dates.some((time) => conditions.every((condition) => conditionHolds(new Date(time), condition)));
}

/**
 * The ways of asking that carry no topic, at the start of a question: "how do I", "what should I know
 * about", "where do the docs cover", "tell me about", "is there a way to", "can you"… They match
 * documents that happen to say "know", "docs" or "tell", not the ones about the topic.
 */
const BOILERPLATE = [
  /^(?:please\s+)?(?:tell|show|teach)\s+me\s+(?:more\s+)?(?:about\s+)?/i,
  /^(?:what|which)\s+(?:should|do|must|would|can)\s+(?:i|we|you|one)\s+(?:need\s+to\s+)?(?:know|read|learn)\s+(?:about\s+)?/i,
  /^(?:where|which\s+(?:page|section|document|file)s?)\s+(?:do|does|can|could|would|will)\s+(?:the\s+)?(?:docs?|documentation|manual|guides?|pages?|handbook)\s+(?:cover|describe|explain|discuss|mention|document|talk\s+about|say\s+about)\s+/i,
  /^where\s+(?:can|do|could|should|would)\s+(?:i|we|you|one)\s+(?:find|read|learn|look\s+up)\s+(?:more\s+)?(?:about\s+)?/i,
  /^(?:where\s+is\s+it|which\s+(?:page|section|document|file)\s+(?:is\s+it\s+)?)\s*(?:says?|said|explain(?:s|ed)?|describe[sd]?|document(?:s|ed)?|mention(?:s|ed)?)\s+(?:that\s+)?/i,
  /^(?:how|where|when|why)\s+(?:do|does|can|could|should|would|must|might)\s+(?:i|we|you|one)\s+(?:go\s+about\s+)?/i,
  /^how\s+to\s+/i,
  /^(?:is|are)\s+there\s+(?:a|any)\s+(?:way|ways|option|options)\s+to\s+/i,
  /^i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+(?:know\s+(?:about\s+)?)?/i,
  /^(?:what|who)\s+(?:is|are|was|were)\s+/i,
];

/**
 * A request for an explanation ("explain …", "can you describe …"): boilerplate only as the request
 * itself. After "how do I" the same verb is the topic ("how do I summarize git log output" asks for
 * the command that summarizes).
 */
const REQUEST = /^(?:please\s+)?(?:explain|describe|summari[sz]e)\s+/i;
const POLITE = /^(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?/i;

/** The question without its asking boilerplate and final punctuation (empty when nothing else is left). */
export function withoutBoilerplate(question: string): string {
  const strip = (text: string, pattern: RegExp) => {
    const next = text.replace(pattern, '').trim();
    return next === '' ? text : next;
  };
  let rest = strip(strip(question.trim(), POLITE), REQUEST);
  for (let changed = true; changed; ) {
    changed = false;
    for (const pattern of BOILERPLATE) {
      const next = strip(rest, pattern);
      if (next !== rest) {
        rest = next;
        changed = true;
      }
    }
  }
  return rest.replace(/[?!.]+$/, '').trim();
}

/**
 * Terms frequent in the top `documents` feedback texts (best first), weighted by rank and by how many
 * of them share the term, minus the query's own: the `terms` best.
 */
export function expansionTerms(query: string, feedback: string[], { documents = 5, terms = 6 }: { documents?: number; terms?: number } = {}): string[] {
  const own = new Set(tokenize(query));
  const weight = new Map<string, number>();
  feedback.slice(0, documents).forEach((text, rank) => {
    const tokens = tokenize(text).filter((t) => t.length > 2 && !/^\d+$/.test(t) && !own.has(t));
    if (tokens.length === 0) return;
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    // Higher-ranked documents count more; within one, a term's share of its length.
    const documentWeight = 1 / (rank + 1);
    for (const [token, count] of counts) weight.set(token, (weight.get(token) ?? 0) + documentWeight * (count / tokens.length) + documentWeight * 0.01);
  });
  // Only terms two feedback documents agree on: one document's quirks are not the topic.
  const shared = new Map<string, number>();
  for (const text of feedback.slice(0, documents)) for (const token of new Set(tokenize(text))) shared.set(token, (shared.get(token) ?? 0) + 1);
  return [...weight]
    .filter(([token]) => (shared.get(token) ?? 0) >= 2)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, terms)
    .map(([token]) => token);
}

interface Found {
  conditions: FilterCondition[];
  rest: string;
}

/** "since 2023", "after 2024-03-01", "before March 2022", "in 2021", "last 30 days", "this year". */
export function readDateRange(question: string, context: Pick<PlanningContext, 'now'>): Found | null {
  const now = context.now;
  const month = `(${MONTHS.join('|')})`;
  const date = `(\\d{4}-\\d{2}-\\d{2}|${month}\\s+\\d{4}|\\d{4})`;
  const patterns: [RegExp, (m: RegExpMatchArray) => FilterCondition[]][] = [
    [new RegExp(`\\b(?:since|after|from)\\s+${date}\\b`, 'i'), (m) => [{ field: 'updated_at', operator: 'greater_than_or_equal', value: start(m[1]!) }]],
    [new RegExp(`\\bbefore\\s+${date}\\b`, 'i'), (m) => [{ field: 'updated_at', operator: 'less_than', value: start(m[1]!) }]],
    [new RegExp(`\\b(?:in|during)\\s+(${month}\\s+\\d{4}|(?:19|20)\\d{2})\\b`, 'i'), (m) => [
      { field: 'updated_at', operator: 'greater_than_or_equal', value: start(m[1]!) },
      { field: 'updated_at', operator: 'less_than', value: end(m[1]!) },
    ]],
    [/\b(?:in the )?(?:last|past)\s+(\d{1,4})\s+(day|week|month|year)s?\b/i, (m) => [
      { field: 'updated_at', operator: 'greater_than_or_equal', value: new Date(now.getTime() - Number(m[1]) * unitDays(m[2]!) * DAY_MS).toISOString() },
    ]],
    [/\b(?:this|current)\s+year\b/i, () => [{ field: 'updated_at', operator: 'greater_than_or_equal', value: `${now.getUTCFullYear()}-01-01T00:00:00.000Z` }]],
  ];
  for (const [pattern, toConditions] of patterns) {
    const match = question.match(pattern);
    if (match) return { conditions: toConditions(match), rest: question.replace(match[0], ' ') };
  }
  return null;
}

/** "from local_folder", "in postgresql", "on git": a source of the collection named in the question. */
export function readSource(question: string, context: Pick<PlanningContext, 'sourceNames'>): Found | null {
  for (const name of context.sourceNames) {
    const spelled = name.replace(/_/g, '[ _]');
    const match = question.match(new RegExp(`\\b(?:from|in|on|within)\\s+(?:the\\s+)?${spelled}\\b`, 'i'));
    if (match) return { conditions: [{ field: 'service_system_metadata.source_name', operator: 'equals', value: name }], rest: question.replace(match[0], ' ') };
  }
  return null;
}

function unitDays(unit: string): number {
  return { day: 1, week: 7, month: 30, year: 365 }[unit.toLowerCase() as 'day'];
}

/** First instant of a year, a month ("March 2022") or a day. */
function start(value: string): string {
  const [year, month] = parts(value);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return new Date(`${value}T00:00:00.000Z`).toISOString();
  return new Date(Date.UTC(year, month ?? 0, 1)).toISOString();
}

/** First instant after the year or month. */
function end(value: string): string {
  const [year, month] = parts(value);
  return month === undefined ? new Date(Date.UTC(year + 1, 0, 1)).toISOString() : new Date(Date.UTC(year, month + 1, 1)).toISOString();
}

function parts(value: string): [number, number | undefined] {
  const named = value.match(new RegExp(`^(${MONTHS.join('|')})\\s+(\\d{4})$`, 'i'));
  if (named) return [Number(named[2]), MONTHS.indexOf(named[1]!.toLowerCase())];
  return [Number(value.slice(0, 4)), undefined];
}
