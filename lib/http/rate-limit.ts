// Per-IP token buckets for the routes the spec limits: a steady rate per second plus a burst
// allowance (rate-limiter-flexible's BurstyRateLimiter). In memory on a single node; in Redis when
// PLUMB_REDIS_URL is set, so a client cannot multiply its budget by the number of nodes. If Redis
// fails, the in-memory buckets take over rather than letting everything through or nothing.
import { Redis } from 'ioredis';
import { BurstyRateLimiter, type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { rateLimited } from '../errors.ts';
import type { Log } from '../log.ts';

export type RateLimitKind = 'ingest' | 'api' | 'login';

export interface RateLimits {
  /** Spends one token of `kind` for `key` (the client IP); throws 429 with Retry-After when empty. */
  consume(kind: RateLimitKind, key: string): Promise<void>;
  close(): Promise<void>;
}

interface Bucket {
  /** Steady tokens per `seconds`. */
  points: number;
  seconds: number;
  /** Extra tokens per ten times that window. */
  burst: number;
}

export function createRateLimits(
  config: Pick<Config, 'redisUrl' | 'namespace' | 'ingestRatePerSecond' | 'ingestBurst' | 'apiRatePerSecond' | 'apiBurst' | 'loginRatePerMinute' | 'loginBurst'>,
  log: Log,
): RateLimits {
  const redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false }) : undefined;
  redis?.on('error', (err: Error) => log.warn({ err: err.message }, 'rate limits: Redis unavailable, using in-memory buckets'));

  const build = (kind: RateLimitKind, bucket: Bucket): BurstyRateLimiter => {
    const limiter = (name: string, points: number, duration: number): RateLimiterAbstract => {
      const memory = new RateLimiterMemory({ keyPrefix: `${kind}:${name}`, points, duration });
      if (!redis) return memory;
      return new RateLimiterRedis({ storeClient: redis, keyPrefix: `${config.namespace}:rl:${kind}:${name}`, points, duration, insuranceLimiter: memory });
    };
    // The steady bucket refills every window; the burst bucket allows short spikes over ten windows.
    return new BurstyRateLimiter(limiter('rate', bucket.points, bucket.seconds), limiter('burst', bucket.burst, bucket.seconds * 10));
  };

  const limiters: Record<RateLimitKind, BurstyRateLimiter> = {
    ingest: build('ingest', { points: config.ingestRatePerSecond, seconds: 1, burst: config.ingestBurst }),
    api: build('api', { points: config.apiRatePerSecond, seconds: 1, burst: config.apiBurst }),
    // Password guessing: a few attempts a minute per IP.
    login: build('login', { points: config.loginRatePerMinute, seconds: 60, burst: config.loginBurst }),
  };

  return {
    async consume(kind, key) {
      try {
        await limiters[kind].consume(key);
      } catch (err) {
        if (err instanceof RateLimiterRes) throw rateLimited(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
        throw err;
      }
    },
    async close() {
      redis?.disconnect();
    },
  };
}
