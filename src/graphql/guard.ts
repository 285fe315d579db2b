import type { MiddlewareFn } from 'type-graphql';
import { roleAtLeast, type Role } from '../modules/organizations/organization.entity.js';
import type { Principal } from '../modules/organizations/principal.js';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '../shared/errors.js';
import type { GraphQLContext } from './context.js';

/**
 * Families that share a rate-limit budget per organization. `search` has its own size
 * (CATCHMENT_SEARCH_RATE_LIMIT_REQUESTS) and is drawn once per search field executed, so one
 * request with many aliased searches spends as many.
 */
export type RateLimitFamily = 'collections' | 'source_connections' | 'sources' | 'webhooks' | 'search';

export interface GuardRule {
  /** Rate-limit budget the operation draws on; none for operations outside the limited families. */
  family?: RateLimitFamily;
  role: Role;
  /** Set when only users (bearer tokens) may call, never API keys. */
  usersOnly?: boolean;
}

/**
 * Authentication, rate limit and role check, in that order, for one resolver. Checking the rate
 * limit before the role means a caller hammering a forbidden operation is still throttled.
 */
export async function checkAccess(context: GraphQLContext, rule: GuardRule): Promise<Principal> {
  const principal = context.principal;
  if (!principal) throw new UnauthenticatedError('Missing credentials: send an x-api-key header or an Authorization: Bearer token');
  if (rule.family) await consumeRateLimit(context, principal, rule.family);
  if (rule.usersOnly && principal.kind !== 'user') throw new ForbiddenError('This operation needs a bearer token of an admin or owner');
  if (!roleAtLeast(principal.role, rule.role)) throw new ForbiddenError(`This operation needs the ${rule.role} role or higher`);
  return principal;
}

/** Draws one request on the organization's budget of a family; throws RateLimitedError once it is spent. */
export async function consumeRateLimit(context: GraphQLContext, principal: Principal, family: RateLimitFamily): Promise<void> {
  const limiter = family === 'search' ? context.services.searchRateLimiter : context.services.rateLimiter;
  if (!limiter) return;
  const decision = await limiter.consume(`${family}:${principal.organizationId}`);
  context.rateLimit = decision;
  if (!decision.allowed) throw new RateLimitedError(decision.resetSeconds);
}

const REST_FAMILIES: [RegExp, RateLimitFamily][] = [
  [/^\/collections\/[^/]+\/search(\/|$)/, 'search'],
  [/^\/collections(\/|$)/, 'collections'],
  [/^\/source-connections(\/|$)/, 'source_connections'],
  [/^\/sources(\/|$)/, 'sources'],
  [/^\/webhooks(\/|$)/, 'webhooks'],
];

/**
 * The budget a REST path (its OpenAPI template) draws on: the same as its GraphQL operations' guards.
 * The REST facade needs it for requests refused before any GraphQL runs (a 422 from the OpenAPI
 * validation), so bad input does not dodge the limit.
 */
export function rateLimitFamilyOfPath(path: string): RateLimitFamily | undefined {
  return REST_FAMILIES.find(([pattern]) => pattern.test(path))?.[1];
}

export function Guard(rule: GuardRule): MiddlewareFn<GraphQLContext> {
  return async ({ context }, next) => {
    await checkAccess(context, rule);
    return next();
  };
}

/** The principal a Guard has admitted. */
export function principalOf(context: GraphQLContext): Principal {
  if (!context.principal) throw new UnauthenticatedError('Missing credentials');
  return context.principal;
}
