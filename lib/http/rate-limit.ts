// Per-IP token buckets for the ingest, API and sign-in routes. Each bucket holds the steady rate's window
// (one second, or a minute for sign-in) plus the burst, starts full, and refills continuously at
// the steady rate; a request takes one token, and with none left it is refused with 429 and a
// Retry-After of the time until the next token. One rule, counted in two places with the same
// arithmetic: in memory on a single node, in Redis (a Lua script) when PLUMB_REDIS_URL is set, so
// a client cannot multiply its budget by the number of nodes. If Redis fails, the in-memory
// buckets take over rather than letting everything through or nothing.
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { rateLimited } from '../errors.ts';
import type { Log } from '../log.ts';

export type RateLimitKind = 'ingest' | 'api' | 'login';

export interface RateLimits {
  /**
   * Takes one token of `kind` for `key` (the client IP); throws 429 with Retry-After when empty.
   * In memory it answers at once (undefined, or a synchronous throw); with Redis, a promise.
   */
  consume(kind: RateLimitKind, key: string): Promise<void> | undefined;
  close(): Promise<void>;
}

/** A bucket's shape: how many tokens it holds when full, and how fast it refills. */
export interface BucketRule {
  capacity: number;
  tokensPerMs: number;
}

type LimitSettings = Pick<Config, 'ingestRatePerSecond' | 'ingestBurst' | 'apiRatePerSecond' | 'apiBurst' | 'loginRatePerMinute' | 'loginBurst'>;

export function bucketRules(config: LimitSettings): Record<RateLimitKind, BucketRule> {
  const rule = (perWindow: number, windowMs: number, burst: number): BucketRule => ({ capacity: perWindow + burst, tokensPerMs: perWindow / windowMs });
  return {
    ingest: rule(config.ingestRatePerSecond, 1000, config.ingestBurst),
    api: rule(config.apiRatePerSecond, 1000, config.apiBurst),
    // Password guessing: a few attempts a minute per IP.
    login: rule(config.loginRatePerMinute, 60_000, config.loginBurst),
  };
}

/** Seconds a refused client is told to wait: until the next token, at least one. */
const retryAfterSeconds = (waitMs: number) => Math.max(1, Math.ceil(waitMs / 1000));

/**
 * The bucket arithmetic of the memory backend; the Redis script below is the same, line for line.
 * Tokens are refilled for the time since the bucket was last touched (never for a clock that went
 * back), capped at the capacity; one is taken if there is one. Answers 0 when a token was taken,
 * else the milliseconds until one will be there.
 */
export function takeToken(bucket: { tokens: number; at: number }, rule: BucketRule, now: number): number {
  const elapsed = Math.max(0, now - bucket.at);
  const tokens = Math.min(rule.capacity, bucket.tokens + elapsed * rule.tokensPerMs);
  bucket.at = Math.max(bucket.at, now);
  if (tokens >= 1) {
    bucket.tokens = tokens - 1;
    return 0;
  }
  bucket.tokens = tokens;
  return Math.ceil((1 - tokens) / rule.tokensPerMs);
}

/**
 * KEYS[1] the bucket; ARGV capacity, tokens per ms, now (ms). The bucket is a hash {tokens, at}
 * that expires once it would be full again, so idle clients cost nothing. Redis turns a returned
 * number into an integer, which the wait already is.
 */
const TAKE_TOKEN_LUA = `
local capacity = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
local elapsed = math.max(0, now - at)
tokens = math.min(capacity, tokens + elapsed * per_ms)
at = math.max(at, now)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / per_ms)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.17g', at))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((capacity - tokens) / per_ms)))
return wait
`;

/**
 * Single node: one map of buckets per kind, taken synchronously (this is on every ingest request,
 * so no promise, result object or timer per call). Buckets that have refilled are forgotten as
 * the map grows, so memory follows the clients seen recently, not all clients ever seen.
 */
export function memoryRateLimits(config: LimitSettings, now: () => number = Date.now): RateLimits & { wait(kind: RateLimitKind, key: string): number } {
  const rules = bucketRules(config);
  const buckets: Record<RateLimitKind, Map<string, { tokens: number; at: number }>> = { ingest: new Map(), api: new Map(), login: new Map() };
  const sweepAt: Record<RateLimitKind, number> = { ingest: 1024, api: 1024, login: 1024 };

  const sweep = (kind: RateLimitKind, at: number) => {
    const rule = rules[kind];
    for (const [key, bucket] of buckets[kind]) if (bucket.tokens + (at - bucket.at) * rule.tokensPerMs >= rule.capacity) buckets[kind].delete(key);
    sweepAt[kind] = Math.max(1024, buckets[kind].size * 2);
  };

  /** Takes a token; 0 when allowed, else the milliseconds until the next token. */
  const wait = (kind: RateLimitKind, key: string): number => {
    const at = now();
    let bucket = buckets[kind].get(key);
    if (bucket === undefined) {
      if (buckets[kind].size >= sweepAt[kind]) sweep(kind, at);
      bucket = { tokens: rules[kind].capacity, at };
      buckets[kind].set(key, bucket);
    }
    return takeToken(bucket, rules[kind], at);
  };

  return {
    wait,
    consume(kind, key) {
      const waitMs = wait(kind, key);
      if (waitMs > 0) throw rateLimited(retryAfterSeconds(waitMs));
      return undefined;
    },
    async close() {},
  };
}

type TakeTokenCommand = (key: string, capacity: number, tokensPerMs: number, now: number) => Promise<number>;

/**
 * Cluster: the buckets live in Redis under `<namespace>:rl:<kind>:<key>`, taken by one script
 * call each. A failed call (Redis down, a timeout) falls back to this node's memory buckets.
 */
export function redisRateLimits(
  config: LimitSettings & { redisUrl: string; keyPrefix: string },
  log: Log,
  now: () => number = Date.now,
): RateLimits & { ready: Promise<void> } {
  const rules = bucketRules(config);
  const fallback = memoryRateLimits(config, now);
  // A Redis that hangs is treated as one that is down: the request is counted here instead.
  // ioredis is loaded here, not with the module: a single node never needs it.
  let take: TakeTokenCommand | undefined;
  const connecting = import('ioredis').then(({ Redis }): Redis => {
    const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false, commandTimeout: 1000 });
    redis.on('error', (err: Error) => log.warn({ err: err.message }, 'rate limits: Redis unavailable, using in-memory buckets'));
    redis.defineCommand('plumbTakeToken', { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
    take = (redis as unknown as { plumbTakeToken: TakeTokenCommand }).plumbTakeToken.bind(redis);
    return redis;
  });

  return {
    // Until the connection is up, requests are counted in memory; tests wait for it.
    ready: connecting.then((redis) => new Promise((resolve) => redis.once('ready', () => resolve()))),
    async consume(kind, key) {
      const rule = rules[kind];
      let waitMs: number;
      try {
        if (!take) throw new Error('Redis is not connected yet');
        waitMs = Number(await take(`${config.keyPrefix}:${kind}:${key}`, rule.capacity, rule.tokensPerMs, now()));
      } catch {
        waitMs = fallback.wait(kind, key);
      }
      if (waitMs > 0) throw rateLimited(retryAfterSeconds(waitMs));
    },
    async close() {
      (await connecting).disconnect();
    },
  };
}

export function createRateLimits(config: LimitSettings & Pick<Config, 'redisUrl' | 'namespace'>, log: Log): RateLimits {
  if (!config.redisUrl) return memoryRateLimits(config);
  return redisRateLimits({ ...config, redisUrl: config.redisUrl, keyPrefix: `${config.namespace}:rl` }, log);
}
