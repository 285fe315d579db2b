import { ValidationError, type ErrorLocation, type ValidationIssue } from '../../shared/errors.js';
import type { FilterCondition, FilterGroup, FilterableField, FilterOperator } from './vector-index.js';

/**
 * The spec's filter, validated once for every index adapter: each adapter translates checked
 * conditions into its own filter language (LanceDB SQL, Weaviate filters), so the rules and the 422
 * messages are the same whatever the engine.
 */
export type FieldKind = 'string' | 'date' | 'integer' | 'list';

/** Filterable field → stored column (LanceDB) / property (Weaviate), and its kind. Breadcrumb fields are string lists (any element matches). */
export const FILTER_FIELDS: Record<FilterableField, { column: string; kind: FieldKind }> = {
  entity_id: { column: 'entity_id', kind: 'string' },
  name: { column: 'name', kind: 'string' },
  created_at: { column: 'created_at', kind: 'date' },
  updated_at: { column: 'updated_at', kind: 'date' },
  'breadcrumbs.entity_id': { column: 'breadcrumb_entity_ids', kind: 'list' },
  'breadcrumbs.name': { column: 'breadcrumb_names', kind: 'list' },
  'breadcrumbs.entity_type': { column: 'breadcrumb_entity_types', kind: 'list' },
  'service_system_metadata.entity_type': { column: 'entity_type', kind: 'string' },
  'service_system_metadata.source_name': { column: 'source_name', kind: 'string' },
  'service_system_metadata.original_entity_id': { column: 'entity_id', kind: 'string' },
  'service_system_metadata.chunk_index': { column: 'chunk_index', kind: 'integer' },
  'service_system_metadata.sync_id': { column: 'sync_id', kind: 'string' },
  'service_system_metadata.sync_job_id': { column: 'sync_job_id', kind: 'string' },
};

export const RANGE_OPERATORS = new Set<FilterOperator>(['greater_than', 'less_than', 'greater_than_or_equal', 'less_than_or_equal']);
const OPERATORS = new Set<string>(['equals', 'not_equals', 'contains', 'in', 'not_in', ...RANGE_OPERATORS]);

/** A condition whose field, operator and values are known good; dates are Dates, integers numbers, the rest strings. */
export interface CheckedCondition {
  field: FilterableField;
  column: string;
  kind: FieldKind;
  operator: FilterOperator;
  /** One value, or the list of `in` / `not_in` (possibly empty). */
  values: (string | number | Date)[];
}

/**
 * Groups ORed, conditions inside a group ANDed: each condition checked and translated by the
 * adapter. Null for no filter. Throws one ValidationError with every bad condition
 * (loc `filter.<g>.conditions.<c>.<field|operator|value>`).
 */
export function translateFilter<T>(filter: FilterGroup[] | null | undefined, translate: (condition: CheckedCondition) => T): T[][] | null {
  if (!filter || filter.length === 0) return null;
  const issues: ValidationIssue[] = [];
  const groups = filter.map((group, g) =>
    (group?.conditions ?? []).flatMap((condition, c) => {
      try {
        return [translate(checkCondition(condition, ['filter', g, 'conditions', c]))];
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        issues.push(...error.issues);
        return [];
      }
    }),
  );
  if (issues.length > 0) throw new ValidationError(issues);
  return groups;
}

const MAX_INT32 = 2 ** 31 - 1;

function checkCondition(condition: FilterCondition, loc: ErrorLocation): CheckedCondition {
  const fail = (key: 'field' | 'operator' | 'value', msg: string, type = 'value_error'): never => {
    throw new ValidationError([{ loc: [...loc, key], msg, type }]);
  };
  const { field, operator, value } = condition ?? ({} as FilterCondition);
  const spec = Object.hasOwn(FILTER_FIELDS, field) ? FILTER_FIELDS[field] : undefined;
  if (!spec) return fail('field', `Unknown filterable field ${JSON.stringify(field)}`, 'enum');
  if (!OPERATORS.has(operator)) return fail('operator', `Unknown filter operator ${JSON.stringify(operator)}`, 'enum');
  const { kind } = spec;
  const many = operator === 'in' || operator === 'not_in';
  if (many && !Array.isArray(value)) return fail('value', `Operator ${operator} needs an array value`, 'list_type');
  if (!many && Array.isArray(value)) return fail('value', `Operator ${operator} needs a single value, not an array`, 'value_error');
  if (RANGE_OPERATORS.has(operator) && kind === 'list') return fail('operator', `Operator ${operator} does not apply to ${field}`, 'value_error');
  if (RANGE_OPERATORS.has(operator) && kind === 'string') return fail('operator', `Operator ${operator} applies to created_at, updated_at and chunk_index only`, 'value_error');
  if (operator === 'contains' && (kind === 'date' || kind === 'integer')) return fail('operator', `Operator contains does not apply to ${field}`, 'value_error');

  const scalar = (v: unknown): string | number | Date => {
    switch (kind) {
      case 'date': {
        const time = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Date.parse(v) : Number.NaN;
        if (!Number.isFinite(time)) return fail('value', `${field} needs an ISO 8601 date-time`, 'datetime_parsing');
        return new Date(Math.trunc(time));
      }
      case 'integer':
        // The indexes store chunk_index as a 32-bit integer and refuse literals beyond it.
        if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > MAX_INT32) return fail('value', `${field} needs an integer between ${-MAX_INT32} and ${MAX_INT32}`, 'int_type');
        return v;
      default:
        if (typeof v === 'string') return v;
        if (typeof v === 'number' && Number.isFinite(v)) return String(v);
        return fail('value', `${field} needs a string`, 'string_type');
    }
  };
  return { field, column: spec.column, kind, operator, values: many ? (value as unknown[]).map(scalar) : [scalar(value)] };
}

/** Ascending code-unit order: ties between equal scores break on chunk ids, the same in every adapter. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function finiteOr(value: number, fallback: number): number {
  return Number.isFinite(value) ? value : fallback;
}
