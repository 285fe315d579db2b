import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (and, when refused, until a retry may succeed). */
  resetSeconds: number;
}

/** Fixed-window counter per key. In memory for one process; in Redis when processes share limits. */
export interface RateLimiter {
  consume(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export function createRateLimiter(options: { points: number; windowSeconds: number; redisUrl?: string; keyPrefix?: string }): RateLimiter | null {
  if (options.points === 0) return null;
  const redis = options.redisUrl ? new Redis(options.redisUrl, { maxRetriesPerRequest: 3 }) : null;
  redis?.on('error', () => {}); // reconnects by itself; requests meanwhile fail and are reported there
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ storeClient: redis, points: options.points, duration: options.windowSeconds, keyPrefix: options.keyPrefix ?? 'catchment:rl' })
    : new RateLimiterMemory({ points: options.points, duration: options.windowSeconds });

  const decide = (result: RateLimiterRes, allowed: boolean): RateLimitDecision => ({
    allowed,
    limit: options.points,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
  });

  return {
    async consume(key) {
      try {
        return decide(await limiter.consume(key), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decide(rejection, false);
        throw rejection;
      }
    },
    async close() {
      await redis?.quit();
    },
  };
}
