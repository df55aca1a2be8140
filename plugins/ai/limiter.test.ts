// The AI plugin's process-level limiter: requests over a sliding minute, tokens over the UTC day.
import { describe, expect, it } from '@jest/globals';
import { createLimiter } from './limiter.ts';

describe('the AI limiter', () => {
  it('refuses a request over the per-minute count until the minute has passed', () => {
    let now = Date.parse('2026-03-10T12:00:00Z');
    const limiter = createLimiter({ requestsPerMinute: 2, tokensPerDay: 1000 }, () => now);
    expect([limiter.admit(), limiter.admit(), limiter.admit()]).toEqual([null, null, 'rate_limited']);
    now += 60_001;
    expect(limiter.admit()).toBeNull();
    expect(limiter.usage()).toEqual({ requests_last_minute: 1, requests_per_minute: 2, tokens_today: 0, tokens_per_day: 1000 });
  });

  it('refuses every request once the day’s tokens are spent, and counts afresh the next UTC day', () => {
    let now = Date.parse('2026-03-10T23:59:00Z');
    const limiter = createLimiter({ requestsPerMinute: 100, tokensPerDay: 1000 }, () => now);
    expect(limiter.admit()).toBeNull();
    limiter.spend(600);
    expect(limiter.admit()).toBeNull();
    limiter.spend(400);
    expect(limiter.admit()).toBe('budget_exceeded');
    now = Date.parse('2026-03-11T00:00:30Z');
    expect(limiter.admit()).toBeNull();
    expect(limiter.usage().tokens_today).toBe(0);
  });
});
