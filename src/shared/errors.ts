/**
 * Domain errors thrown by services. They know nothing of HTTP or GraphQL: `describeError` in
 * src/graphql/errors.ts turns them into GraphQL error codes and the REST facade into statuses.
 */
export type ErrorLocation = (string | number)[];

export interface ValidationIssue {
  /**
   * Path of the offending input in the contract's (snake_case) field names, relative to the
   * operation's input; the REST facade prefixes `body`, `query` or `path`.
   */
  loc: ErrorLocation;
  msg: string;
  type: string;
}

export abstract class DomainError extends Error {
  abstract readonly code: string;
}

export class NotFoundError extends DomainError {
  readonly code = 'NOT_FOUND';

  static of(resource: string, id: string): NotFoundError {
    return new NotFoundError(`${resource} "${id}" not found`);
  }
}

export class ConflictError extends DomainError {
  readonly code = 'CONFLICT';
}

export class ValidationError extends DomainError {
  readonly code = 'BAD_USER_INPUT';
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; '));
  }
}

export class UnauthenticatedError extends DomainError {
  readonly code = 'UNAUTHENTICATED';
}

export class ForbiddenError extends DomainError {
  readonly code = 'FORBIDDEN';
}

export class RateLimitedError extends DomainError {
  readonly code = 'RATE_LIMITED';
  constructor(readonly retryAfterSeconds: number) {
    super(`Rate limit exceeded: retry after ${retryAfterSeconds} seconds`);
  }
}
