import { GraphQLError, subscribe, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { UnauthenticatedError } from '../shared/errors.js';
import type { GraphQLContext } from './context.js';

/**
 * How often an open stream re-checks its caller's credentials. With the API key cache's TTL
 * (1 s) on top, a key revoked by another process ends its streams within about 2 s; one revoked
 * by this process, or a token that expires, within about 1 s.
 */
export const CREDENTIAL_CHECK_MS = 1000;

export type SubscriptionArgs = ExecutionArgs & { contextValue: GraphQLContext };

/**
 * graphql's `subscribe` for every transport (graphql-sse, the REST facade's SSE): a stream lives
 * only as long as the credentials it was opened with. Once they lapse (API key revoked, bearer
 * token expired), the stream emits one UNAUTHENTICATED error result and ends, which also stops
 * what feeds it (the agent of an agentic search, a pub/sub subscription).
 */
export async function subscribeWhileCredentialsHold(args: SubscriptionArgs, checkEveryMs = CREDENTIAL_CHECK_MS): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const result = await subscribe(args);
  const principal = args.contextValue.principal;
  if (!(Symbol.asyncIterator in result) || !principal) return result;
  return untilCredentialsLapse(result, () => args.contextValue.services.auth.recheck(principal), checkEveryMs);
}

/**
 * `events`, ended by an error result as soon as `recheck` throws UnauthenticatedError. Other
 * failures of `recheck` (the database briefly unreachable) keep the stream open until the next
 * check: an outage must not cut every stream. Written as a plain iterator rather than an async
 * generator so that `return()` (the client leaving) takes effect at once, even while waiting.
 */
export function untilCredentialsLapse(events: AsyncIterableIterator<ExecutionResult>, recheck: () => Promise<void>, checkEveryMs: number): AsyncIterableIterator<ExecutionResult> {
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  let reportLapse!: (error: UnauthenticatedError) => void;
  const lapsed = new Promise<UnauthenticatedError>((resolve) => (reportLapse = resolve));
  const scheduleCheck = () => {
    timer = setTimeout(() => {
      recheck().then(
        () => !ended && scheduleCheck(),
        (error: unknown) => (error instanceof UnauthenticatedError ? reportLapse(error) : !ended && scheduleCheck()),
      );
    }, checkEveryMs);
    timer.unref();
  };
  const end = async () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    await events.return?.();
  };
  scheduleCheck();

  const iterator: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      if (ended) return { value: undefined, done: true };
      const outcome = await Promise.race([events.next(), lapsed]);
      if (outcome instanceof UnauthenticatedError) {
        await end();
        return { value: { errors: [new GraphQLError(outcome.message, { originalError: outcome, extensions: { code: outcome.code } })] }, done: false };
      }
      if (outcome.done) await end();
      return outcome;
    },
    async return() {
      await end();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
