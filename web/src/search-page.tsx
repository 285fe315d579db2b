import { useEffect, useRef, useState, type FormEvent } from 'react';
import {
  AgenticSearchDocument,
  SearchClassicDocument,
  SearchInstantDocument,
  type AgenticSearchSubscription,
  type FilterConditionInput,
  type ResultFieldsFragment,
  type RetrievalStrategy,
  type SearchClassicQuery,
} from './generated';
import { asApiError, ErrorNote, Section, useApi } from './ui';
import type { ApiError } from './api';

const TIERS = ['instant', 'classic', 'agentic'] as const;
type Tier = (typeof TIERS)[number];
const STRATEGIES: RetrievalStrategy[] = ['hybrid', 'semantic', 'keyword'];
type AgentEvent = AgenticSearchSubscription['agenticSearch'];

/** The fields and operators the search filter accepts (the interface spec's list). */
const FILTER_FIELDS = [
  'entity_id',
  'name',
  'created_at',
  'updated_at',
  'breadcrumbs.entity_id',
  'breadcrumbs.name',
  'breadcrumbs.entity_type',
  'service_system_metadata.entity_type',
  'service_system_metadata.source_name',
  'service_system_metadata.original_entity_id',
  'service_system_metadata.chunk_index',
  'service_system_metadata.sync_id',
  'service_system_metadata.sync_job_id',
];
const OPERATORS = ['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal', 'in', 'not_in'];

interface Condition {
  /** Stable across edits and removals, for React's list keys. */
  key: number;
  field: string;
  operator: string;
  value: string;
}

/** A typed value: lists for in/not_in (comma-separated), numbers where they parse, text otherwise. */
function conditionInput({ field, operator, value }: Condition): FilterConditionInput {
  const scalar = (text: string) => (text.trim() !== '' && !Number.isNaN(Number(text)) && field.endsWith('chunk_index') ? Number(text) : text.trim());
  return { field, operator, value: operator === 'in' || operator === 'not_in' ? value.split(',').map(scalar) : scalar(value) };
}

function describe(event: AgentEvent): string {
  switch (event.__typename) {
    case 'AgentStartedEvent':
      return `started: “${event.query}”`;
    case 'AgentThinkingEvent':
      return `thinking (${event.durationMs} ms)${event.thinking ? `: ${event.thinking}` : event.text ? `: ${event.text}` : ''}`;
    case 'AgentToolCallEvent':
      return `tool call: ${event.toolName} (${event.durationMs} ms)`;
    case 'AgentRerankingEvent':
      return `reranking (${event.durationMs} ms)`;
    case 'AgentDoneEvent':
      return `done: ${event.results.length} results in ${event.durationMs} ms`;
    case 'AgentErrorEvent':
      return `error: ${event.message}`;
  }
}

function Results({ results }: { results: ResultFieldsFragment[] }) {
  if (results.length === 0) return <p>No results.</p>;
  return (
    <ol className="results" aria-label="Results">
      {results.map((result) => (
        <li key={result.entityId} className="result">
          <nav aria-label="Breadcrumbs" className="crumbs">
            {[result.serviceSystemMetadata.sourceName, ...result.breadcrumbs.map((b) => b.name)].join(' › ')}
          </nav>
          <h3>
            {result.webUrl ? (
              <a href={result.webUrl} target="_blank" rel="noreferrer noopener">
                {result.name}
              </a>
            ) : (
              result.name
            )}{' '}
            <span className="muted">
              {result.serviceSystemMetadata.entityType} · score {result.relevanceScore.toFixed(3)}
            </span>
          </h3>
          <p className="passage">{result.textualRepresentation.slice(0, 600)}</p>
        </li>
      ))}
    </ol>
  );
}

