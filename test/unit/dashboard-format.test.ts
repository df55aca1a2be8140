// How the dashboard words its figures: counts with the right plural, one "(none)", one day format
// in the reader's locale for ranges, axes, legends and tables, and times on the site's clock.
import { describe, expect, it } from '@jest/globals';
import { bucketLabel, eventTime, formatDate, formatDateRange, tickLabel, timeOfDay, zoneNote } from '../../web/src/dashboard/dates.ts';
import { formatCount, formatMilliseconds, NONE, NOUNS, valueLabel } from '../../web/src/dashboard/format.ts';
import { previousRange } from '../../web/src/dashboard/range.ts';

/** Intl separates some parts with thin or no-break spaces; the words are what matter here. */
const plain = (text: string) => text.replace(/\s/g, ' ');

describe('counts', () => {
  it('say "1 visitor" and "2 visitors"', () => {
    expect(formatCount(1, NOUNS.visitor)).toBe('1 visitor');
    expect(formatCount(2, NOUNS.visitor)).toBe('2 visitors');
    expect(formatCount(0, NOUNS.visitor)).toBe('0 visitors');
    expect(formatCount(1, NOUNS.currentVisitor)).toBe('1 current visitor');
    expect(formatCount(3, NOUNS.session)).toBe('3 sessions');
  });
});

describe('short times', () => {
  it('keep two significant digits, and turn to seconds from a second on', () => {
    expect(formatMilliseconds(0.3123)).toBe('0.31 ms');
    expect(formatMilliseconds(2.46)).toBe('2.5 ms');
    expect(formatMilliseconds(34.4)).toBe('34 ms');
    expect(formatMilliseconds(994)).toBe('990 ms');
    expect(formatMilliseconds(999)).toBe('1 s');
    expect(formatMilliseconds(1234)).toBe('1.2 s');
  });
});

describe('no value', () => {
  it('is "(none)" whatever the panel', () => {
    expect(NONE).toBe('(none)');
    expect(valueLabel('')).toBe('(none)');
    expect(valueLabel('Google')).toBe('Google');
  });
});

describe('dates in the reader’s locale', () => {
  it('write a range with one day format', () => {
    expect(plain(formatDateRange({ from: '2026-10-27', to: '2026-11-25' }, 'en-US'))).toBe('Oct 27 – Nov 25, 2026');
    expect(plain(formatDateRange({ from: '2026-10-27', to: '2026-11-25' }, 'en-GB'))).toBe('27 Oct – 25 Nov 2026');
    expect(plain(formatDateRange({ from: '2026-11-25', to: '2026-11-25' }, 'en-US'))).toBe('Nov 25, 2026');
  });

  it('name a day the same way on the axis, in the legend and in the range', () => {
    // Local midnight of 25 November in Tokyo.
    const day = Date.parse('2026-11-24T15:00:00Z');
    for (const locale of ['en-US', 'en-GB', 'de-DE']) {
      const tick = tickLabel(day, 'day', 'Asia/Tokyo', false, locale);
      expect(plain(formatDate('2026-11-25', locale))).toContain(plain(tick));
      expect(plain(bucketLabel(day, 'day', 'Asia/Tokyo', locale))).toContain(plain(tick));
    }
    expect(plain(bucketLabel(day, 'day', 'Asia/Tokyo', 'en-US'))).toBe('Wed, Nov 25, 2026');
    expect(plain(bucketLabel(day, 'week', 'Asia/Tokyo', 'en-GB'))).toBe('Week of 25 Nov 2026');
    expect(plain(bucketLabel(day, 'month', 'Asia/Tokyo', 'en-US'))).toBe('Nov 2026');
  });

  it('give hours on the site’s clock in the locale’s own style', () => {
    const twoPmInTokyo = Date.parse('2026-11-25T05:00:00Z');
    expect(tickLabel(twoPmInTokyo, 'hour', 'Asia/Tokyo', false, 'en-US')).toBe('2 PM');
    expect(tickLabel(twoPmInTokyo, 'hour', 'Asia/Tokyo', false, 'de-DE')).toBe('14:00');
    expect(plain(bucketLabel(twoPmInTokyo, 'hour', 'Asia/Tokyo', 'en-US'))).toBe('Wed, Nov 25, 2026, 2:00 PM');
    expect(timeOfDay('2026-11-25T05:00:07Z', 'Asia/Tokyo', 'en-GB')).toBe('14:00:07');
  });

  it('give an event of an earlier day on the site’s clock its day as well', () => {
    // 00:30 on 26 November in Tokyo (still the 25th in UTC): 23:00 the day before is another day there.
    const now = '2026-11-25T15:30:00Z';
    expect(eventTime('2026-11-25T15:10:00Z', now, 'Asia/Tokyo', 'en-GB')).toBe('00:10:00');
    expect(plain(eventTime('2026-11-25T14:00:00Z', now, 'Asia/Tokyo', 'en-GB'))).toBe('25 Nov, 23:00:00');
    expect(eventTime('2026-11-25T14:00:00Z', now, 'UTC', 'en-GB')).toBe('14:00:00');
  });
});

describe('the time zone note', () => {
  it('names the site’s zone and its offset', () => {
    expect(zoneNote('Asia/Tokyo')).toBe('Times in Asia/Tokyo (GMT+9)');
    expect(zoneNote('America/New_York', new Date('2026-07-01T12:00:00Z'))).toBe('Times in America/New_York (GMT-4)');
    expect(zoneNote('UTC')).toBe('Times in UTC');
  });
});

describe('the previous period', () => {
  it('is as many days right before the range', () => {
    expect(previousRange({ from: '2026-10-27', to: '2026-11-25' })).toEqual({ from: '2026-09-27', to: '2026-10-26' });
    expect(previousRange({ from: '2026-11-25', to: '2026-11-25' })).toEqual({ from: '2026-11-24', to: '2026-11-24' });
  });
});
