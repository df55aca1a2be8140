// The Redis rate limits against a real Redis (PLUMB_TEST_REDIS_URL, default 127.0.0.1:6379): the
// same token-bucket contract as the in-memory buckets, each test under a key prefix of its own.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { type RateLimits, redisRateLimits } from '../../lib/http/rate-limit.ts';
import { silentLog } from '../../lib/log.ts';
import { CONTRACT_LIMITS, outcome, rateLimitContract } from '../support/rate-limit-contract.ts';
import { REDIS_URL } from '../support/services.ts';

const PREFIX = `plumb-test-rl-${randomUUID()}`;
let raw: Redis;
const opened: RateLimits[] = [];

beforeAll(async () => {
  raw = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  try {
    await raw.connect();
  } catch (err) {
    throw new Error(`Redis is not reachable at ${REDIS_URL} (${(err as Error).message}). Start it (see .ci/run) or set PLUMB_TEST_REDIS_URL; these tests never skip.`);
  }
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((limits) => limits.close()));
});

afterAll(async () => {
  const keys = await raw.keys(`${PREFIX}:*`);
  if (keys.length > 0) await raw.del(...keys);
  raw.disconnect();
});

rateLimitContract('Redis', async (now) => {
  const limits = redisRateLimits({ ...CONTRACT_LIMITS, redisUrl: REDIS_URL, keyPrefix: `${PREFIX}:${randomUUID()}` }, silentLog, now);
  opened.push(limits);
  // Until connected, requests would be counted in memory, which would prove nothing here.
  await limits.ready;
  return limits;
});

describe('Redis rate limits', () => {
  it('share one bucket per client between nodes, so a client cannot multiply its budget by the number of nodes', async () => {
    const keyPrefix = `${PREFIX}:${randomUUID()}`;
    const nodes = [0, 1].map(() => redisRateLimits({ ...CONTRACT_LIMITS, redisUrl: REDIS_URL, keyPrefix }, silentLog, () => 0));
    opened.push(...nodes);
    await Promise.all(nodes.map((node) => node.ready));
    const results: string[] = [];
    for (let i = 0; i < 6; i++) results.push(await outcome(() => nodes[i % 2].consume('ingest', '1.1.1.1')));
    expect(results).toEqual(['200', '200', '200', '200', '200', '429 retry 1']);
    expect(await raw.exists(`${keyPrefix}:ingest:1.1.1.1`)).toBe(1);
  });
});
