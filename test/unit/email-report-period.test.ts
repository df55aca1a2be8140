// The period a scheduled report covers, on the site's clock, and how a change is written.
import { describe, expect, it } from '@jest/globals';
import { reportPeriod } from '../../lib/email-reports/period.ts';
import { changeText } from '../../lib/email-reports/template.ts';
import { subscriptionOfToken, unsubscribeToken } from '../../lib/email-reports/subscriptions.ts';

describe('reportPeriod', () => {
  it('weekly: the previous Monday to Sunday, ending at local midnight', () => {
    expect(reportPeriod('weekly', 'UTC', new Date('2026-03-04T12:00:00Z'))).toEqual({
      current: { from: '2026-02-23', to: '2026-03-01' },
      previous: { from: '2026-02-16', to: '2026-02-22' },
      endedAt: new Date('2026-03-02T00:00:00Z'),
    });
  });

  it('weekly: a Monday morning in UTC that is still Sunday on the site’s clock belongs to the week before', () => {
    const sunday = reportPeriod('weekly', 'America/Los_Angeles', new Date('2026-03-02T05:00:00Z'));
    expect(sunday.current).toEqual({ from: '2026-02-16', to: '2026-02-22' });
    const monday = reportPeriod('weekly', 'America/Los_Angeles', new Date('2026-03-02T08:00:00Z'));
    expect(monday.current).toEqual({ from: '2026-02-23', to: '2026-03-01' });
    expect(monday.endedAt).toEqual(new Date('2026-03-02T08:00:00Z'));
  });

  it('weekly: a Sunday east of UTC is already the new week there', () => {
    expect(reportPeriod('weekly', 'Pacific/Auckland', new Date('2026-03-01T12:00:00Z')).current).toEqual({ from: '2026-02-23', to: '2026-03-01' });
  });

  it('monthly: the previous calendar month and the one before, across a year and a DST change', () => {
    expect(reportPeriod('monthly', 'Europe/Berlin', new Date('2026-01-10T12:00:00Z'))).toEqual({
      current: { from: '2025-12-01', to: '2025-12-31' },
      previous: { from: '2025-11-01', to: '2025-11-30' },
      endedAt: new Date('2025-12-31T23:00:00Z'),
    });
    const april = reportPeriod('monthly', 'Europe/Berlin', new Date('2026-04-01T00:30:00Z'));
    expect(april.current).toEqual({ from: '2026-03-01', to: '2026-03-31' });
    expect(april.previous).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    // Berlin is UTC+2 from 29 March: April starts at 22:00 UTC the day before.
    expect(april.endedAt).toEqual(new Date('2026-03-31T22:00:00Z'));
  });

  it('monthly: 23:30 UTC on the last day of a month is the next month in Tokyo', () => {
    expect(reportPeriod('monthly', 'Asia/Tokyo', new Date('2026-02-28T23:30:00Z')).current).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(reportPeriod('monthly', 'UTC', new Date('2026-02-28T23:30:00Z')).current).toEqual({ from: '2026-01-01', to: '2026-01-31' });
  });
});

describe('changeText', () => {
  it('writes the change against the period before', () => {
    expect(changeText({ current: 150, previous: 100 })).toBe('+50%');
    expect(changeText({ current: 90, previous: 100 })).toBe('−10%');
    expect(changeText({ current: 5, previous: 5 })).toBe('no change');
    expect(changeText({ current: 3, previous: 0 })).toBe('new');
    expect(changeText({ current: 0, previous: 4 })).toBe('−100%');
    expect(changeText({ current: 1001, previous: 1000 })).toBe('+<1%');
    expect(changeText({ current: 66.7, previous: 50 }, 'pts')).toBe('+16.7 pts');
    expect(changeText({ current: 40, previous: 52.5 }, 'pts')).toBe('−12.5 pts');
  });
});

describe('unsubscribe tokens', () => {
  const key = new Uint8Array(32).fill(7);
  const id = '6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a2b';

  it('name their subscription only when signed with this instance’s key', () => {
    const token = unsubscribeToken(key, id);
    expect(subscriptionOfToken(key, token)).toBe(id);
    expect(subscriptionOfToken(new Uint8Array(32).fill(8), token)).toBeNull();
    expect(subscriptionOfToken(key, `${id.replace('6f', '7f')}.${token.split('.')[1]}`)).toBeNull();
    expect(subscriptionOfToken(key, `${token}.x`)).toBeNull();
    expect(subscriptionOfToken(key, id)).toBeNull();
  });
});
