// The rate-limit contract: what the in-memory and the Redis buckets must do the same way. Each
// suite runs it with `open`, which builds limits on the given clock with these settings and keys
// no other test shares; expected values are written out.
import { describe, expect, it } from '@jest/globals';
import type { PlumbError } from '../../lib/errors.ts';
import type { RateLimits } from '../../lib/http/rate-limit.ts';

/** Ingest: 3 a second plus a burst of 2 (a full bucket holds 5). Sign-in: 1 a minute plus 1. */
export const CONTRACT_LIMITS = { ingestRatePerSecond: 3, ingestBurst: 2, apiRatePerSecond: 1, apiBurst: 1, loginRatePerMinute: 1, loginBurst: 1 };

export type OpenLimits = (now: () => number) => Promise<RateLimits> | RateLimits;

/** '200' when allowed, else the error's status and Retry-After. */
export async function outcome(pending: () => Promise<void> | undefined): Promise<string> {
  try {
    await pending();
    return '200';
  } catch (err) {
    const data = (err as PlumbError).data as { retry_after?: number };
    return `${(err as PlumbError).code} retry ${data.retry_after}`;
  }
}

export function rateLimitContract(backend: string, open: OpenLimits): void {
  /** Limits on a clock the test moves by hand. */
  async function started() {
    let now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const limits = await open(() => now);
    const take = (kind: 'ingest' | 'api' | 'login', key: string) => outcome(() => limits.consume(kind, key));
    const takeMany = async (count: number, kind: 'ingest' | 'api' | 'login', key: string) => {
      const results: string[] = [];
      for (let i = 0; i < count; i++) results.push(await take(kind, key));
      return results;
    };
    return { take, takeMany, advance: (ms: number) => (now += ms) };
  }

  describe(`rate limits (${backend})`, () => {
    it('allows a burst of the steady rate plus the burst at once, then answers 429 with Retry-After', async () => {
      const { takeMany } = await started();
      expect(await takeMany(7, 'ingest', '1.1.1.1')).toEqual(['200', '200', '200', '200', '200', '429 retry 1', '429 retry 1']);
    });

    it('refills at the steady rate, a token at a time', async () => {
      const { take, takeMany, advance } = await started();
      await takeMany(5, 'ingest', '1.1.1.1');
      advance(300);
      expect(await take('ingest', '1.1.1.1')).toBe('429 retry 1');
      advance(40);
      expect(await takeMany(2, 'ingest', '1.1.1.1')).toEqual(['200', '429 retry 1']);
      advance(1000);
      expect(await takeMany(4, 'ingest', '1.1.1.1')).toEqual(['200', '200', '200', '429 retry 1']);
    });

    it('never holds more than a full bucket, however long the client was idle', async () => {
      const { takeMany, advance } = await started();
      await takeMany(5, 'ingest', '1.1.1.1');
      advance(3_600_000);
      expect(await takeMany(6, 'ingest', '1.1.1.1')).toEqual(['200', '200', '200', '200', '200', '429 retry 1']);
    });

    it('says how long until the next token in Retry-After', async () => {
      const { take, takeMany, advance } = await started();
      expect(await takeMany(3, 'login', 'x')).toEqual(['200', '200', '429 retry 60']);
      advance(20_000);
      expect(await take('login', 'x')).toBe('429 retry 40');
      advance(39_001);
      expect(await take('login', 'x')).toBe('429 retry 1');
      advance(1000);
      expect(await takeMany(2, 'login', 'x')).toEqual(['200', '429 retry 60']);
    });

    it('counts each client and each kind on its own', async () => {
      const { take, takeMany } = await started();
      await takeMany(5, 'ingest', '1.1.1.1');
      expect(await take('ingest', '1.1.1.1')).toBe('429 retry 1');
      expect(await takeMany(5, 'ingest', '2.2.2.2')).toEqual(['200', '200', '200', '200', '200']);
      expect(await takeMany(3, 'api', '1.1.1.1')).toEqual(['200', '200', '429 retry 1']);
    });
  });
}
