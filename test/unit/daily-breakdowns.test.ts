// The day arithmetic of the daily breakdowns: which UTC days of a range may be summed, what is
// left of the range for the visits, which count a day is read from, and when a chart's buckets
// hold whole UTC days.
import { describe, expect, it } from '@jest/globals';
import { firstOpenDay } from '../../lib/analytics/daily-breakdowns.ts';
import { bucketsHoldUtcDays, matchCounts, wholeClosedDays } from '../../lib/analytics/query/daily-breakdowns.ts';
import { rangeWithoutDays, type Scope } from '../../lib/analytics/query/sql.ts';

const scope = (from: string, to: string): Scope => ({ db: 'tenant_x', site: 's', from: new Date(from), to: new Date(to), filters: [] });
const iso = (intervals: [Date, Date][]) => intervals.map(([a, b]) => [a.toISOString(), b.toISOString()]);

describe('wholeClosedDays', () => {
  const now = new Date('2025-06-12T10:00:00Z');

  it('takes the UTC days wholly inside the range, not the partial ones at its ends', () => {
    expect(wholeClosedDays(scope('2025-05-31T22:00:00Z', '2025-06-05T22:00:00Z'), now)).toEqual({ first: '2025-06-01', end: '2025-06-05' });
    expect(wholeClosedDays(scope('2025-06-01T00:00:00Z', '2025-06-05T00:00:00Z'), now)).toEqual({ first: '2025-06-01', end: '2025-06-05' });
  });

  it('stops before today, and has none for a range inside one UTC day or in the future', () => {
    expect(wholeClosedDays(scope('2025-06-10T00:00:00Z', '2025-06-14T00:00:00Z'), now)).toEqual({ first: '2025-06-10', end: '2025-06-12' });
    expect(wholeClosedDays(scope('2025-06-03T01:00:00Z', '2025-06-03T23:00:00Z'), now)).toBeNull();
    expect(wholeClosedDays(scope('2025-06-02T22:00:00Z', '2025-06-03T22:00:00Z'), now)).toBeNull();
    expect(wholeClosedDays(scope('2025-06-12T00:00:00Z', '2025-06-13T00:00:00Z'), now)).toBeNull();
  });
});

describe('rangeWithoutDays', () => {
  it('leaves the partial days at the ends and the holes between counted days', () => {
    const left = rangeWithoutDays(new Date('2025-05-31T22:00:00Z'), new Date('2025-06-05T22:00:00Z'), ['2025-06-01', '2025-06-02', '2025-06-04']);
    expect(iso(left)).toEqual([
      ['2025-05-31T22:00:00.000Z', '2025-06-01T00:00:00.000Z'],
      ['2025-06-03T00:00:00.000Z', '2025-06-04T00:00:00.000Z'],
      ['2025-06-05T00:00:00.000Z', '2025-06-05T22:00:00.000Z'],
    ]);
  });

  it('leaves nothing when every day is counted, and the whole range when none is', () => {
    expect(rangeWithoutDays(new Date('2025-06-01T00:00:00Z'), new Date('2025-06-03T00:00:00Z'), ['2025-06-01', '2025-06-02'])).toEqual([]);
    expect(iso(rangeWithoutDays(new Date('2025-06-01T05:00:00Z'), new Date('2025-06-03T00:00:00Z'), []))).toEqual([['2025-06-01T05:00:00.000Z', '2025-06-03T00:00:00.000Z']]);
  });
});

describe('matchCounts', () => {
  it('reads a day from the count of its fingerprint now, the lowest id where two leaders counted it, and skips days whose visits moved on', () => {
    const current = [
      { day: '2025-06-01', fingerprint: '-5' },
      { day: '2025-06-02', fingerprint: '7' },
      { day: '2025-06-03', fingerprint: '9' },
    ];
    const counts = [
      { day: '2025-06-01', fingerprint: '-5', count_id: '18446744073709551615' },
      { day: '2025-06-01', fingerprint: '-5', count_id: '42' },
      { day: '2025-06-02', fingerprint: '6', count_id: '3' },
      { day: '2025-06-03', fingerprint: '9', count_id: '11' },
      { day: '2025-06-04', fingerprint: '9', count_id: '12' },
    ];
    expect(matchCounts(current, counts)).toEqual([
      { day: '2025-06-01', count: '42' },
      { day: '2025-06-03', count: '11' },
    ]);
  });
});

describe('bucketsHoldUtcDays', () => {
  it('holds for UTC and zones at UTC+0 through the range, not across a change of offset', () => {
    expect(bucketsHoldUtcDays(scope('2025-01-01T00:00:00Z', '2025-12-31T00:00:00Z'), 'UTC')).toBe(true);
    expect(bucketsHoldUtcDays(scope('2025-01-06T00:00:00Z', '2025-02-01T00:00:00Z'), 'Europe/London')).toBe(true);
    expect(bucketsHoldUtcDays(scope('2025-03-01T00:00:00Z', '2025-04-15T00:00:00Z'), 'Europe/London')).toBe(false);
    expect(bucketsHoldUtcDays(scope('2025-05-31T22:00:00Z', '2025-06-05T22:00:00Z'), 'Europe/Berlin')).toBe(false);
  });
});

describe('firstOpenDay', () => {
  it('closes a day a quarter of an hour after its midnight', () => {
    expect(firstOpenDay(new Date('2025-06-12T00:14:00Z'))).toBe('2025-06-11');
    expect(firstOpenDay(new Date('2025-06-12T00:16:00Z'))).toBe('2025-06-12');
  });
});
