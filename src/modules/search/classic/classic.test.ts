import { describe, expect, test } from '@jest/globals';
import type { FilterCondition, FilterGroup } from '../../../platform/vectors/vector-index.js';
import type { Retrieval, RetrieveRequest, SearchScope } from '../retrieval.js';
import type { SearchResultView } from '../search-result.js';
import { ClassicSearch } from './classic-search.js';
import { HeuristicPlanner, dateFilterHolds, expansionTerms, withoutBoilerplate } from './heuristic-planner.js';
import { fuseByScore } from './score-fusion.js';
import type { PlanningContext, ProbedDocument } from './search-plan.js';

function hit(entityId: string, score: number, chunkIndex = 0, text = `${entityId} chunk ${chunkIndex}`): SearchResultView {
  return {
    entityId,
    name: entityId,
    relevanceScore: score,
    breadcrumbs: [],
    createdAt: null,
    updatedAt: null,
    textualRepresentation: text,
    serviceSystemMetadata: { sourceName: 'stub', entityType: 'Doc', chunkIndex, originalEntityId: entityId, syncId: 'c1', syncJobId: 'j1' },
    access: { viewers: null, isPublic: null },
    webUrl: '',
    url: null,
    rawSourceFields: {},
  };
}
const ids = (results: SearchResultView[]) => results.map((r) => `${r.entityId}#${r.serviceSystemMetadata.chunkIndex}`);

describe('fuseByScore', () => {
  test('one list passes through unchanged', () => {
    const list = [hit('a', 3), hit('b', 1)];
    expect(fuseByScore([{ results: list, weight: 1, depth: 10 }])).toBe(list);
    expect(fuseByScore([{ results: list, weight: 1, depth: 10 }, { results: [], weight: 0.5, depth: 10 }])).toBe(list);
  });

  test('scores are divided by each list’s best, so a list on a larger scale does not dominate', () => {
    // The variation's scores are 10× larger; at weight 0.5 it may only reorder what follows the primary's best.
    const primary = [hit('z', 2.0), hit('a', 1.0), hit('b', 0.95), hit('c', 0.5)];
    const variation = [hit('b', 20), hit('c', 19), hit('a', 2)];
    const fused = fuseByScore([
      { results: primary, weight: 1, depth: 10 },
      { results: variation, weight: 0.5, depth: 10 },
    ]);
    // z: 1; a: 0.5 + 0.5·0.1 = 0.55; b: 0.475 + 0.5 = 0.975; c: 0.25 + 0.5·0.95 = 0.725
    expect(ids(fused)).toEqual(['z#0', 'b#0', 'c#0', 'a#0']);
    expect(fused.map((r) => r.relevanceScore)).toEqual([1, 0.975, 0.725, 0.55].map((x) => expect.closeTo(x, 10)));
  });

  test('a document missing from a cut list gets its last value; from a complete list, nothing', () => {
    const primary = [hit('z', 1.0), hit('a', 0.5), hit('b', 0.45)];
    const cut = [hit('c', 1.0), hit('b', 0.8)];
    // Cut (depth 2 reached): a gets 0.8 from the variation → 0.5 + 0.8·w; complete (depth 10): a gets 0.
    const weight = 0.3;
    const fromCut = fuseByScore([{ results: primary, weight: 1, depth: 10 }, { results: cut, weight, depth: 2 }]);
    expect(fromCut.find((r) => r.entityId === 'a')!.relevanceScore).toBeCloseTo(0.5 + 0.8 * weight, 10);
    const fromComplete = fuseByScore([{ results: primary, weight: 1, depth: 10 }, { results: cut, weight, depth: 10 }]);
    expect(fromComplete.find((r) => r.entityId === 'a')!.relevanceScore).toBeCloseTo(0.5, 10);
    // c is only in the variation; the primary was complete: 0 + 1·w.
    expect(fromComplete.find((r) => r.entityId === 'c')!.relevanceScore).toBeCloseTo(weight, 10);
  });

  test('each document once, shown by its result in the list where it counted most; another connection’s entity is another document', () => {
    const primary = [hit('a', 1.0, 0), hit('b', 0.9, 0)];
    const variation = [hit('a', 1.0, 3), hit('b', 0.1, 2)];
    const fused = fuseByScore([
      { results: primary, weight: 1, depth: 10 },
      { results: variation, weight: 0.5, depth: 10 },
    ]);
    expect(ids(fused)).toEqual(['a#0', 'b#0']);
    expect(fused[0]!.relevanceScore).toBeCloseTo(1.5, 10);
    // Shown by the variation's chunk when the variation counts more for it.
    const heavy = fuseByScore([{ results: primary, weight: 0.1, depth: 10 }, { results: variation, weight: 1, depth: 10 }]);
    expect(ids(heavy)).toEqual(['a#3', 'b#2']);
    const other = { ...hit('a', 5), serviceSystemMetadata: { ...hit('a', 5).serviceSystemMetadata, syncId: 'c2' } };
    const two = fuseByScore([{ results: [hit('a', 1)], weight: 1, depth: 10 }, { results: [other], weight: 1, depth: 10 }]);
    expect(two).toHaveLength(2);
  });

  test('the primary list’s first document stays first, whatever the variations say', () => {
    const primary = [hit('a', 1.0), hit('b', 0.99), hit('c', 0.98)];
    // b and c lead every variation: fused, both beat a; a is still first.
    const variations = [0, 1, 2].map(() => ({ results: [hit('b', 1), hit('c', 1), hit('a', 0.01)], weight: 1, depth: 3 }));
    const fused = fuseByScore([{ results: primary, weight: 1, depth: 10 }, ...variations]);
    expect(ids(fused)).toEqual(['a#0', 'b#0', 'c#0']);
    const scores = fused.map((r) => r.relevanceScore);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
  });
});

