import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { DomainError, RateLimitedError, ValidationError, type ValidationIssue } from '../shared/errors.js';

/** HTTP status for each error code, shared by the GraphQL endpoint and the REST facade. */
export const STATUS_BY_CODE: Record<string, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  BAD_USER_INPUT: 422,
  GRAPHQL_VALIDATION_FAILED: 400,
  GRAPHQL_PARSE_FAILED: 400,
  /** A request GraphQL cannot serve on that endpoint (a subscription sent to POST /graphql). */
  BAD_REQUEST: 400,
  /** Refused before execution: too deep or too costly (src/graphql/operation-limits.ts). */
  QUERY_TOO_COMPLEX: 400,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
};

/** The extensions a client sees for a domain error: its code, and the details a client acts on. */
export function errorExtensions(error: unknown): Record<string, unknown> | null {
  if (!(error instanceof DomainError)) return null;
  const extensions: Record<string, unknown> = { code: error.code };
  if (error instanceof ValidationError) extensions.detail = error.issues satisfies ValidationIssue[];
  if (error instanceof RateLimitedError) extensions.retryAfter = error.retryAfterSeconds;
  return extensions;
}

/**
 * Apollo's formatError: domain errors keep their message and gain their code; anything else is
 * an unexpected failure whose message is replaced so internals never leak.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  const extensions = errorExtensions(original);
  if (extensions) return { ...formatted, message: (original as Error).message, extensions };
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR') return formatted;
  if (original instanceof GraphQLError && !original.originalError) return formatted; // a plain GraphQL error (validation, coercion)
  return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
