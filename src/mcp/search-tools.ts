import type { DocumentNode } from 'graphql';
import { z } from 'zod';
import type { GraphQLContext } from '../graphql/context.js';
import { operationError } from '../graphql/in-process-operation.js';
import { subscribeWhileCredentialsHold } from '../graphql/stream-credentials.js';
import { searchOperations } from '../rest/search.operations.js';
import { ValidationError } from '../shared/errors.js';
import { ToolGroup, toolError, toolResult, type ToolExtra } from './tool-kit.js';

/** A search result as the REST search returns it (one per document, shown by its best chunk). */
interface RestResult {
  entity_id: string;
  name: string;
  relevance_score: number;
  breadcrumbs: { name: string }[];
  textual_representation: string;
  web_url: string;
}

/** A REST agentic stream event (snake_case). */
type AgentEvent =
  | { type: 'started' | 'reranking' }
  | { type: 'thinking'; text: string | null; diagnostics: { iteration: number } }
  | { type: 'tool_call'; tool_name: string; diagnostics: { iteration: number; arguments: Record<string, unknown>; stats: Record<string, unknown> } }
  | { type: 'done'; results: RestResult[] }
  | { type: 'error'; message: string };

const SNIPPET_CHARS = 400;

const CONDITION = z.object({
  field: z
    .string()
    .describe(
      'entity_id, name, created_at, updated_at, breadcrumbs.entity_id, breadcrumbs.name, breadcrumbs.entity_type, service_system_metadata.entity_type, service_system_metadata.source_name, service_system_metadata.original_entity_id, service_system_metadata.chunk_index, service_system_metadata.sync_id, service_system_metadata.sync_job_id',
    ),
  operator: z.enum(['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal', 'in', 'not_in']),
  value: z.union([z.string(), z.number().int(), z.boolean(), z.array(z.string()), z.array(z.number().int())]).describe('A string, integer or boolean; a non-empty array with in and not_in. Dates as ISO 8601 strings.'),
});

/** Search over a collection in the three tiers, with the REST search's results. */
export class SearchTools extends ToolGroup {
  register(): void {
    const instant = this.compile('search', searchOperations.searchInstant!.document);
    const classic = this.compile('search', searchOperations.searchClassic!.document);
    const agentic = this.compile('search', searchOperations.searchAgenticStream!.document);
    this.tool(
      'search',
      {
        title: 'Search a collection',
        description: [
          'Searches one collection and returns documents (each at most once, best first), each with its best passage (textual_representation), relevance_score, breadcrumbs (where it sits), web_url and entity_id; read_document gives a whole document, browse its neighbours.',
          'Tiers: "instant" (default; fastest, the query matched directly with retrieval_strategy hybrid, semantic or keyword), "classic" (a planner rewrites the question into queries and filters first; better for natural-language questions), "agentic" (an agent searches, reads and navigates in several steps, reported as progress notifications; slowest, for hard questions).',
          'Filters: groups ORed, each a list of conditions ANDed.',
        ].join(' '),
        inputSchema: {
          collection: z.string().min(1).describe('Readable id of the collection (from list_collections).'),
          query: z.string().min(1).describe('What to look for: keywords or a question.'),
          tier: z.enum(['instant', 'classic', 'agentic']).default('instant'),
          retrieval_strategy: z.enum(['hybrid', 'semantic', 'keyword']).optional().describe('instant only: hybrid (default), semantic (meaning), keyword (exact words, BM25).'),
          filter: z.array(z.object({ conditions: z.array(CONDITION).min(1) })).optional().describe('Filter groups (ORed) of conditions (ANDed).'),
          limit: z.number().int().min(1).max(1000).optional().describe('Most documents to return (1 to 1000; default 10; agentic: omitted lets the agent decide).'),
          offset: z.number().int().min(0).optional().describe('instant and classic: documents to skip, to page.'),
          thinking: z.boolean().optional().describe('agentic only: ask the language model to reason before each step.'),
        },
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      },
      async (args, context, extra) => {
        const misplaced = [
          args.tier !== 'instant' && args.retrieval_strategy !== undefined ? 'retrieval_strategy applies to the instant tier only' : null,
          args.tier === 'agentic' && args.offset !== undefined ? 'offset does not apply to the agentic tier' : null,
          args.tier !== 'agentic' && args.thinking !== undefined ? 'thinking applies to the agentic tier only' : null,
        ].filter((issue): issue is string => issue !== null);
        if (misplaced.length) throw new ValidationError(misplaced.map((msg) => ({ loc: [], msg, type: 'value_error' })));
        const input = { query: args.query, filter: args.filter ?? null };
        if (args.tier === 'agentic') return this.agentic(agentic, args.collection, { ...input, limit: args.limit ?? null, thinking: args.thinking ?? null }, context, extra);
        const page = { ...input, limit: args.limit ?? 10, offset: args.offset ?? 0 };
        const data =
          args.tier === 'classic'
            ? await this.run<{ searchClassic: { results: RestResult[] } }>(classic, { readableId: args.collection, input: page }, context).then((d) => d.searchClassic)
            : await this.run<{ searchInstant: { results: RestResult[] } }>(instant, { readableId: args.collection, input: { ...page, retrievalStrategy: args.retrieval_strategy ?? 'hybrid' } }, context).then((d) => d.searchInstant);
        return resultsOf(data.results);
      },
    );
  }

