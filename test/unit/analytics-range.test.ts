import { describe, expect, it } from '@jest/globals';
import { localDate, parseRange, previousPeriod, previousYear, startOfLocalDay } from '../../lib/analytics/range.ts';

const iso = (d: Date) => d.toISOString();

describe('startOfLocalDay', () => {
  it('finds local midnight in UTC, east and west of Greenwich', () => {
    expect(iso(startOfLocalDay('2026-07-01', 'UTC'))).toBe('2026-07-01T00:00:00.000Z');
    expect(iso(startOfLocalDay('2026-07-01', 'Europe/Berlin'))).toBe('2026-06-30T22:00:00.000Z');
    expect(iso(startOfLocalDay('2026-01-15', 'Europe/Berlin'))).toBe('2026-01-14T23:00:00.000Z');
    expect(iso(startOfLocalDay('2026-07-01', 'America/New_York'))).toBe('2026-07-01T04:00:00.000Z');
    expect(iso(startOfLocalDay('2026-07-01', 'Asia/Kolkata'))).toBe('2026-06-30T18:30:00.000Z');
  });
});

describe('parseRange', () => {
  it('turns local dates into a half-open UTC interval, to inclusive', () => {
    const range = parseRange({ from: '2026-03-01', to: '2026-03-31' }, 'UTC');
    expect([iso(range.from), iso(range.to)]).toEqual(['2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z']);
  });

  it('gives DST days their true length (Berlin: 23 h in spring, 25 h in autumn)', () => {
    const spring = parseRange({ from: '2026-03-29', to: '2026-03-29' }, 'Europe/Berlin');
    expect([iso(spring.from), iso(spring.to)]).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    const autumn = parseRange({ from: '2026-10-25', to: '2026-10-25' }, 'Europe/Berlin');
    expect([iso(autumn.from), iso(autumn.to)]).toEqual(['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
  });

  it('accepts RFC 3339 instants as they are', () => {
    const range = parseRange({ from: '2026-03-01T10:00:00Z', to: '2026-03-01T12:30:00+02:00' }, 'Europe/Berlin');
    expect([iso(range.from), iso(range.to)]).toEqual(['2026-03-01T10:00:00.000Z', '2026-03-01T10:30:00.000Z']);
  });

  it('defaults to the last 30 local days including today', () => {
    const range = parseRange({}, 'UTC', new Date('2026-11-21T15:00:00Z'));
    expect([iso(range.from), iso(range.to)]).toEqual(['2026-10-23T00:00:00.000Z', '2026-11-22T00:00:00.000Z']);
  });

  it.each([
    [{ from: '2026-02-30', to: '2026-03-01' }, 'from must be a date'],
    [{ from: 'yesterday' }, 'from must be a date'],
    [{ from: '2026-03-02', to: '2026-03-01' }, 'to must be after from'],
    [{ from: '2000-01-01', to: '2026-01-01' }, 'at most 3660 days'],
  ])('refuses %j', (input, message) => {
    expect(() => parseRange(input, 'UTC')).toThrow(message);
  });
});

describe('comparison periods', () => {
  it('previous period has the same length, ending where the range starts', () => {
    const previous = previousPeriod(parseRange({ from: '2026-03-08', to: '2026-03-14' }, 'UTC'));
    expect([iso(previous.from), iso(previous.to)]).toEqual(['2026-03-01T00:00:00.000Z', '2026-03-08T00:00:00.000Z']);
  });

  it('previous year keeps the local dates, across DST', () => {
    const last = previousYear(parseRange({ from: '2026-07-01', to: '2026-07-31' }, 'Europe/Berlin'));
    expect([iso(last.from), iso(last.to)]).toEqual(['2025-06-30T22:00:00.000Z', '2025-07-31T22:00:00.000Z']);
  });
});

describe('localDate', () => {
  it('is the calendar date where the site is', () => {
    expect(localDate(new Date('2026-07-01T23:30:00Z'), 'Europe/Berlin')).toBe('2026-07-02');
    expect(localDate(new Date('2026-07-01T02:30:00Z'), 'America/New_York')).toBe('2026-06-30');
  });
});
