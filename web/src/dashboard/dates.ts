// Dates and times as the dashboard shows them: the reader's locale (navigator.language) for the
// words and order, the SITE's time zone for the clock, and one day format ("Nov 25, 2026" in
// en-US, "25 Nov 2026" in en-GB) shared by the range, the chart's axis and legend and the tables.
import type { RangeView } from '../api.ts';

export type Interval = RangeView['interval'];

const LOCALE = typeof navigator === 'undefined' ? undefined : navigator.language;

const formats = new Map<string, Intl.DateTimeFormat>();
function format(timeZone: string, options: Intl.DateTimeFormatOptions, locale = LOCALE): Intl.DateTimeFormat {
  const key = `${locale ?? ''}|${timeZone}|${JSON.stringify(options)}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { ...options, timeZone });
    formats.set(key, f);
  }
  return f;
}

/** Hours as the locale writes them: "2 PM" where it counts twelve, "00:10" (two digits) where it counts 24. */
function hourStyle(locale: string | undefined): Intl.DateTimeFormatOptions['hour'] {
  return format('UTC', { hour: 'numeric' }, locale).resolvedOptions().hour12 ? 'numeric' : '2-digit';
}

const DAY: Intl.DateTimeFormatOptions = { day: 'numeric', month: 'short', year: 'numeric' };
const DAY_IN_YEAR: Intl.DateTimeFormatOptions = { day: 'numeric', month: 'short' };
const MONTH: Intl.DateTimeFormatOptions = { month: 'short', year: 'numeric' };

/** A calendar date (YYYY-MM-DD) as written everywhere: "Nov 25, 2026". */
export const formatDate = (date: string, locale = LOCALE) => format('UTC', DAY, locale).format(new Date(`${date}T00:00:00Z`));

/** Calendar dates from–to (both included): "Oct 27 – Nov 25, 2026", one date when they are the same. */
export function formatDateRange(range: { from: string; to: string }, locale = LOCALE): string {
  if (range.from === range.to) return formatDate(range.from, locale);
  return format('UTC', DAY, locale).formatRange(new Date(`${range.from}T00:00:00Z`), new Date(`${range.to}T00:00:00Z`));
}

/** The wall-clock fields of an instant on the site's clock. */
export function localParts(ms: number, timeZone: string): { year: number; month: number; day: number; hour: number; weekday: number } {
  const parts = Object.fromEntries(
    format(timeZone, { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', hourCycle: 'h23', weekday: 'short' }, 'en-US')
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour) % 24,
    weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(parts.weekday),
  };
}

/**
 * A bucket as the legend and the data table name it: "Wed, Nov 25, 2026, 2:00 PM" for an hour,
 * "Wed, Nov 25, 2026" for a day, "Week of Nov 23, 2026", "Nov 2026" for a month.
 */
export function bucketLabel(ms: number, interval: Interval, timeZone: string, locale = LOCALE): string {
  const date = new Date(ms);
  switch (interval) {
    case 'hour':
      return format(timeZone, { weekday: 'short', ...DAY, hour: hourStyle(locale), minute: '2-digit' }, locale).format(date);
    case 'day':
      return format(timeZone, { weekday: 'short', ...DAY }, locale).format(date);
    case 'week':
      return `Week of ${format(timeZone, DAY, locale).format(date)}`;
    case 'month':
      return format(timeZone, MONTH, locale).format(date);
  }
}

/**
 * A label under the chart: the hour ("2 PM"), the day for days and weeks ("Nov 25"), the month
 * ("Nov 2026"). Hourly charts over several days name the day at midnight instead of "12 AM".
 */
export function tickLabel(ms: number, interval: Interval, timeZone: string, severalDays = false, locale = LOCALE): string {
  const date = new Date(ms);
  if (interval === 'hour') {
    if (severalDays && localParts(ms, timeZone).hour === 0) return format(timeZone, DAY_IN_YEAR, locale).format(date);
    // "6 AM" where the locale counts twelve hours, "06:00" where it counts 24 ("06" alone reads as a day).
    const hour = hourStyle(locale);
    return format(timeZone, hour === 'numeric' ? { hour } : { hour, minute: '2-digit' }, locale).format(date);
  }
  if (interval === 'month') return format(timeZone, MONTH, locale).format(date);
  return format(timeZone, DAY_IN_YEAR, locale).format(date);
}

/** A time of day on the site's clock, to the second (realtime's events). */
export const timeOfDay = (iso: string, timeZone: string, locale = LOCALE) => format(timeZone, { hour: hourStyle(locale), minute: '2-digit', second: '2-digit' }, locale).format(new Date(iso));

/** An event's time on the site's clock, with its day when that is not the day of `now` there ("Nov 24, 2:27:23 AM"). */
export function eventTime(iso: string, now: string, timeZone: string, locale = LOCALE): string {
  const at = localParts(Date.parse(iso), timeZone);
  const today = localParts(Date.parse(now), timeZone);
  if (at.year === today.year && at.month === today.month && at.day === today.day) return timeOfDay(iso, timeZone, locale);
  return format(timeZone, { ...DAY_IN_YEAR, hour: hourStyle(locale), minute: '2-digit', second: '2-digit' }, locale).format(new Date(iso));
}

/** Which clock the figures follow: "Times in Asia/Tokyo (GMT+9)". */
export function zoneNote(timeZone: string, at = new Date()): string {
  const offset = format(timeZone, { timeZoneName: 'shortOffset' }, 'en-US')
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')?.value;
  return offset && !/^(Etc\/)?(UTC|GMT)$/.test(timeZone) ? `Times in ${timeZone} (${offset})` : `Times in ${timeZone}`;
}