export function SearchPage({ readableId }: { readableId: string }) {
  const api = useApi();
  const [tier, setTier] = useState<Tier>('instant');
  const [strategy, setStrategy] = useState<RetrievalStrategy>('hybrid');
  const [query, setQuery] = useState('');
  const [thinking, setThinking] = useState(false);
  const [conditions, setConditions] = useState<Condition[]>([]);
  const [results, setResults] = useState<ResultFieldsFragment[] | null>(null);
  const [plan, setPlan] = useState<SearchClassicQuery['searchClassic']['plan'] | null>(null);
  const [events, setEvents] = useState<AgentEvent[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const stopAgent = useRef<(() => void) | null>(null);
  useEffect(() => () => stopAgent.current?.(), []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    stopAgent.current?.();
    setError(null);
    setResults(null);
    setPlan(null);
    setEvents([]);
    const filter = conditions.length ? [{ conditions: conditions.map(conditionInput) }] : null;
    setRunning(true);
    try {
      if (tier === 'instant') {
        setResults((await api.request(SearchInstantDocument, { readableId, input: { query, filter, retrievalStrategy: strategy } })).searchInstant.results);
      } else if (tier === 'classic') {
        const { searchClassic } = await api.request(SearchClassicDocument, { readableId, input: { query, filter } });
        setPlan(searchClassic.plan);
        setResults(searchClassic.results);
      } else {
        stopAgent.current = api.subscribe(
          AgenticSearchDocument,
          { readableId, input: { query, filter, thinking } },
          {
            next: ({ agenticSearch }) => {
              setEvents((seen) => [...seen, agenticSearch]);
              if (agenticSearch.__typename === 'AgentDoneEvent') setResults(agenticSearch.results);
            },
            error: (failure) => (setError(failure), setRunning(false)),
            done: () => setRunning(false),
          },
        );
        return;
      }
    } catch (failure) {
      setError(asApiError(failure));
    }
    setRunning(false);
  };

  const setCondition = (index: number, change: Partial<Condition>) => setConditions(conditions.map((c, i) => (i === index ? { ...c, ...change } : c)));

  return (
    <>
      <p className="crumbs">
        <a href="#/">Collections</a> / <a href={`#/collections/${encodeURIComponent(readableId)}`}>{readableId}</a> / Search
      </p>
      <h1>Search {readableId}</h1>
      <Section title="Query">
        <form onSubmit={submit} aria-label="Search">
          <div className="inline">
            <label htmlFor="query">Query</label>
            <input id="query" type="search" required value={query} onChange={(e) => setQuery(e.target.value)} />
            <label htmlFor="tier">Tier</label>
            <select id="tier" value={tier} onChange={(e) => setTier(e.target.value as Tier)}>
              {TIERS.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
            {tier === 'instant' && (
              <>
                <label htmlFor="strategy">Strategy</label>
                <select id="strategy" value={strategy} onChange={(e) => setStrategy(e.target.value as RetrievalStrategy)}>
                  {STRATEGIES.map((s) => (
                    <option key={s}>{s}</option>
                  ))}
                </select>
              </>
            )}
            {tier === 'agentic' && (
              <label>
                <input type="checkbox" checked={thinking} onChange={(e) => setThinking(e.target.checked)} /> show the model's thinking
              </label>
            )}
            <button type="submit" disabled={running}>
              Search
            </button>
            {running && tier === 'agentic' && (
              <button type="button" onClick={() => (stopAgent.current?.(), setRunning(false))}>
                Stop
              </button>
            )}
          </div>
          <fieldset>
            <legend>Filter (all conditions must hold)</legend>
            {conditions.map((condition, index) => (
              <div className="inline" key={condition.key}>
                <label htmlFor={`filter-field-${index}`}>Field</label>
                <select id={`filter-field-${index}`} value={condition.field} onChange={(e) => setCondition(index, { field: e.target.value })}>
                  {FILTER_FIELDS.map((f) => (
                    <option key={f}>{f}</option>
                  ))}
                </select>
                <label htmlFor={`filter-operator-${index}`}>Operator</label>
                <select id={`filter-operator-${index}`} value={condition.operator} onChange={(e) => setCondition(index, { operator: e.target.value })}>
                  {OPERATORS.map((o) => (
                    <option key={o}>{o}</option>
                  ))}
                </select>
                <label htmlFor={`filter-value-${index}`}>Value</label>
                <input id={`filter-value-${index}`} value={condition.value} onChange={(e) => setCondition(index, { value: e.target.value })} />
                <button type="button" onClick={() => setConditions(conditions.filter((_, i) => i !== index))}>
                  Remove
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setConditions([...conditions, { key: Date.now() + Math.random(), field: 'name', operator: 'contains', value: '' }])}>
              Add condition
            </button>
          </fieldset>
        </form>
      </Section>
      <ErrorNote error={error} />
      {plan && (
        <p className="plan">
          Plan ({plan.planner}, {plan.strategy}): “{plan.primaryQuery}”{plan.variations.length > 0 && ` + ${plan.variations.map((v) => `“${v}”`).join(', ')}`}
        </p>
      )}
      {events.length > 0 && (
        <Section title="Agent steps">
          <ol className="agent-steps" aria-live="polite">
            {events.map((event, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the steps only grow, in order; the index is each one's place
              <li key={index} data-event={event.__typename}>
                {describe(event)}
              </li>
            ))}
          </ol>
        </Section>
      )}
      {results && (
        <Section title={`Results (${results.length})`}>
          <Results results={results} />
        </Section>
      )}
    </>
  );
}
