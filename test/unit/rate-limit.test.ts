// The in-memory rate limits of a single node: a steady window per second, a burst window over ten
// of them used only for what the steady one refuses, 429 with Retry-After beyond both, and each
// key (client IP) and kind counted on its own.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { PlumbError } from '../../lib/errors.ts';
import { createRateLimits } from '../../lib/http/rate-limit.ts';
import { silentLog } from '../../lib/log.ts';

const limits = () =>
  createRateLimits(
    { redisUrl: undefined, namespace: 'plumb', ingestRatePerSecond: 3, ingestBurst: 2, apiRatePerSecond: 1, apiBurst: 1, loginRatePerMinute: 1, loginBurst: 1 },
    silentLog,
  );

/** The status of each call: 200 when allowed, else the error's status and Retry-After. */
function outcome(consume: () => unknown): string {
  try {
    const pending = consume();
    if (pending !== undefined) return 'pending';
    return '200';
  } catch (err) {
    const data = (err as PlumbError).data as { retry_after?: number };
    return `${(err as PlumbError).code} retry ${data.retry_after}`;
  }
}

beforeEach(() => {
  jest.useFakeTimers({ now: new Date('2026-11-21T10:00:00.000Z') });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('in-memory rate limits', () => {
  it('allows the steady rate, then the burst, then answers 429 with Retry-After, without a promise', () => {
    const rl = limits();
    const results = Array.from({ length: 7 }, () => outcome(() => rl.consume('ingest', '1.1.1.1')));
    expect(results).toEqual(['200', '200', '200', '200', '200', '429 retry 1', '429 retry 1']);
  });

  it('refills the steady window each second while the burst window lasts ten', () => {
    const rl = limits();
    for (let i = 0; i < 5; i++) rl.consume('ingest', '1.1.1.1');
    jest.advanceTimersByTime(1000);
    // A new second: three steady points again, but the burst is spent for the next nine seconds.
    const results = Array.from({ length: 4 }, () => outcome(() => rl.consume('ingest', '1.1.1.1')));
    expect(results).toEqual(['200', '200', '200', '429 retry 1']);
    jest.advanceTimersByTime(9000);
    expect(Array.from({ length: 6 }, () => outcome(() => rl.consume('ingest', '1.1.1.1')))).toEqual(['200', '200', '200', '200', '200', '429 retry 1']);
  });

  it('counts each IP and each kind on its own', () => {
    const rl = limits();
    for (let i = 0; i < 5; i++) rl.consume('ingest', '1.1.1.1');
    expect(outcome(() => rl.consume('ingest', '1.1.1.1'))).toBe('429 retry 1');
    expect(outcome(() => rl.consume('ingest', '2.2.2.2'))).toBe('200');
    expect(outcome(() => rl.consume('api', '1.1.1.1'))).toBe('200');
  });

  it('says how long until a minute-long window ends', () => {
    const rl = limits();
    expect([outcome(() => rl.consume('login', 'x')), outcome(() => rl.consume('login', 'x'))]).toEqual(['200', '200']);
    jest.advanceTimersByTime(20_000);
    expect(outcome(() => rl.consume('login', 'x'))).toBe('429 retry 40');
  });

  it('still counts correctly once windows of many past IPs have been swept', () => {
    const rl = limits();
    for (let i = 0; i < 3000; i++) rl.consume('ingest', `10.0.${i >> 8}.${i & 255}`);
    jest.advanceTimersByTime(11_000);
    for (let i = 0; i < 3000; i++) rl.consume('ingest', `10.1.${i >> 8}.${i & 255}`);
    expect(Array.from({ length: 6 }, () => outcome(() => rl.consume('ingest', '10.0.0.1')))).toEqual(['200', '200', '200', '200', '200', '429 retry 1']);
  });
});
