// Timeseries buckets in the site's time zone: which interval a range gets, the SQL expression
// that puts a hit in its bucket, and the full list of buckets so the chart has no gaps. Hours are
// keyed by their UTC instant, so the repeated local hour of an autumn DST change is two buckets
// and the skipped spring hour none; days, weeks (Monday first) and months by their local date.
import { validationFailed } from '../../errors.ts';
import { localDate, startOfLocalDay, type TimeRange, zoneOffsetMs } from '../range.ts';

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** An explicit interval finer than this many buckets for the range is refused (a chart, not a dump). */
export const MAX_BUCKETS = 5000;

/**
 * The range's length on the local wall clock: two whole local days are 48 hours even when a DST
 * change makes them 47 or 49 real hours, so they still get hourly buckets.
 */
function wallClockMs(range: TimeRange): number {
  const wall = (d: Date) => d.getTime() + zoneOffsetMs(range.timezone, d);
  return wall(range.to) - wall(range.from);
}

/** auto: ≤ 2 days → hour, ≤ 62 days → day, ≤ 26 weeks → week, else month. */
export function chooseInterval(range: TimeRange, requested?: Interval): Interval {
  if (requested) {
    if (bucketStarts(range, requested, MAX_BUCKETS + 1).length > MAX_BUCKETS) {
      throw validationFailed([{ field: 'interval', message: `interval ${requested} would give more than ${MAX_BUCKETS} buckets for this range; choose a coarser interval`, type: 'buckets' }]);
    }
    return requested;
  }
  const length = wallClockMs(range);
  if (length <= 2 * DAY_MS) return 'hour';
  if (length <= 62 * DAY_MS) return 'day';
  if (length <= 26 * 7 * DAY_MS) return 'week';
  return 'month';
}

/**
 * The ClickHouse expression giving a visit's bucket key (by the visit's start, or by `instant`): epoch seconds of
 * the local hour's start, or the local date starting the day, week or month (a Date, which rows
 * carry as 'YYYY-MM-DD'; grouping by it is cheaper than by its text). `{tz:String}` is bound.
 */
export function bucketSql(interval: Interval, instant = 'start'): string {
  const local = `toTimeZone(${instant}, {tz:String})`;
  switch (interval) {
    case 'hour':
      return `toUnixTimestamp(toStartOfHour(${local}))`;
    case 'day':
      return `toDate(${local})`;
    case 'week':
      return `toStartOfWeek(${local}, 1)`;
    case 'month':
      return `toStartOfMonth(${local})`;
  }
}

/** A bucket key from bucketSql → the UTC instant (ms) its bucket starts at. */
export function bucketKeyToMs(key: string | number, interval: Interval, timezone: string): number {
  return interval === 'hour' ? Number(key) * 1000 : startOfLocalDay(String(key), timezone).getTime();
}

const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

function addMonth(date: string): string {
  const [y, m] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}

/** Start of the local hour containing `ms` (zones with half-hour offsets included). */
function hourStart(ms: number, timezone: string): number {
  const local = ms + zoneOffsetMs(timezone, new Date(ms));
  return ms - (((local % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/**
 * Every bucket that overlaps [from, to), as UTC start instants, in order. The first may start
 * before `from` (a week containing it); its counts still include only hits inside the range.
 * Stops after `limit` buckets.
 */
export function bucketStarts(range: TimeRange, interval: Interval, limit = Number.POSITIVE_INFINITY): Date[] {
  const { timezone } = range;
  const to = range.to.getTime();
  const out: Date[] = [];
  if (interval === 'hour') {
    for (let b = hourStart(range.from.getTime(), timezone); b < to && out.length < limit; ) {
      out.push(new Date(b));
      const next = hourStart(b + HOUR_MS, timezone);
      b = next > b ? next : b + HOUR_MS;
    }
    return out;
  }
  let date = localDate(range.from, timezone);
  if (interval === 'week') date = addDays(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7));
  if (interval === 'month') date = `${date.slice(0, 7)}-01`;
  for (let start = startOfLocalDay(date, timezone); start.getTime() < to && out.length < limit; start = startOfLocalDay(date, timezone)) {
    out.push(start);
    date = interval === 'day' ? addDays(date, 1) : interval === 'week' ? addDays(date, 7) : addMonth(date);
  }
  return out;
}
