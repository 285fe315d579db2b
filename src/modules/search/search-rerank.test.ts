import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { HttpReranker } from '../../platform/rerank/http-reranker.js';
import { sharedWordCount, startFakeRerankServer, type FakeRerankServer } from '../../../test/support/fake-rerank-server.js';
import type { AgentEvent } from './agentic/agent-events.js';
import { AgenticSearch } from './agentic/agentic-search.js';
import { ClassicSearch } from './classic/classic-search.js';
import { HeuristicPlanner } from './classic/heuristic-planner.js';
import { InstantSearch } from './instant-search.js';
import type { SearchScope } from './retrieval.js';
import type { SearchResultView } from './search-result.js';
import { openTiers, quietLogger } from './search-tiers.fixture.js';

/**
 * The rerank endpoint applied to hybrid, classic and agentic results, against a local server speaking
 * TEI's POST /rerank (its score: how many of the query's words a document holds). A failure or a
 * timeout leaves the order as it was.
 */
const QUERY = 'osprey nesting cliff';
const ids = (results: SearchResultView[]) => results.map((r) => r.entityId);

let server: FakeRerankServer;
let tiers: Awaited<ReturnType<typeof openTiers>>;
let scope: SearchScope;
beforeAll(async () => {
  server = await startFakeRerankServer();
  tiers = await openTiers();
  scope = await tiers.collection([
    // BM25 loves a.md (the rare word, four times); the reranker prefers whoever holds more of the query's words.
    { id: 'a.md', name: 'first', chunks: ['osprey osprey osprey osprey'] },
    { id: 'b.md', name: 'second', chunks: ['an osprey nesting high on a cliff above the sea, seen every spring by the survey team'] },
    { id: 'c.md', name: 'third', chunks: ['nesting on the cliff, the colony returns every spring to the same ledges and crevices'] },
    { id: 'd.md', name: 'fourth', chunks: ['a heron fishing in the river'] },
  ]);
});
afterAll(async () => {
  await tiers?.close();
  await server?.close();
});

function withReranker(timeoutMs = 2000) {
  const reranker = new HttpReranker({ url: server.teiUrl, protocol: 'tei', timeoutMs, topK: 50, batchSize: 32, maxDocumentChars: 2000, logger: quietLogger });
  const classic = new ClassicSearch(tiers.retrieval, new HeuristicPlanner(), reranker, quietLogger);
  return {
    instant: (limit = 10, offset = 0) => new InstantSearch(tiers.retrieval, reranker).run(scope, { query: QUERY, strategy: 'hybrid', filter: [], limit, offset }),
    classic: async () => (await classic.run(scope, { query: QUERY, filter: [], limit: 10, offset: 0 })).results,
    agentic: (emit: (event: AgentEvent) => void = () => undefined) =>
      new AgenticSearch(tiers.retrieval, null as never, null, classic, { maxIterations: 12, timeoutMs: 10_000 }, quietLogger).run(scope, { query: QUERY, limit: null, thinking: false, filter: [] }, emit, new AbortController().signal),
  };
}
const unreranked = {
  instant: () => new InstantSearch(tiers.retrieval, null).run(scope, { query: QUERY, strategy: 'hybrid', filter: [], limit: 10, offset: 0 }),
  classic: async () => (await tiers.classic.run(scope, { query: QUERY, filter: [], limit: 10, offset: 0 })).results,
  agentic: () => tiers.agentic.run(scope, { query: QUERY, limit: null, thinking: false, filter: [] }, () => undefined, new AbortController().signal),
};
const TIERS = ['instant', 'classic', 'agentic'] as const;

describe('rerank endpoint on hybrid, classic and agentic results', () => {
  test('success: the documents come in the reranker’s order, scores still descending; pages cut from the reranked list', async () => {
    server.mode = 'ok';
    const reranked = withReranker();
    for (const tier of TIERS) {
      const before = await unreranked[tier]();
      // Instant's BM25 puts a.md first; classic's second stage (and the agent, which ranks as classic) already prefers b.md, which names every word.
      expect(before[0]!.entityId).toBe(tier === 'instant' ? 'a.md' : 'b.md');
      const results = await reranked[tier]();
      const byWords = [...before].sort((x, y) => sharedWordCount(QUERY, `${y.name}\n${y.textualRepresentation}`) - sharedWordCount(QUERY, `${x.name}\n${x.textualRepresentation}`));
      expect([tier, ids(results)]).toEqual([tier, ids(byWords)]);
      expect(results[0]!.entityId).toBe('b.md');
      const scores = results.map((r) => r.relevanceScore);
      expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    }
    const pages = [...(await reranked.instant(1, 0)), ...(await reranked.instant(1, 1)), ...(await reranked.instant(2, 2))];
    expect(ids(pages)).toEqual(ids(await reranked.instant()));
    expect(server.requests.at(-1)).toMatchObject({ path: '/rerank', protocol: 'tei', query: QUERY });
  });

  test('failure: an error status leaves every tier’s own order', async () => {
    server.mode = { status: 503 };
    const reranked = withReranker();
    for (const tier of TIERS) expect([tier, ids(await reranked[tier]())]).toEqual([tier, ids(await unreranked[tier]())]);
  });

  test('timeout: a reranker that never answers leaves the order, within the timeout', async () => {
    server.mode = 'hang';
    const reranked = withReranker(200);
    for (const tier of TIERS) {
      const started = Date.now();
      const results = await reranked[tier]();
      expect(Date.now() - started).toBeLessThan(3000);
      expect([tier, ids(results)]).toEqual([tier, ids(await unreranked[tier]())]);
    }
    server.mode = 'ok';
  });

  test('the agentic stream reports a reranking event before done when the endpoint reordered the results, none when it failed', async () => {
    const events = async () => {
      const seen: AgentEvent[] = [];
      await withReranker(200).agentic((event) => seen.push(event));
      return seen;
    };
    server.mode = 'ok';
    const ok = await events();
    const types = ok.map((event) => event.type);
    expect(types.indexOf('reranking')).toBe(types.length - 2);
    expect(types.at(-1)).toBe('done');
    const reranking = ok.find((event) => event.type === 'reranking')!;
    const done = ok.at(-1) as Extract<AgentEvent, { type: 'done' }>;
    // The four documents were collected and all went to the endpoint; its scores are how many query words each holds.
    expect(reranking).toMatchObject({ type: 'reranking', diagnostics: { inputCount: done.results.length, outputCount: done.results.length, model: null } });
    const scores = done.results.map((r) => sharedWordCount(QUERY, `${r.name}\n${r.textualRepresentation}`));
    expect(reranking).toMatchObject({ diagnostics: { topRelevanceScore: Math.max(...scores), bottomRelevanceScore: Math.min(...scores) } });
    expect((reranking as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0);
    for (const mode of [{ status: 503 }, 'hang'] as const) {
      server.mode = mode;
      const failed = await events();
      expect(failed.map((event) => event.type)).not.toContain('reranking');
      expect(failed.at(-1)!.type).toBe('done');
    }
    server.mode = 'ok';
  });
});
