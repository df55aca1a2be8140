// The format checks of ingest fields at their edges: real calendar dates (leap years, month ends,
// offsets) and the accepted time window of a timestamp, and what counts as an absolute http(s) URL.
import { describe, expect, it } from '@jest/globals';
import { isHttpUrl, isReferrerUrl, timestampProblem } from '../../lib/ingest/fields.ts';

const NOW = Date.parse('2026-11-21T10:00:00Z');

describe('timestampProblem', () => {
  it.each([
    '2000-02-29T00:00:00Z',
    '2024-02-29T23:59:59.999Z',
    '2026-04-30T12:00:00+14:00',
    '2025-12-31T23:59:59-23:59',
    '2026-11-21T10:04:59Z',
    '2026-11-21T11:04:00+01:00',
    '2000-01-01T00:00:00Z',
  ])('accepts %s', (value) => {
    expect(timestampProblem(value, NOW)).toBeNull();
  });

  it.each([
    ['a 29 February outside a leap year', '2100-02-29T00:00:00Z'],
    ['a 31 April', '2026-04-31T00:00:00Z'],
    ['day 0', '2026-04-00T00:00:00Z'],
    ['month 0', '2026-00-10T00:00:00Z'],
    ['hour 24', '2026-11-20T24:00:00Z'],
    ['minute 60', '2026-11-20T10:60:00Z'],
    ['a leap second', '2016-12-31T23:59:60Z'],
    ['an offset of 24 hours', '2026-11-20T10:00:00+24:00'],
    ['an offset without a colon', '2026-11-20T10:00:00+0200'],
    ['no offset', '2026-11-20T10:00:00'],
    ['a space for T', '2026-11-20 10:00:00Z'],
    ['a date alone', '2026-11-20'],
    ['ten fraction digits', '2026-11-20T10:00:00.1234567890Z'],
  ])('refuses %s as not an RFC 3339 date-time', (_name, value) => {
    expect(timestampProblem(value, NOW)).toBe('dateTime');
  });

  it('refuses more than 5 minutes ahead of now, and anything before 2000', () => {
    expect(timestampProblem('2026-11-21T10:05:01Z', NOW)).toBe('dateTimeFuture');
    expect(timestampProblem('2026-11-21T12:00:00+01:00', NOW)).toBe('dateTimeFuture');
    expect(timestampProblem('1999-12-31T23:59:59.999Z', NOW)).toBe('dateTimePast');
    expect(timestampProblem('2000-01-01T00:30:00+01:00', NOW)).toBe('dateTimePast');
  });
});

describe('isHttpUrl', () => {
  it.each(['https://example.com', 'http://example.com:8080/a?b=c#d', 'HTTPS://Example.COM/', 'https://xn--bcher-kva.de/', 'https://bücher.de/a b'])(
    'accepts %s',
    (value) => {
      expect(isHttpUrl(value)).toBe(true);
    },
  );

  it.each([
    'https:example.com/',
    'https:/example.com/',
    'https://',
    'https://exa\tmple.com/',
    'https://example.com/\n',
    'https://example.com/\u0085',
    ' https://example.com/',
    'ftp://example.com/',
    'javascript:alert(1)',
    '//example.com/',
    '/path',
    'https://exa mple.com/',
  ])('refuses %j', (value) => {
    expect(isHttpUrl(value)).toBe(false);
  });
});

describe('isReferrerUrl', () => {
  it.each(['', 'https://www.google.com/', 'android-app://com.google.android.gm/', 'http://example.com:8080/a?b=c#d', 'HTTPS://Example.COM/'])('accepts %j', (value) => {
    // Twice: the second answer is the remembered one.
    expect(isReferrerUrl(value)).toBe(true);
    expect(isReferrerUrl(value)).toBe(true);
  });

  it.each(['google.com', '/path', '//example.com/', ' https://example.com/', 'https://exa\tmple.com/', 'https://example.com/\n', 'https://exa mple.com/', '1http://example.com/'])(
    'refuses %j',
    (value) => {
      expect(isReferrerUrl(value)).toBe(false);
      expect(isReferrerUrl(value)).toBe(false);
    },
  );
});
