// The dashboard's date ranges and filters as its URL holds them and the API takes them.
import { describe, expect, it } from '@jest/globals';
import { describeFilter, formatFilter, parseFilter } from '../../web/src/dashboard/filters.ts';
import { change } from '../../web/src/dashboard/format.ts';
import { addDays, rangeOf, todayIn } from '../../web/src/dashboard/range.ts';

// 2026-03-01 02:30 UTC: still 28 February in New York, already 1 March in Tokyo.
const NOW = new Date('2026-03-01T02:30:00Z');

describe('dashboard date ranges', () => {
  it("takes today from the site's clock, not the browser's", () => {
    expect(todayIn('America/New_York', NOW)).toBe('2026-02-28');
    expect(todayIn('Asia/Tokyo', NOW)).toBe('2026-03-01');
  });

  it.each([
    ['today', { from: '2026-02-28', to: '2026-02-28' }],
    ['realtime', { from: '2026-02-28', to: '2026-02-28' }],
    ['7d', { from: '2026-02-22', to: '2026-02-28' }],
    ['30d', { from: '2026-01-30', to: '2026-02-28' }],
    ['month', { from: '2026-02-01', to: '2026-02-28' }],
  ] as const)('%s covers the whole local days, today included', (period, expected) => {
    expect(rangeOf(period, 'America/New_York', {}, NOW)).toEqual(expected);
  });

  it('takes custom dates as given, in order, and falls back to 30 days when they are not dates', () => {
    expect(rangeOf('custom', 'UTC', { from: '2026-01-05', to: '2026-01-09' }, NOW)).toEqual({ from: '2026-01-05', to: '2026-01-09' });
    expect(rangeOf('custom', 'UTC', { from: '2026-01-09', to: '2026-01-05' }, NOW)).toEqual({ from: '2026-01-05', to: '2026-01-09' });
    expect(rangeOf('custom', 'UTC', { from: 'yesterday', to: '2026-01-05' }, NOW)).toEqual({ from: '2026-01-31', to: '2026-03-01' });
  });

  it('adds days across month and year ends', () => {
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
  });
});

describe('dashboard filters', () => {
  it('keeps colons in the value: only the first two separate dimension and operator', () => {
    const filter = parseFilter('referrer:is:https://news.example/a:b');
    expect(filter).toEqual({ dimension: 'referrer', op: 'is', value: 'https://news.example/a:b' });
    expect(formatFilter(filter!)).toBe('referrer:is:https://news.example/a:b');
  });

  it('ignores unknown dimensions and operators instead of sending them', () => {
    expect(parseFilter('password:is:x')).toBeNull();
    expect(parseFilter('page:like:/x')).toBeNull();
    expect(parseFilter('page')).toBeNull();
  });

  it('describes a filter in words, countries by name', () => {
    expect(describeFilter({ dimension: 'page', op: 'is_not', value: '/pricing' })).toBe('Page is not /pricing');
    expect(describeFilter({ dimension: 'country', op: 'is', value: 'DE' })).toMatch(/^Country is (Germany|Deutschland)$/);
  });
});

describe('KPI changes', () => {
  it('is the change in percent, one decimal; none when there was nothing before', () => {
    expect(change(150, 100)).toBe(50);
    expect(change(2, 3)).toBe(-33.3);
    expect(change(0, 0)).toBe(0);
    expect(change(5, 0)).toBeNull();
    expect(change(5, undefined)).toBeNull();
  });
});
