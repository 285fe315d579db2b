import type { FilterGroup } from '../../platform/vectors/vector-index.js';
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { PAGE_LIMIT } from '../collections/collection.service.js';
import { filterIssues } from './filter-rules.js';
import type { RetrievalStrategy } from './search-result.js';

export interface InstantSearchInput {
  query: string;
  retrievalStrategy?: RetrievalStrategy | null;
  filter?: FilterGroup[] | null;
  limit?: number | null;
  offset?: number | null;
}

export type ClassicSearchInput = Omit<InstantSearchInput, 'retrievalStrategy'>;

export interface AgenticSearchInput {
  query: string;
  thinking?: boolean | null;
  filter?: FilterGroup[] | null;
  /** Null lets the agent decide. */
  limit?: number | null;
}

export interface LegacySearchInput {
  query: string;
  responseType?: 'raw' | 'completion' | null;
  limit?: number | null;
  offset?: number | null;
  /** 0 = similarity only, 1 = recency only. */
  recencyBias?: number | null;
}

/** Page and filter rules shared by the tiers; throws one ValidationError listing every problem. */
export function checkPage(input: { query: string; filter?: FilterGroup[] | null; limit?: number | null; offset?: number | null }, issues: ValidationIssue[] = []) {
  const limit = input.limit ?? PAGE_LIMIT.default;
  const offset = input.offset ?? 0;
  if (!Number.isInteger(limit) || limit < PAGE_LIMIT.min || limit > PAGE_LIMIT.max) issues.push({ loc: ['limit'], msg: 'Input should be between 1 and 1000', type: 'range' });
  if (!Number.isInteger(offset) || offset < 0) issues.push({ loc: ['offset'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
  if (typeof input.query !== 'string' || input.query.trim() === '') issues.push({ loc: ['query'], msg: 'String should not be empty', type: 'string_too_short' });
  issues.push(...filterIssues(input.filter ?? []));
  if (issues.length) throw new ValidationError(issues);
  return { query: input.query, limit, offset, filter: input.filter ?? [] };
}

export function checkAgentic(input: AgenticSearchInput) {
  const issues: ValidationIssue[] = [];
  const limit = input.limit ?? null;
  if (limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT.max)) issues.push({ loc: ['limit'], msg: 'Input should be between 1 and 1000, or null', type: 'range' });
  if (typeof input.query !== 'string' || input.query.trim() === '') issues.push({ loc: ['query'], msg: 'String should not be empty', type: 'string_too_short' });
  issues.push(...filterIssues(input.filter ?? []));
  if (issues.length) throw new ValidationError(issues);
  return { query: input.query, thinking: input.thinking ?? false, filter: input.filter ?? [], limit };
}

export function checkLegacy(input: LegacySearchInput) {
  const issues: ValidationIssue[] = [];
  const recencyBias = input.recencyBias ?? 0;
  if (!(recencyBias >= 0 && recencyBias <= 1)) issues.push({ loc: ['recency_bias'], msg: 'Input should be between 0 and 1', type: 'range' });
  const { limit, offset } = checkPage({ ...input, filter: null }, issues);
  return { query: input.query, responseType: input.responseType ?? 'raw', limit, offset, recencyBias };
}
