import weaviate, { Filters, type FilterValue } from 'weaviate-client';
import { type CheckedCondition, translateFilter } from '../filter-conditions.js';
import type { FilterGroup } from '../vector-index.js';
import type { PropertyName } from './schema.js';

/** A filter on one stored property (the client's filter builder, detached from any connection). */
export const property = (name: PropertyName) => weaviate.filter.byProperty(name);

/**
 * A translated filter: a Weaviate filter, or `true` (matches everything: no filter to send) or
 * `false` (matches nothing: no query to run). The constants come from empty groups and empty
 * in / not_in lists, which Weaviate's And/Or cannot express.
 */
export type WeaviateFilter = FilterValue | boolean;

/**
 * The spec's filter as a Weaviate filter: groups ORed, conditions inside a group ANDed. Throws
 * ValidationError (loc `filter.<g>.conditions.<c>.<field|operator|value>`), with the same rules
 * and messages as the LanceDB adapter.
 */
export function weaviateFilter(filter: FilterGroup[] | null | undefined): WeaviateFilter {
  const groups = translateFilter(filter, conditionFilter);
  return groups ? anyOf(groups.map(allOf)) : true;
}

function allOf(parts: WeaviateFilter[]): WeaviateFilter {
  if (parts.includes(false)) return false;
  const filters = parts.filter((part): part is FilterValue => part !== true);
  return filters.length === 0 ? true : filters.length === 1 ? filters[0]! : Filters.and(...filters);
}

function anyOf(parts: WeaviateFilter[]): WeaviateFilter {
  if (parts.includes(true)) return true;
  const filters = parts.filter((part): part is FilterValue => part !== false);
  return filters.length === 0 ? false : filters.length === 1 ? filters[0]! : Filters.or(...filters);
}

/**
 * Weaviate's Like has no escape: `*` and `?` are wildcards. A literal one in the searched text
 * becomes `?` (any one character), which can only widen the match by that character.
 */
export function likePattern(value: string): string {
  return `*${value.replace(/[*?]/g, '?')}*`;
}

function conditionFilter({ column, kind, operator, values }: CheckedCondition): WeaviateFilter {
  const target = property(column as PropertyName);
  const textual = kind === 'string' || kind === 'list';

  switch (operator) {
    case 'equals':
      // On a text[] property ContainsAny is membership; Equal on text/int/date is exact.
      return kind === 'list' ? target.containsAny(values as string[]) : target.equal(values[0]!);
    case 'contains':
      return kind === 'list' ? target.containsAny(values as string[]) : target.like(likePattern(values[0] as string));
    case 'not_equals':
      // Weaviate's NotEqual is the complement of Equal: absent dates match, and an array matches when no element equals.
      return target.notEqual(values[0]!);
    case 'in':
      if (values.length === 0) return false;
      return textual ? target.containsAny(values as string[]) : anyOf(values.map((v) => target.equal(v)));
    case 'not_in':
      // ContainsNone needs Weaviate 1.33; an AND of NotEquals works on every version.
      return allOf(values.map((v) => target.notEqual(v)));
    case 'greater_than':
      return target.greaterThan(values[0] as number | Date);
    case 'greater_than_or_equal':
      return target.greaterOrEqual(values[0] as number | Date);
    case 'less_than':
      return target.lessThan(values[0] as number | Date);
    default: // less_than_or_equal
      return target.lessOrEqual(values[0] as number | Date);
  }
}
