import { retryAfterMs } from '../http/retry-after.js';
import { s3ErrorOf } from './s3-answers.js';

/**
 * The retry loop of every client of the S3 REST API (the s3 source, the raw data store on object
 * storage): busy answers (5xx, 429, SlowDown and the other codes S3 documents as worth a retry) are
 * sent again after the wait the answer asks for (Retry-After) or a doubling backoff, each wait capped.
 */

/** Codes S3 answers for a busy or briefly unreachable service, whatever the status: the request may succeed when sent again. */
const RETRYABLE_CODES = new Set(['SlowDown', 'InternalError', 'ServiceUnavailable', 'RequestTimeout', 'RequestTimeTooSkewed']);

/** Whether an error answer says "try again later" rather than "this request is wrong". */
export const isBusyAnswer = (status: number, code: string) => status >= 500 || status === 429 || RETRYABLE_CODES.has(code);

/** What one send got: the status, headers and body (null when the caller's cap refused to read it). */
export interface S3Answer {
  status: number;
  headers: { get(name: string): string | null };
  body: Buffer | null;
}

export interface S3RetryPolicy {
  maxAttempts: number;
  firstBackoffMs: number;
  /** The longest single wait, asked for by the answer or not. */
  maxWaitMs: number;
  /** Whether a send that got no answer (DNS, a dropped connection, a timeout) is sent again; else its error is thrown at once. */
  retryNetworkErrors: boolean;
  /** Waits between sends (the source's waits end with the job's cancellation; tests record them). */
  wait(ms: number): Promise<void>;
  /** Told of each retry, for the caller's log. */
  onRetry?(retry: { attempt: number; waitMs: number; status: number | null; code: string }): void;
}

/**
 * Sends until an answer is not busy or the attempts run out, and returns the last answer with its S3
 * error code and message (empty for a success). The last network error is thrown as it came.
 */
export async function sendWithRetries(send: () => Promise<S3Answer>, policy: S3RetryPolicy): Promise<S3Answer & { code: string; message: string }> {
  const backoff = (attempt: number) => Math.min(policy.maxWaitMs, policy.firstBackoffMs * 2 ** (attempt - 1));
  for (let attempt = 1; ; attempt++) {
    let answer: S3Answer;
    try {
      answer = await send();
    } catch (error) {
      if (!policy.retryNetworkErrors || attempt >= policy.maxAttempts) throw error;
      const waitMs = backoff(attempt);
      policy.onRetry?.({ attempt, waitMs, status: null, code: '' });
      await policy.wait(waitMs);
      continue;
    }
    if (answer.status >= 200 && answer.status < 300) return { ...answer, code: '', message: '' };
    const { code, message } = s3ErrorOf(answer.body ?? Buffer.alloc(0));
    if (!isBusyAnswer(answer.status, code) || attempt >= policy.maxAttempts) return { ...answer, code, message };
    const asked = retryAfterMs(answer.headers);
    const waitMs = asked === null ? backoff(attempt) : Math.min(policy.maxWaitMs, asked);
    policy.onRetry?.({ attempt, waitMs, status: answer.status, code });
    await policy.wait(waitMs);
  }
}
