// Per-IP token buckets for the ingest, API and sign-in routes: a steady rate per second plus a burst
// allowance (rate-limiter-flexible's BurstyRateLimiter rule). In memory on a single node (counted
// here, the same way); in Redis when PLUMB_REDIS_URL is set, so a client cannot multiply its budget
// by the number of nodes. If Redis fails, in-memory buckets take over rather than letting
// everything through or nothing.
import { Redis } from 'ioredis';
import { BurstyRateLimiter, type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { rateLimited } from '../errors.ts';
import type { Log } from '../log.ts';

export type RateLimitKind = 'ingest' | 'api' | 'login';

export interface RateLimits {
  /**
   * Spends one token of `kind` for `key` (the client IP); throws 429 with Retry-After when empty.
   * In memory it answers at once (undefined, or a synchronous throw); with Redis, a promise.
   */
  consume(kind: RateLimitKind, key: string): Promise<void> | undefined;
  close(): Promise<void>;
}

interface Bucket {
  /** Steady tokens per `seconds`. */
  points: number;
  seconds: number;
  /** Extra tokens per ten times that window. */
  burst: number;
}

type LimitSettings = Pick<Config, 'ingestRatePerSecond' | 'ingestBurst' | 'apiRatePerSecond' | 'apiBurst' | 'loginRatePerMinute' | 'loginBurst'>;

function buckets(config: LimitSettings): Record<RateLimitKind, Bucket> {
  return {
    ingest: { points: config.ingestRatePerSecond, seconds: 1, burst: config.ingestBurst },
    api: { points: config.apiRatePerSecond, seconds: 1, burst: config.apiBurst },
    // Password guessing: a few attempts a minute per IP.
    login: { points: config.loginRatePerMinute, seconds: 60, burst: config.loginBurst },
  };
}

export function createRateLimits(config: LimitSettings & Pick<Config, 'redisUrl' | 'namespace'>, log: Log): RateLimits {
  if (!config.redisUrl) return memoryRateLimits(config);
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', (err: Error) => log.warn({ err: err.message }, 'rate limits: Redis unavailable, using in-memory buckets'));

  const build = (kind: RateLimitKind, bucket: Bucket): BurstyRateLimiter => {
    const limiter = (name: string, points: number, duration: number): RateLimiterAbstract => {
      const memory = new RateLimiterMemory({ keyPrefix: `${kind}:${name}`, points, duration });
      return new RateLimiterRedis({ storeClient: redis, keyPrefix: `${config.namespace}:rl:${kind}:${name}`, points, duration, insuranceLimiter: memory });
    };
    // The steady bucket refills every window; the burst bucket allows short spikes over ten windows.
    return new BurstyRateLimiter(limiter('rate', bucket.points, bucket.seconds), limiter('burst', bucket.burst, bucket.seconds * 10));
  };
  const settings = buckets(config);
  const limiters: Record<RateLimitKind, BurstyRateLimiter> = {
    ingest: build('ingest', settings.ingest),
    api: build('api', settings.api),
    login: build('login', settings.login),
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
      redis.disconnect();
    },
  };
}

/**
 * One fixed window per key, as rate-limiter-flexible's memory limiter counts (the first point
 * opens a window of `seconds`; past `points` in it the key is refused until it ends), without its
 * promise, result object and timer per call: on a single node this is on every ingest request.
 */
class MemoryWindow {
  private readonly points: number;
  private readonly ms: number;
  private readonly windows = new Map<string, { used: number; endsAt: number }>();
  private sweepAt = 1024;

  constructor(points: number, seconds: number) {
    this.points = points;
    this.ms = seconds * 1000;
  }

  /** Spends a point; 0 when allowed, else the milliseconds until the window ends. */
  spend(key: string, now: number): number {
    const window = this.windows.get(key);
    if (window !== undefined && window.endsAt > now) {
      window.used++;
      return window.used > this.points ? window.endsAt - now : 0;
    }
    if (window === undefined && this.windows.size >= this.sweepAt) this.sweep(now);
    this.windows.set(key, { used: 1, endsAt: now + this.ms });
    return 1 > this.points ? this.ms : 0;
  }

  /** Forgets ended windows, so memory follows the keys seen recently, not all keys ever seen. */
  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    this.sweepAt = Math.max(1024, this.windows.size * 2);
  }
}

/** Single node: the steady window first, the burst window only for what the steady one refuses (BurstyRateLimiter's rule). */
function memoryRateLimits(config: LimitSettings): RateLimits {
  const build = (bucket: Bucket) => ({ rate: new MemoryWindow(bucket.points, bucket.seconds), burst: new MemoryWindow(bucket.burst, bucket.seconds * 10) });
  const settings = buckets(config);
  const limiters: Record<RateLimitKind, { rate: MemoryWindow; burst: MemoryWindow }> = {
    ingest: build(settings.ingest),
    api: build(settings.api),
    login: build(settings.login),
  };
  return {
    consume(kind, key) {
      const { rate, burst } = limiters[kind];
      const now = Date.now();
      const rateWait = rate.spend(key, now);
      if (rateWait === 0) return undefined;
      const burstWait = burst.spend(key, now);
      if (burstWait === 0) return undefined;
      throw rateLimited(Math.max(1, Math.ceil(Math.min(rateWait, burstWait) / 1000)));
    },
    async close() {},
  };
}
