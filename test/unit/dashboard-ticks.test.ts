// Where the dashboard's chart puts its axis labels: whole buckets of the range's interval on the
// x-axis (days for daily data, hours for a day, months for a long range), whole numbers on the y-axis.
import { describe, expect, it } from '@jest/globals';
import { localParts, tickLabel } from '../../web/src/dashboard/dates.ts';
import { countTicks, timeTicks } from '../../web/src/dashboard/ticks.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** `n` buckets `step` ms apart from `first` (UTC instants, as the stats API sends them). */
const buckets = (first: string, n: number, step: number) => Array.from({ length: n }, (_, i) => Date.parse(first) + i * step);

describe('the x-axis of a daily chart', () => {
  // 30 days of a site in Tokyo: each bucket starts at local midnight (15:00 UTC the day before).
  const days = buckets('2026-10-26T15:00:00Z', 30, DAY);

  it('labels days, never hours, as many as fit', () => {
    const ticks = timeTicks(days, 'day', 'Asia/Tokyo', 900);
    expect(ticks.length).toBeGreaterThan(7);
    expect(ticks.length * 60).toBeLessThanOrEqual(900);
    for (const i of ticks) expect(localParts(days[i], 'Asia/Tokyo').hour).toBe(0);
    expect(ticks.map((i) => tickLabel(days[i], 'day', 'Asia/Tokyo', false, 'en-US')).slice(0, 3)).toEqual(['Oct 27', 'Oct 29', 'Oct 31']);
  });

  it('spaces the labels evenly, a week apart on a phone', () => {
    const ticks = timeTicks(days, 'day', 'Asia/Tokyo', 300);
    expect(ticks).toEqual([0, 7, 14, 21, 28]);
  });
});

describe('the x-axis of an hourly chart (today)', () => {
  // A whole day in Tokyo, from local midnight.
  const hours = buckets('2026-11-24T15:00:00Z', 24, HOUR);

  it('labels round hours of the site’s clock', () => {
    const ticks = timeTicks(hours, 'hour', 'Asia/Tokyo', 900);
    expect(ticks.map((i) => localParts(hours[i], 'Asia/Tokyo').hour)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]);
    expect(ticks.slice(0, 3).map((i) => tickLabel(hours[i], 'hour', 'Asia/Tokyo', false, 'en-US'))).toEqual(['12 AM', '2 AM', '4 AM']);
    expect(timeTicks(hours, 'hour', 'Asia/Tokyo', 300).map((i) => localParts(hours[i], 'Asia/Tokyo').hour)).toEqual([0, 6, 12, 18]);
  });

  it('labels the hour repeated when clocks go back once (Berlin, a day of 25 hours)', () => {
    const day = buckets('2026-10-24T22:00:00Z', 25, HOUR);
    expect(day.map((ms) => localParts(ms, 'Europe/Berlin').hour).slice(0, 5)).toEqual([0, 1, 2, 2, 3]);
    const ticks = timeTicks(day, 'hour', 'Europe/Berlin', 700);
    expect(ticks.map((i) => localParts(day[i], 'Europe/Berlin').hour)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]);
  });

  it('names the day at midnight when the chart spans several days', () => {
    const twoDays = buckets('2026-11-23T15:00:00Z', 48, HOUR);
    const ticks = timeTicks(twoDays, 'hour', 'Asia/Tokyo', 300);
    expect(ticks.map((i) => tickLabel(twoDays[i], 'hour', 'Asia/Tokyo', true, 'en-GB'))).toEqual(['24 Nov', '12:00', '25 Nov', '12:00']);
    expect(ticks.map((i) => tickLabel(twoDays[i], 'hour', 'Asia/Tokyo', true, 'en-US'))).toEqual(['Nov 24', '12 PM', 'Nov 25', '12 PM']);
  });
});

describe('the x-axis of a monthly chart', () => {
  const months = ['2025-12-01', '2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01', '2026-05-01', '2026-06-01', '2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01', '2026-11-01'].map(
    (d) => Date.parse(`${d}T00:00:00Z`),
  );

  it('labels months, and only quarters from January when space is short', () => {
    expect(timeTicks(months, 'month', 'UTC', 1200)).toHaveLength(12);
    expect(timeTicks(months, 'month', 'UTC', 320).map((i) => tickLabel(months[i], 'month', 'UTC', false, 'en-US'))).toEqual(['Jan 2026', 'Apr 2026', 'Jul 2026', 'Oct 2026']);
  });
});

describe('the y-axis of counts', () => {
  it('counts in whole numbers, never halves', () => {
    expect(countTicks(3, 200)).toEqual({ top: 3, step: 1, ticks: [0, 1, 2, 3] });
    expect(countTicks(7, 200)).toEqual({ top: 8, step: 2, ticks: [0, 2, 4, 6, 8] });
    expect(countTicks(1234, 200)).toEqual({ top: 1500, step: 500, ticks: [0, 500, 1000, 1500] });
  });

  it('gives an empty chart 0 and 1', () => {
    expect(countTicks(0, 200).ticks).toEqual([0, 1]);
  });

  it('fits fewer ticks on a shorter chart', () => {
    expect(countTicks(10, 80).ticks).toEqual([0, 5, 10]);
  });
});
