import { type CheckedCondition, translateFilter } from '../filter-conditions.js';
import type { FilterGroup, FilterOperator } from '../vector-index.js';

/** The spec's filters as LanceDB SQL predicates. */

const COMPARISON: Partial<Record<FilterOperator, string>> = {
  greater_than: '>',
  less_than: '<',
  greater_than_or_equal: '>=',
  less_than_or_equal: '<=',
};

/** A SQL string literal: single quotes doubled (LanceDB's SQL treats backslashes literally). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * The spec's filter as a LanceDB SQL predicate: groups ORed, conditions inside a group ANDed; null
 * for no filter. Throws ValidationError (loc `filter.<g>.conditions.<c>.<field|operator|value>`).
 */
export function whereClause(filter: FilterGroup[] | null | undefined): string | null {
  const groups = translateFilter(filter, conditionSql);
  if (!groups) return null;
  return groups.map((conditions) => `(${conditions.length === 0 ? 'TRUE' : conditions.map((sql) => `(${sql})`).join(' AND ')})`).join(' OR ');
}

function conditionSql({ column, kind, operator, values }: CheckedCondition): string {
  const sql = (v: string | number | Date): string =>
    v instanceof Date ? `arrow_cast(${v.getTime()}, 'Timestamp(Millisecond, Some("UTC"))')` : typeof v === 'number' ? String(v) : literal(v);
  if (kind === 'list') {
    // Any breadcrumb matches: equals and contains test membership.
    const has = (v: string | number | Date) => `array_has(${column}, ${sql(v)})`;
    switch (operator) {
      case 'not_equals':
        return `NOT ${has(values[0]!)}`;
      case 'in':
        return anyOf(values.map(has));
      case 'not_in':
        return `NOT (${anyOf(values.map(has))})`;
      default: // equals, contains
        return has(values[0]!);
    }
  }
  const orNull = (predicate: string) => (kind === 'date' ? `${column} IS NULL OR ${predicate}` : predicate);
  const comparison = COMPARISON[operator];
  if (comparison) return `${column} ${comparison} ${sql(values[0]!)}`;
  switch (operator) {
    case 'not_equals':
      return orNull(`${column} <> ${sql(values[0]!)}`);
    case 'in':
      return values.length === 0 ? 'FALSE' : `${column} IN (${values.map(sql).join(', ')})`;
    case 'not_in':
      return values.length === 0 ? 'TRUE' : orNull(`${column} NOT IN (${values.map(sql).join(', ')})`);
    case 'contains':
      return `contains(${column}, ${sql(values[0]!)})`;
    default: // equals
      return `${column} = ${sql(values[0]!)}`;
  }
}

function anyOf(parts: string[]): string {
  return parts.length === 0 ? 'FALSE' : parts.join(' OR ');
}