describe('heuristic planner', () => {
  const feedback = [
    'platypus monotreme egg laying mammal river',
    'platypus monotreme venom spur mammal',
    'echidna monotreme mammal egg',
    'river otter mammal',
  ];

  test('expansion terms come from several feedback documents, never the query’s own words', () => {
    const terms = expansionTerms('platypus sighting', feedback);
    expect(terms).toContain('monotreme');
    expect(terms).toContain('mammal');
    expect(terms).not.toContain('platypus');
    expect(terms).not.toContain('venom'); // one document only
    expect(expansionTerms('platypus sighting', feedback, { terms: 1 })).toHaveLength(1);
    expect(expansionTerms('platypus sighting', feedback, { documents: 1 })).toEqual([]);
  });

  /** Feedback documents dated across 2023–2025 (one per year, in turn). */
  const dated = (years = [2023, 2024, 2025]) => feedback.map((text, i) => ({ text, updatedAt: new Date(Date.UTC(years[i % years.length]!, 5, 1)) }));
  const planning = (documents: () => ProbedDocument[]) => {
    const probes: [string, FilterGroup[] | undefined][] = [];
    const context: PlanningContext = {
      sourceNames: ['local_folder'],
      now: new Date('2026-06-15T00:00:00Z'),
      probe: async (text, filterGroups) => {
        probes.push([text, filterGroups]);
        return documents();
      },
    };
    return { context, probes };
  };
  const sourceGroup = { field: 'service_system_metadata.source_name', operator: 'equals', value: 'local_folder' };

  test('the asking boilerplate goes; a verb asked about after "how do I" stays', () => {
    expect(withoutBoilerplate('How do I summarize git log output?')).toBe('summarize git log output');
    expect(withoutBoilerplate('How can I describe a table?')).toBe('describe a table');
    expect(withoutBoilerplate('Please explain write-ahead logging.')).toBe('write-ahead logging');
    expect(withoutBoilerplate('Can you describe how vacuum works?')).toBe('how vacuum works');
    expect(withoutBoilerplate('Could you tell me about unique constraints?')).toBe('unique constraints');
    expect(withoutBoilerplate('What should I know about unique constraints?')).toBe('unique constraints');
    expect(withoutBoilerplate('Is there a way to define a new table?')).toBe('define a new table');
    expect(withoutBoilerplate('Where is it explained that the index is rebuilt?')).toBe('the index is rebuilt');
    expect(withoutBoilerplate('Which page says that vacuum reclaims space?')).toBe('vacuum reclaims space');
    // Nothing but boilerplate: the question stays.
    expect(withoutBoilerplate('How do I')).toBe('How do I');
  });

  test('the variation is the feedback terms; the probe runs the primary query with the filters read from the question', async () => {
    const { context, probes } = planning(() => dated());
    const plan = await new HeuristicPlanner().plan('platypus sighting since 2024 from local_folder', context);
    const filterGroups = [{ conditions: [sourceGroup, { field: 'updated_at', operator: 'greater_than_or_equal', value: '2024-01-01T00:00:00.000Z' }] }];
    expect(plan).toMatchObject({ primaryQuery: 'platypus sighting', strategy: 'hybrid', planner: 'heuristic', filterGroups });
    // First the question's own candidates (is the date filter meaningful on them?), then the primary query's run.
    expect(probes).toEqual([
      ['platypus sighting since 2024', [{ conditions: [sourceGroup] }]],
      ['platypus sighting', filterGroups],
    ]);
    expect(plan.variations).toHaveLength(1);
    expect(plan.variations[0]!.split(' ')).toEqual(expect.arrayContaining(['monotreme', 'mammal']));
    expect(plan.variations[0]).not.toMatch(/platypus/);
    // No feedback, no variation.
    const bare = await new HeuristicPlanner().plan('platypus', { ...context, probe: async () => [] });
    expect(bare.variations).toEqual([]);
  });

  test('a date filter is dropped, its words kept in the query, when the documents’ dates are one copy’s time or the filter keeps none', async () => {
    // Every file copied within the same minute: their date is the copy's, not the content's.
    const copied = feedback.map((text, i) => ({ text, updatedAt: new Date(Date.UTC(2026, 5, 14, 10, 0, i)) }));
    const sameCopy = await new HeuristicPlanner().plan('which release added switch and restore in 2019', planning(() => copied).context);
    expect(sameCopy).toMatchObject({ primaryQuery: 'which release added switch and restore in 2019', filterGroups: [] });
    // Dates that spread, but none before 2020: the filter would empty the results.
    const before = await new HeuristicPlanner().plan('platypus sighting before 2020', planning(() => dated()).context);
    expect(before).toMatchObject({ primaryQuery: 'platypus sighting before 2020', filterGroups: [] });
    // No dates at all (a source without them): nothing to filter on.
    const undated = await new HeuristicPlanner().plan('platypus sighting since 2024', planning(() => feedback.map((text) => ({ text, updatedAt: null }))).context);
    expect(undated).toMatchObject({ primaryQuery: 'platypus sighting since 2024', filterGroups: [] });
    // Dates that spread and a filter that keeps some: applied, its words gone from the query.
    const held = await new HeuristicPlanner().plan('platypus sighting in 2024', planning(() => dated()).context);
    expect(held.primaryQuery).toBe('platypus sighting');
    expect(held.filterGroups).toEqual([{ conditions: [
      { field: 'updated_at', operator: 'greater_than_or_equal', value: '2024-01-01T00:00:00.000Z' },
      { field: 'updated_at', operator: 'less_than', value: '2025-01-01T00:00:00.000Z' },
    ] }]);
  });

  test('dateFilterHolds: dates spread over more than a day, and the filter keeps one of them', () => {
    const since: FilterCondition[] = [{ field: 'updated_at', operator: 'greater_than_or_equal', value: '2024-01-01T00:00:00.000Z' }];
    const at = (...isos: string[]) => isos.map((iso) => ({ text: '', updatedAt: new Date(iso) }));
    expect(dateFilterHolds(since, at('2023-03-01T00:00:00Z', '2024-03-01T00:00:00Z'))).toBe(true);
    expect(dateFilterHolds(since, at('2024-03-01T00:00:00Z', '2024-03-01T20:00:00Z'))).toBe(false);
    expect(dateFilterHolds(since, at('2022-03-01T00:00:00Z', '2023-03-01T00:00:00Z'))).toBe(false);
    expect(dateFilterHolds(since, at('2024-03-01T00:00:00Z'))).toBe(false);
  });
});

