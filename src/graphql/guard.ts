import type { MiddlewareFn } from 'type-graphql';
import { roleAtLeast, type Role } from '../modules/organizations/organization.entity.js';
import type { Principal } from '../modules/organizations/principal.js';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '../shared/errors.js';
import type { GraphQLContext } from './context.js';

/** Resource families that share a rate-limit budget per organization. */
export type RateLimitFamily = 'collections' | 'source_connections' | 'sources' | 'webhooks';

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
  const limiter = context.services.rateLimiter;
  if (limiter && rule.family) {
    const decision = await limiter.consume(`${rule.family}:${principal.organizationId}`);
    context.rateLimit = decision;
    if (!decision.allowed) throw new RateLimitedError(decision.resetSeconds);
  }
  if (rule.usersOnly && principal.kind !== 'user') throw new ForbiddenError('This operation needs a bearer token of an admin or owner');
  if (!roleAtLeast(principal.role, rule.role)) throw new ForbiddenError(`This operation needs the ${rule.role} role or higher`);
  return principal;
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
