// The in-memory rate limits of a single node: the token-bucket contract every backend meets, taken
// without a promise, still right once the buckets of many past clients were forgotten, and the
// stand-in for Redis when Redis cannot be reached.
import { describe, expect, it } from '@jest/globals';
import { memoryRateLimits, redisRateLimits } from '../../lib/http/rate-limit.ts';
import { silentLog } from '../../lib/log.ts';
import { CONTRACT_LIMITS, outcome, rateLimitContract } from '../support/rate-limit-contract.ts';

rateLimitContract('memory', (now) => memoryRateLimits(CONTRACT_LIMITS, now));

describe('in-memory rate limits', () => {
  it('answers at once, without a promise, whether it allows or refuses', () => {
    const limits = memoryRateLimits(CONTRACT_LIMITS, () => 0);
    for (let i = 0; i < 5; i++) expect(limits.consume('ingest', '1.1.1.1')).toBeUndefined();
    expect(() => limits.consume('ingest', '1.1.1.1')).toThrow(expect.objectContaining({ code: 429 }));
  });

  it('still counts correctly once the buckets of many past clients have been forgotten', async () => {
    let now = 0;
    const limits = memoryRateLimits(CONTRACT_LIMITS, () => now);
    for (let i = 0; i < 3000; i++) limits.consume('ingest', `10.0.${i >> 8}.${i & 255}`);
    now += 2000;
    for (let i = 0; i < 3000; i++) limits.consume('ingest', `10.1.${i >> 8}.${i & 255}`);
    const results: string[] = [];
    for (let i = 0; i < 6; i++) results.push(await outcome(() => limits.consume('ingest', '10.1.0.1')));
    expect(results).toEqual(['200', '200', '200', '200', '429 retry 1', '429 retry 1']);
  });
});

describe('Redis rate limits when Redis cannot be reached', () => {
  it('count in this node’s memory instead, by the same rule', async () => {
    const limits = redisRateLimits({ ...CONTRACT_LIMITS, redisUrl: 'redis://127.0.0.1:1', keyPrefix: 'unreachable' }, silentLog, () => 0);
    try {
      const results: string[] = [];
      for (let i = 0; i < 6; i++) results.push(await outcome(() => limits.consume('ingest', '1.1.1.1')));
      expect(results).toEqual(['200', '200', '200', '200', '200', '429 retry 1']);
    } finally {
      await limits.close();
    }
  });
});
