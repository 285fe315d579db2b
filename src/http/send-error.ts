import type { Response } from 'express';
import { STATUS_BY_CODE } from '../graphql/errors.js';
import { DomainError, RateLimitedError, ValidationError } from '../shared/errors.js';
import type { RateLimitDecision } from '../platform/rate-limit/rate-limiter.js';

/** The contract's error bodies: `{detail: string}`, or `{detail: [{loc, msg, type}]}` for 422. */
export function sendError(res: Response, error: DomainError, locationPrefix?: string): void {
  const status = STATUS_BY_CODE[error.code] ?? 500;
  if (error instanceof RateLimitedError) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer, ApiKey header="x-api-key"');
  const detail =
    error instanceof ValidationError
      ? error.issues.map((issue) => ({ ...issue, loc: locationPrefix ? [locationPrefix, ...issue.loc] : issue.loc }))
      : error.message;
  res.status(status).json({ detail });
}

export function setRateLimitHeaders(res: Response, decision: RateLimitDecision | null): void {
  if (!decision) return;
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
}