  /**
   * The agentic stream run in-process: each event becomes a progress notification when the client
   * asked for progress, and the request's abort signal (the client cancelled, or left) closes the
   * stream, which stops the agent.
   */
  private async agentic(document: DocumentNode, readableId: string, input: Record<string, unknown>, context: GraphQLContext, extra: ToolExtra) {
    const stream = await subscribeWhileCredentialsHold({ schema: this.deps.schema, document, variableValues: { readableId, input }, contextValue: context });
    // A stream refused before it starts (rate limit, unknown collection, bad input…) always carries errors.
    if (!(Symbol.asyncIterator in stream)) throw operationError(stream) ?? new Error('Agentic search failed');
    const stop = () => void stream.return?.();
    extra.signal.addEventListener('abort', stop, { once: true });
    const progressToken = extra._meta?.progressToken;
    let step = 0;
    try {
      for await (const result of stream) {
        const failure = operationError(result);
        if (failure) throw failure;
        const event = searchOperations.searchAgenticStream!.respond(result.data as Record<string, unknown>) as AgentEvent;
        if (event.type === 'done') return resultsOf(event.results);
        if (event.type === 'error') return toolError(`Agentic search failed: ${event.message}. Try the classic tier.`);
        step++;
        if (progressToken !== undefined && !extra.signal.aborted) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step, message: describeStep(event) } });
        }
      }
      return toolError('Agentic search stopped before it returned results.');
    } finally {
      extra.signal.removeEventListener('abort', stop);
      stop();
    }
  }
}

function resultsOf(results: RestResult[]) {
  const lines = results.map((r, i) => {
    const path = r.breadcrumbs.map((b) => b.name).join(' / ');
    const snippet = r.textual_representation.length > SNIPPET_CHARS ? `${r.textual_representation.slice(0, SNIPPET_CHARS)}…` : r.textual_representation;
    return `${i + 1}. ${r.name} (entity_id ${r.entity_id}, score ${r.relevance_score.toFixed(4)})${path ? `\n   in ${path}` : ''}${r.web_url ? `\n   ${r.web_url}` : ''}\n   ${snippet.replace(/\s+/g, ' ')}`;
  });
  return toolResult({ results }, results.length ? `${results.length} document(s):\n${lines.join('\n')}` : 'No documents matched.');
}

function describeStep(event: Exclude<AgentEvent, { type: 'done' | 'error' }>): string {
  switch (event.type) {
    case 'started':
      return 'Agent started';
    case 'thinking':
      return `Step ${event.diagnostics.iteration}: ${event.text ? event.text.slice(0, 200) : 'choosing tools'}`;
    case 'tool_call':
      return `Step ${event.diagnostics.iteration}: ${event.tool_name} ${JSON.stringify(event.diagnostics.arguments).slice(0, 200)}`;
    case 'reranking':
      return 'Reranking the results';
  }
}
