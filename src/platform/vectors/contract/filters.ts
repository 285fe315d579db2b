import { beforeAll, expect, test } from '@jest/globals';
import { ValidationError } from '../../../shared/errors.js';
import type { FilterCondition, FilterGroup } from '../vector-index.js';
import { type ContractSuite, ids, sorted, where } from './suite.js';

/** Every filter field and operator, groups and conditions combined, and the filters refused. */
export function filtersContract(suite: ContractSuite): void {
  const { collection, chunk, all } = suite;

  let id: string;
  // c1, c2: two chunks of entity e-1; c3: e-2; c4: a quoted id on another connection; c5: e-4.
  const fixtures = () => [
    chunk(1, {
      entityId: 'e-1',
      chunkIndex: 0,
      name: 'Quarterly Report',
      createdAt: new Date('2024-01-01T00:00:00Z'),
      updatedAt: new Date('2024-06-01T00:00:00Z'),
      breadcrumbs: [
        { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
        { entity_id: 'f-1', name: 'Finance', entity_type: 'folder' },
      ],
      entityType: 'Page',
      sourceName: 'notion',
      syncId: 's-1',
      syncJobId: 'j-1',
    }),
    chunk(2, {
      entityId: 'e-1',
      chunkIndex: 1,
      name: 'Quarterly Report',
      createdAt: new Date('2024-01-01T00:00:00Z'),
      updatedAt: new Date('2024-06-01T00:00:00Z'),
      breadcrumbs: [
        { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
        { entity_id: 'f-1', name: 'Finance', entity_type: 'folder' },
      ],
      entityType: 'Page',
      sourceName: 'notion',
      syncId: 's-1',
      syncJobId: 'j-1',
    }),
    chunk(3, {
      entityId: 'e-2',
      chunkIndex: 0,
      name: 'Team Offsite Plan',
      createdAt: new Date('2025-03-15T12:00:00Z'),
      updatedAt: null,
      breadcrumbs: [
        { entity_id: 'ws-1', name: 'Workspace', entity_type: 'workspace' },
        { entity_id: 'f-2', name: 'Events', entity_type: 'folder' },
      ],
      entityType: 'Page',
      sourceName: 'notion',
      syncId: 's-1',
      syncJobId: 'j-2',
    }),
    chunk(4, {
      entityId: "e'3",
      sourceConnectionId: 'conn-2',
      chunkIndex: 0,
      name: 'Bug: crash on "save"',
      createdAt: null,
      updatedAt: new Date('2025-01-01T00:00:00Z'),
      breadcrumbs: [],
      entityType: 'Issue',
      sourceName: 'jira',
      syncId: 's-2',
      syncJobId: 'j-3',
    }),
    chunk(5, {
      entityId: 'e-4',
      chunkIndex: 2,
      name: 'Roadmap',
      createdAt: new Date('2023-05-05T00:00:00Z'),
      updatedAt: new Date('2023-05-06T00:00:00Z'),
      breadcrumbs: [{ entity_id: 'p-1', name: 'Project X', entity_type: 'project' }],
      entityType: 'Issue',
      sourceName: 'jira',
      syncId: 's-2',
      syncJobId: 'j-3',
    }),
  ];
  const C1 = 'conn-1:e-1:0';
  const C2 = 'conn-1:e-1:1';
  const C3 = 'conn-1:e-2:0';
  const C4 = "conn-2:e'3:0";
  const C5 = 'conn-1:e-4:2';
  const EVERY = [C1, C2, C3, C4, C5];
  const except = (...excluded: string[]) => EVERY.filter((chunkId) => !excluded.includes(chunkId));

  beforeAll(async () => {
    id = collection();
    await suite.index.add(id, fixtures());
  });

  const cases: [FilterCondition['field'], FilterCondition['operator'], FilterCondition['value'], string[]][] = [
    ['entity_id', 'equals', 'e-1', [C1, C2]],
    ['entity_id', 'equals', 'e-9', []],
    ['entity_id', 'equals', "e'3", [C4]],
    ['entity_id', 'not_equals', 'e-1', [C3, C4, C5]],
    ['entity_id', 'contains', '-', [C1, C2, C3, C5]],
    ['entity_id', 'contains', 'zz', []],
    ['entity_id', 'in', ['e-2', "e'3", 'nope'], [C3, C4]],
    ['entity_id', 'in', [], []],
    ['entity_id', 'not_in', ['e-1', 'e-2'], [C4, C5]],
    ['entity_id', 'not_in', [], EVERY],
    ['name', 'equals', 'Roadmap', [C5]],
    ['name', 'equals', 'roadmap', []],
    ['name', 'not_equals', 'Quarterly Report', [C3, C4, C5]],
    ['name', 'contains', 'Report', [C1, C2]],
    ['name', 'contains', '"save"', [C4]],
    ['name', 'contains', 'Offsite Plan X', []],
    ['name', 'in', ['Roadmap', 'Team Offsite Plan'], [C3, C5]],
    ['name', 'not_in', ['Roadmap'], except(C5)],
    ['created_at', 'equals', '2024-01-01T00:00:00Z', [C1, C2]],
    ['created_at', 'equals', '2024-01-01T00:00:00.001Z', []],
    ['created_at', 'not_equals', '2024-01-01T00:00:00Z', [C3, C4, C5]],
    ['created_at', 'greater_than', '2024-01-01T00:00:00Z', [C3]],
    ['created_at', 'greater_than_or_equal', '2024-01-01T00:00:00Z', [C1, C2, C3]],
    ['created_at', 'less_than', '2024-01-01T00:00:00Z', [C5]],
    ['created_at', 'less_than_or_equal', '2024-01-01T00:00:00+00:00', [C1, C2, C5]],
    ['created_at', 'greater_than', '2025-03-15T13:00:00+02:00', [C3]],
    ['created_at', 'less_than', '2020-01-01', []],
    ['created_at', 'in', ['2023-05-05T00:00:00Z', '2025-03-15T12:00:00.000Z'], [C3, C5]],
    ['created_at', 'not_in', ['2024-01-01T00:00:00Z'], [C3, C4, C5]],
    ['updated_at', 'greater_than', '2024-12-31T00:00:00Z', [C4]],
    ['updated_at', 'less_than', '2024-12-31T00:00:00Z', [C1, C2, C5]],
    ['updated_at', 'equals', '2025-01-01T00:00:00Z', [C4]],
    ['updated_at', 'not_equals', '2025-01-01T00:00:00Z', [C1, C2, C3, C5]],
    ['breadcrumbs.entity_id', 'equals', 'ws-1', [C1, C2, C3]],
    ['breadcrumbs.entity_id', 'equals', 'ws', []],
    ['breadcrumbs.entity_id', 'not_equals', 'f-1', [C3, C4, C5]],
    ['breadcrumbs.entity_id', 'contains', 'p-1', [C5]],
    ['breadcrumbs.entity_id', 'in', ['f-2', 'p-1'], [C3, C5]],
    ['breadcrumbs.entity_id', 'not_in', ['ws-1', 'p-1'], [C4]],
    ['breadcrumbs.name', 'equals', 'Finance', [C1, C2]],
    ['breadcrumbs.name', 'equals', 'Finance Workspace', []],
    ['breadcrumbs.name', 'contains', 'Project X', [C5]],
    ['breadcrumbs.name', 'not_equals', 'Workspace', [C4, C5]],
    ['breadcrumbs.name', 'in', ['Events', 'Nope'], [C3]],
    ['breadcrumbs.name', 'not_in', ['Events'], except(C3)],
    ['breadcrumbs.entity_type', 'equals', 'folder', [C1, C2, C3]],
    ['breadcrumbs.entity_type', 'not_equals', 'folder', [C4, C5]],
    ['breadcrumbs.entity_type', 'contains', 'project', [C5]],
    ['breadcrumbs.entity_type', 'in', ['project', 'workspace'], [C1, C2, C3, C5]],
    ['breadcrumbs.entity_type', 'not_in', ['workspace'], [C4, C5]],
    ['service_system_metadata.entity_type', 'equals', 'Issue', [C4, C5]],
    ['service_system_metadata.entity_type', 'not_equals', 'Issue', [C1, C2, C3]],
    ['service_system_metadata.entity_type', 'contains', 'ssu', [C4, C5]],
    ['service_system_metadata.entity_type', 'in', ['Page'], [C1, C2, C3]],
    ['service_system_metadata.entity_type', 'not_in', ['Page', 'Issue'], []],
    ['service_system_metadata.source_name', 'equals', 'jira', [C4, C5]],
    ['service_system_metadata.source_name', 'not_equals', 'jira', [C1, C2, C3]],
    ['service_system_metadata.source_name', 'contains', 'otio', [C1, C2, C3]],
    ['service_system_metadata.source_name', 'in', ['slack', 'notion'], [C1, C2, C3]],
    ['service_system_metadata.source_name', 'not_in', ['notion'], [C4, C5]],
    ['service_system_metadata.original_entity_id', 'equals', 'e-1', [C1, C2]],
    ['service_system_metadata.original_entity_id', 'not_equals', 'e-1', [C3, C4, C5]],
    ['service_system_metadata.original_entity_id', 'contains', "'", [C4]],
    ['service_system_metadata.original_entity_id', 'in', ['e-4'], [C5]],
    ['service_system_metadata.original_entity_id', 'not_in', ['e-4', 'e-1'], [C3, C4]],
    ['service_system_metadata.chunk_index', 'equals', 0, [C1, C3, C4]],
    ['service_system_metadata.chunk_index', 'not_equals', 0, [C2, C5]],
    ['service_system_metadata.chunk_index', 'greater_than', 0, [C2, C5]],
    ['service_system_metadata.chunk_index', 'greater_than_or_equal', 1, [C2, C5]],
    ['service_system_metadata.chunk_index', 'less_than', 2, [C1, C2, C3, C4]],
    ['service_system_metadata.chunk_index', 'less_than_or_equal', 0, [C1, C3, C4]],
    ['service_system_metadata.chunk_index', 'in', [1, 2], [C2, C5]],
    ['service_system_metadata.chunk_index', 'not_in', [0], [C2, C5]],
    ['service_system_metadata.sync_id', 'equals', 's-2', [C4, C5]],
    ['service_system_metadata.sync_id', 'not_equals', 's-2', [C1, C2, C3]],
    ['service_system_metadata.sync_id', 'contains', 's-', EVERY],
    ['service_system_metadata.sync_id', 'in', ['s-1'], [C1, C2, C3]],
    ['service_system_metadata.sync_id', 'not_in', ['s-1'], [C4, C5]],
    ['service_system_metadata.sync_job_id', 'equals', 'j-2', [C3]],
    ['service_system_metadata.sync_job_id', 'not_equals', 'j-3', [C1, C2, C3]],
    ['service_system_metadata.sync_job_id', 'contains', 'j-', EVERY],
    ['service_system_metadata.sync_job_id', 'in', ['j-1', 'j-2'], [C1, C2, C3]],
    ['service_system_metadata.sync_job_id', 'not_in', ['j-1', 'j-2'], [C4, C5]],
  ];

  test.each(cases)('%s %s %j', async (field, operator, value, expected) => {
    const filter = where({ field, operator, value } as FilterCondition);
    expect(sorted(ids(await all(id, { filter })))).toEqual(sorted(expected));
    expect(await suite.index.count(id, filter)).toBe(expected.length);
  });

  test('conditions in a group are ANDed, groups are ORed, an empty filter matches everything', async () => {
    const and: FilterGroup[] = where(
      { field: 'service_system_metadata.source_name', operator: 'equals', value: 'notion' },
      { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 0 },
    );
    expect(sorted(ids(await all(id, { filter: and })))).toEqual(sorted([C1, C3]));
    const or: FilterGroup[] = [...and, ...where({ field: 'name', operator: 'equals', value: 'Roadmap' })];
    expect(sorted(ids(await all(id, { filter: or })))).toEqual(sorted([C1, C3, C5]));
    expect(await suite.index.count(id, or)).toBe(3);
    expect(await suite.index.count(id, [])).toBe(5);
    expect(await suite.index.count(id, [{ conditions: [] }])).toBe(5);
    expect(await suite.index.count(id, [{ conditions: [] }, ...where({ field: 'entity_id', operator: 'equals', value: 'none' })])).toBe(5);
  });

  const invalid: [string, FilterCondition, string][] = [
    ['a range operator on breadcrumbs', { field: 'breadcrumbs.name', operator: 'greater_than', value: 'a' }, 'operator'],
    ['a range operator on a string field', { field: 'name', operator: 'less_than', value: 'm' }, 'operator'],
    ['contains on a date', { field: 'created_at', operator: 'contains', value: '2024' }, 'operator'],
    ['contains on chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'contains', value: 1 }, 'operator'],
    ['an array with equals', { field: 'entity_id', operator: 'equals', value: ['e-1'] }, 'value'],
    ['a scalar with in', { field: 'entity_id', operator: 'in', value: 'e-1' }, 'value'],
    ['a scalar with not_in', { field: 'breadcrumbs.entity_id', operator: 'not_in', value: 'ws-1' }, 'value'],
    ['a non-date for a date field', { field: 'created_at', operator: 'greater_than', value: 'yesterday-ish' }, 'value'],
    ['a string for chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 'one' }, 'value'],
    ['a fraction for chunk_index', { field: 'service_system_metadata.chunk_index', operator: 'equals', value: 1.5 }, 'value'],
    // chunk_index is a 32-bit column: a larger value failed inside LanceDB (a 500) instead of being refused.
    ['a chunk_index beyond 32 bits', { field: 'service_system_metadata.chunk_index', operator: 'greater_than', value: 2 ** 31 }, 'value'],
    ['a boolean for a string field', { field: 'name', operator: 'equals', value: true }, 'value'],
    ['a bad element in an in list', { field: 'service_system_metadata.chunk_index', operator: 'in', value: ['1'] }, 'value'],
    ['an unknown field', { field: 'payload.secret' as FilterCondition['field'], operator: 'equals', value: 'x' }, 'field'],
    ['an unknown operator', { field: 'name', operator: 'like' as FilterCondition['operator'], value: 'x' }, 'operator'],
  ];

  test.each(invalid)('rejects %s as a ValidationError with its location', async (_label, condition, key) => {
    const filter: FilterGroup[] = [...where({ field: 'entity_id', operator: 'equals', value: 'e-1' }), { conditions: [{ field: 'name', operator: 'equals', value: 'ok' }, condition] }];
    const expectation = { loc: ['filter', 1, 'conditions', 1, key] };
    for (const attempt of [() => suite.index.count(id, filter), () => all(id, { filter }), () => suite.index.search(id, { strategy: 'keyword', text: 'report', filter, limit: 5, offset: 0 })]) {
      const error = await attempt().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([expect.objectContaining(expectation)]);
    }
  });
}