describe('classic search execution', () => {
  /** ClassicSearch over a stubbed retrieval: records every ranked list it is asked for. */
  function classic(lists: Record<string, SearchResultView[]>, failing = false) {
    const calls: RetrieveRequest[] = [];
    const retrieval: Retrieval = {
      scope: async () => scope,
      retrieve: async (_scope, request) => {
        calls.push(request);
        if (failing && calls.length === 1) throw new Error('index down');
        return (lists[request.text] ?? []).slice(request.offset, request.offset + request.limit);
      },
      count: async () => 0,
      list: async () => [],
    };
    const logger = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined } as unknown as ConstructorParameters<typeof ClassicSearch>[3];
    return { search: new ClassicSearch(retrieval, new HeuristicPlanner(), null, logger), calls };
  }
  const scope = { collection: { readableId: 'c' } as SearchScope['collection'], indexedConnectionIds: ['c1'], federated: [], sourceNames: ['stub'] } satisfies SearchScope;
  const request = (query: string, limit: number, offset = 0) => ({ query, filter: [] as FilterGroup[], limit, offset });
  const primary = ['monotreme mammal egg', 'monotreme mammal venom', 'monotreme mammal'].map((text, i) => hit(`d${i}`, 1 - i * 0.1, 0, text));

  test('the planner’s probe is the primary query’s run: two searches, the primary and the variation', async () => {
    const { search, calls } = classic({ platypus: primary, 'mammal monotreme': [hit('d9', 1)] });
    const { results, plan } = await search.run(scope, request('platypus', 2));
    expect(plan).toMatchObject({ primaryQuery: 'platypus', variations: ['mammal monotreme'], planner: 'heuristic' });
    expect(calls.map((c) => [c.text, c.strategy])).toEqual([
      ['platypus', 'hybrid'],
      ['mammal monotreme', 'hybrid'],
    ]);
    expect(results.map((r) => r.entityId)).toEqual(['d0', 'd1']);
  });

  test('classic never drops instant search’s first document: the question as asked finds it, it stays within the first three', async () => {
    // The boilerplate-free query ranks other documents; instant search on the question as asked had `summary.md` first.
    const primaryList = Array.from({ length: 8 }, (_, i) => hit(`p${i}.md`, 1 - i * 0.05, 0, `git log output options ${i}`));
    const { search, calls } = classic({
      'summarize git log output': primaryList,
      'How do I summarize git log output?': [hit('summary.md', 1, 2, 'git shortlog › summary'), ...primaryList],
    });
    const { results } = await search.run(scope, request('How do I summarize git log output?', 5));
    expect(calls.map((c) => c.text)).toContain('How do I summarize git log output?');
    expect(results.map((r) => r.entityId).indexOf('summary.md')).toBeGreaterThanOrEqual(0);
    expect(results.map((r) => r.entityId).indexOf('summary.md')).toBeLessThan(3);
    expect(results.find((r) => r.entityId === 'summary.md')!.serviceSystemMetadata.chunkIndex).toBe(2);
    const scores = results.map((r) => r.relevanceScore);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(new Set(results.map((r) => r.entityId)).size).toBe(results.length);
    // A question the planner leaves as it is costs no second search.
    const plain = classic({ platypus: primary });
    await plain.search.run(scope, request('platypus', 2));
    expect(plain.calls.filter((c) => c.text === 'platypus')).toHaveLength(1);
  });

  test('a failing probe falls back to instant search', async () => {
    const { search, calls } = classic({ platypus: primary }, true);
    const { results, plan } = await search.run(scope, request('platypus', 2));
    expect(plan.planner).toBe('instant');
    expect(results.map((r) => r.entityId)).toEqual(['d0', 'd1']);
    expect(calls).toHaveLength(2);
  });
});
