import type { FilterCondition, FilterGroup } from '../../platform/vectors/vector-index.js';
import type { ValidationIssue } from '../../shared/errors.js';

const FILTERABLE_FIELDS = new Set([
  'entity_id', 'name', 'created_at', 'updated_at', 'breadcrumbs.entity_id', 'breadcrumbs.name', 'breadcrumbs.entity_type',
  'service_system_metadata.entity_type', 'service_system_metadata.source_name', 'service_system_metadata.original_entity_id',
  'service_system_metadata.chunk_index', 'service_system_metadata.sync_id', 'service_system_metadata.sync_job_id',
]);
const OPERATORS = new Set(['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal', 'in', 'not_in']);
const scalar = (value: unknown) => typeof value === 'string' || typeof value === 'boolean' || Number.isInteger(value);

/** The spec's rules for filters, checked once here for every index adapter and every search tier. */
export function filterIssues(filter: FilterGroup[], at: (string | number)[] = ['filter']): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!Array.isArray(filter)) return [{ loc: at, msg: 'Input should be a list of filter groups', type: 'list_type' }];
  filter.forEach((group, g) => {
    if (!group || !Array.isArray(group.conditions)) {
      issues.push({ loc: [...at, g, 'conditions'], msg: 'Input should be a list of conditions', type: 'list_type' });
      return;
    }
    group.conditions.forEach((condition, c) => {
      const loc = [...at, g, 'conditions', c];
      if (!FILTERABLE_FIELDS.has(condition?.field)) issues.push({ loc: [...loc, 'field'], msg: `Unknown filterable field "${condition?.field}"`, type: 'enum' });
      if (!OPERATORS.has(condition?.operator)) issues.push({ loc: [...loc, 'operator'], msg: `Unknown operator "${condition?.operator}"`, type: 'enum' });
      const list = condition?.operator === 'in' || condition?.operator === 'not_in';
      const value = condition?.value as unknown;
      const valid = list
        ? Array.isArray(value) && value.length > 0 && (value.every((v) => typeof v === 'string') || value.every((v) => Number.isInteger(v)))
        : scalar(value);
      if (!valid) issues.push({ loc: [...loc, 'value'], msg: list ? 'in and not_in take a non-empty array of strings or of integers' : 'Use a string, integer or boolean (arrays only with in and not_in)', type: 'value_error' });
    });
  });
  return issues;
}

/**
 * Both filters must hold: (a1 OR a2 …) AND (b1 OR b2 …) = OR over every pair of their groups.
 * An empty filter constrains nothing.
 */
export function bothFilters(a: FilterGroup[], b: FilterGroup[]): FilterGroup[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return a.flatMap((left) => b.map((right) => ({ conditions: [...left.conditions, ...right.conditions] })));
}

/** Every group also gets these conditions. */
export function withConditions(filter: FilterGroup[], ...conditions: FilterCondition[]): FilterGroup[] {
  return bothFilters(filter, [{ conditions }]);
}

/** Whether one value of a result's field meets a condition, in memory (dates compare with ISO strings by time). */
export function conditionHolds(value: unknown, { operator, value: expected }: FilterCondition): boolean {
  const actual = value instanceof Date ? value.getTime() : value;
  const comparable = (v: unknown) => (value instanceof Date && typeof v === 'string' ? Date.parse(v) : v);
  const target = comparable(expected);
  switch (operator) {
    case 'equals': return actual === target;
    case 'not_equals': return actual !== target;
    case 'contains': return typeof actual === 'string' && actual.includes(String(expected));
    case 'in': return Array.isArray(expected) && (expected as unknown[]).map(comparable).includes(actual);
    case 'not_in': return Array.isArray(expected) && !(expected as unknown[]).map(comparable).includes(actual);
    default: {
      if (actual === null || actual === undefined || typeof target === 'boolean') return false;
      const [a, b] = [actual as number | string, target as number | string];
      if (operator === 'greater_than') return a > b;
      if (operator === 'less_than') return a < b;
      if (operator === 'greater_than_or_equal') return a >= b;
      return a <= b;
    }
  }
}
