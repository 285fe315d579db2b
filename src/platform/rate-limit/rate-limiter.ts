import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../logger.js';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (and, when refused, until a retry may succeed). */
  resetSeconds: number;
}

/**
 * Fixed-window counter per key. In memory for one process; in Redis when processes share limits,
 * with the in-memory counter standing in (and a warning logged) while Redis does not answer.
 */
export interface RateLimiter {
  consume(key: string): Promise<RateLimitDecision>;
}

/**
 * Where a process's rate limiters count: in Redis under `keyPrefix` when the deployment's processes
 * share their limits, one connection for all of them (named after the prefix), or nowhere shared
 * (each limiter counts in its own memory).
 */
export class RateLimitCounters {
  private constructor(
    /** Null: no Redis, each limiter counts in memory. */
    readonly redis: Redis | null,
    readonly keyPrefix: string,
  ) {}

  static open(options: { redisUrl?: string; keyPrefix?: string } = {}): RateLimitCounters {
    const keyPrefix = options.keyPrefix ?? 'catchment:rl';
    // No request waits on Redis: while it is down (or until it first answers) a command fails at
    // once, one that gets no answer fails after 500 ms, and the in-memory fallback decides.
    const redis = options.redisUrl
      ? new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, connectionName: keyPrefix.replace(/[^!-~]/g, '_') })
      : null;
    redis?.on('error', () => {}); // reconnects by itself; meanwhile the fallbacks count
    return new RateLimitCounters(redis, keyPrefix);
  }

  /**
   * Resolves once Redis answers (at once without Redis), or after `timeoutMs` if it does not: a process
   * that waits for it at start counts its first requests in the shared counters, not in their stand-ins.
   */
  async connected(timeoutMs: number): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      redis.once('ready', done);
    });
  }

  async close(): Promise<void> {
    if (this.redis?.status === 'ready') await this.redis.quit();
    else this.redis?.disconnect();
  }
}

/** ioredis states while a connection is being made. */
const CONNECTING = new Set(['wait', 'connecting', 'connect']);
/** Warnings about counting in memory are repeated at most this often while Redis stays unreachable. */
const FALLBACK_LOG_INTERVAL_MS = 60_000;

/**
 * The in-memory counter that stands in while Redis does not answer: limits then apply per
 * process instead of per deployment, which keeps the API answering at its normal latency.
 */
class FallbackLimiter extends RateLimiterMemory {
  constructor(
    options: { points: number; duration: number },
    private readonly onUse: () => void,
  ) {
    super(options);
  }

  override consume(key: string | number, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(key, points, options);
  }
}

/** A limiter of `points` requests per key and window, counting in `counters`; null when `points` is 0 (no limit). */
export function createRateLimiter(options: { points: number; windowSeconds: number; counters: RateLimitCounters; logger?: Logger }): RateLimiter | null {
  if (options.points === 0) return null;
  const { redis, keyPrefix } = options.counters;
  let lastFallbackLog = 0;
  const fallback = new FallbackLimiter({ points: options.points, duration: options.windowSeconds }, () => {
    // While a connection is being made (at start, for instance) the fallback is expected, not news.
    if (CONNECTING.has(redis!.status) || Date.now() - lastFallbackLog < FALLBACK_LOG_INTERVAL_MS) return;
    lastFallbackLog = Date.now();
    options.logger?.warn("rate limits: Redis does not answer, requests are counted in this process's memory until it does");
  });
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points: options.points,
        duration: options.windowSeconds,
        keyPrefix,
        rejectIfRedisNotReady: true,
        insuranceLimiter: fallback,
      })
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
  };
}
