import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import { FIRST_KEPT_WITHIN } from './classic/document-fields.js';
import { documentKey, type SearchResultView } from './search-result.js';
import { openTiers, type TestEntity } from './search-tiers.fixture.js';

const VOCABULARY = ['heron', 'osprey', 'gannet', 'nesting', 'migration', 'cliff', 'river', 'survey', 'winter', 'colony', 'feather', 'estuary'];
const keys = (results: SearchResultView[]) => results.map(documentKey);
const distinct = (results: SearchResultView[]) => new Set(keys(results)).size === results.length;
const noFilter: FilterGroup[] = [];

let tiers: Awaited<ReturnType<typeof openTiers>>;
beforeAll(async () => {
  tiers = await openTiers();
});
afterAll(() => tiers?.close());

const word = fc.constantFrom(...VOCABULARY);
const entities = fc
  .uniqueArray(
    fc.record({
      id: fc.stringMatching(/^[a-z]{1,6}(\/[a-z]{1,6})?$/),
      chunks: fc.array(fc.array(word, { minLength: 1, maxLength: 8 }).map((words) => words.join(' ')), { minLength: 1, maxLength: 5 }),
      type: fc.constantFrom('file', 'file', 'file', 'folder'),
    }),
    { minLength: 1, maxLength: 12, selector: (entity) => entity.id },
  )
  .map((list) => list as TestEntity[]);
const question = fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' '));

describe('every tier answers with documents', () => {
  test('no tier returns a document twice, and pages of one ranking never share a document (random collections and queries)', async () => {
    await fc.assert(
      fc.asyncProperty(entities, question, fc.integer({ min: 1, max: 4 }), async (collection, query, limit) => {
        const scope = await tiers.collection(collection);
        for (const strategy of ['semantic', 'keyword', 'hybrid'] as const) {
          const whole = await tiers.retrieval.retrieve(scope, { text: query, strategy, filter: noFilter, limit: 3 * limit, offset: 0 });
          expect(distinct(whole)).toBe(true);
          const pages: SearchResultView[] = [];
          for (let offset = 0; offset < 3 * limit; offset += limit) pages.push(...(await tiers.retrieval.retrieve(scope, { text: query, strategy, filter: noFilter, limit, offset })));
          expect(keys(pages)).toEqual(keys(whole));
          const scores = whole.map((r) => r.relevanceScore);
          expect([...scores].sort((a, b) => b - a)).toEqual(scores);
        }
        const classicPages: SearchResultView[] = [];
        for (let offset = 0; offset < 3 * limit; offset += limit) classicPages.push(...(await tiers.classic.run(scope, { query, filter: noFilter, limit, offset })).results);
        expect(distinct(classicPages)).toBe(true);
        const legacy = await tiers.legacy.run(scope, { query, responseType: 'raw', limit: 3 * limit, offset: 0, recencyBias: 0.5 });
        expect(distinct(legacy.results)).toBe(true);
        const agentic = await tiers.agentic.run(scope, { query, limit: null, thinking: false, filter: noFilter }, () => undefined, new AbortController().signal);
        expect(distinct(agentic)).toBe(true);
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  test('a document is shown by its best chunk', async () => {
    const scope = await tiers.collection([
      { id: 'long.md', chunks: ['introduction to birds', 'the osprey dives for fish in the estuary osprey', 'osprey nesting platforms', 'appendix'] },
      { id: 'short.md', chunks: ['one osprey'] },
      { id: 'other.md', chunks: ['heron colony'] },
    ]);
    const results = await tiers.retrieval.retrieve(scope, { text: 'osprey', strategy: 'keyword', filter: noFilter, limit: 10, offset: 0 });
    expect(results.map((r) => r.entityId).sort()).toEqual(['long.md', 'short.md']);
    const long = results.find((r) => r.entityId === 'long.md')!;
    expect(long.serviceSystemMetadata.chunkIndex).toBe(1);
    expect(long.textualRepresentation).toBe('the osprey dives for fish in the estuary osprey');
  });

  test('containers stay findable by name but do not push the answering documents out of the first page', async () => {
    // Ten folders repeat the question's words in their names; the two answering files say them once, in longer text.
    const folders = Array.from({ length: 10 }, (_, i) => ({ id: `winter-migration-${i}`, name: `winter migration ${i}`, chunks: [`winter migration ${i}`], type: 'folder' }));
    const files = [
      { id: 'guide/routes.md', chunks: ['Routes: in winter the migration of gannets follows the coast, resting on cliffs and in estuaries for weeks'] },
      { id: 'guide/timing.md', chunks: ['Timing: the winter migration starts when the colony leaves the cliff, weather permitting, in late autumn'] },
    ];
    const others = Array.from({ length: 20 }, (_, i) => ({ id: `other-${i}.md`, name: 'survey notes', chunks: [`a heron survey of the ${['north', 'south', 'east', 'west'][i % 4]} river`] }));
    const scope = await tiers.collection([...folders, ...files, ...others]);
    for (const strategy of ['keyword', 'hybrid'] as const) {
      const page = await tiers.retrieval.retrieve(scope, { text: 'winter migration', strategy, filter: noFilter, limit: 10, offset: 0 });
      expect(page.slice(0, 2).map((r) => r.entityId).sort()).toEqual(['guide/routes.md', 'guide/timing.md']);
      if (strategy === 'keyword') expect(page.some((r) => r.serviceSystemMetadata.entityType === 'folder')).toBe(true);
    }
    // Named, a folder is the first container and still on the first page; alone in matching, it comes first.
    const named = await tiers.retrieval.retrieve(scope, { text: 'winter migration 7', strategy: 'keyword', filter: noFilter, limit: 10, offset: 0 });
    expect(named.find((r) => r.serviceSystemMetadata.entityType === 'folder')!.entityId).toBe('winter-migration-7');
    expect((await tiers.retrieval.retrieve(scope, { text: '7', strategy: 'keyword', filter: noFilter, limit: 10, offset: 0 }))[0]!.entityId).toBe('winter-migration-7');
  });

  test('classic keeps its primary ranking’s first document within its first three, whatever its variation and second stage bring', async () => {
    await fc.assert(
      fc.asyncProperty(entities, question, async (collection, query) => {
        const scope = await tiers.collection(collection);
        const { results, plan } = await tiers.classic.run(scope, { query, filter: noFilter, limit: 5, offset: 0 });
        const primary = await tiers.retrieval.retrieve(scope, { text: plan.primaryQuery, strategy: plan.strategy, filter: noFilter, limit: 50, offset: 0 });
        if (primary.length > 0) expect(results.slice(0, FIRST_KEPT_WITHIN).map(documentKey)).toContain(documentKey(primary[0]!));
      }),
      { numRuns: 15 },
    );
  }, 60_000);

  test('agentic without a model returns limit results, or ten when limit is null, never one by accident', async () => {
    const collection = Array.from({ length: 14 }, (_, i) => ({ id: `note-${i}.md`, chunks: [`${VOCABULARY[i % VOCABULARY.length]} survey river ${'feather '.repeat(i % 3)}`] }));
    const scope = await tiers.collection(collection);
    const run = (limit: number | null) => tiers.agentic.run(scope, { query: 'What should I know about the river survey?', limit, thinking: false, filter: noFilter }, () => undefined, new AbortController().signal);
    expect(await run(4)).toHaveLength(4);
    expect(await run(null)).toHaveLength(10);
    expect(await run(50)).toHaveLength(14);
  });
});
