// One event over time (GET /api/sites/:id/events/timeseries): unique sessions and events per
// hour, day, week or month of the site's time zone, every bucket of the range present (zeros
// where nothing happened), so a chart never has to guess at gaps.
import { validationFailed } from '../../errors.ts';
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import { localDate, startOfLocalDay, type TimeRange, zoneOffsetMs } from '../range.ts';
import type { EventQuery } from './filters.ts';
import { eventScope, JOIN_SETTINGS } from './scope.ts';

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface TimeseriesRow {
  /** Start of the bucket (local midnight or local hour start), as an RFC 3339 UTC instant. */
  bucket: string;
  unique_sessions: number;
  events: number;
}

export interface Timeseries {
  interval: Interval;
  rows: TimeseriesRow[];
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Hours up to this range length, days beyond (the automatic interval when none is asked for). */
const HOURLY_UP_TO_MS = 2 * DAY_MS;
/** A chart has no use for more points, and a 10-year hourly request would build 87,600 of them. */
export const MAX_BUCKETS = 5000;

/**
 * Each bucket's key as ClickHouse computes it in the site's zone. Hours come back as epoch
 * seconds, because a local hour label repeats on the night clocks go back; days, weeks and months
 * as the local date they start on, which JS turns into that date's local midnight.
 */
const BUCKET_KEY: Readonly<Record<Interval, string>> = {
  hour: 'toString(toUnixTimestamp(toStartOfHour(ts, {tz:String})))',
  day: 'toString(toDate(ts, {tz:String}))',
  week: 'toString(toMonday(ts, {tz:String}))',
  month: 'toString(toStartOfMonth(ts, {tz:String}))',
};

export function autoInterval(range: TimeRange): Interval {
  return range.to.getTime() - range.from.getTime() <= HOURLY_UP_TO_MS ? 'hour' : 'day';
}

const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The start instants (epoch ms) of every bucket that overlaps the range, in order. */
export function bucketStarts(range: TimeRange, interval: Interval): number[] {
  const from = range.from.getTime();
  const to = range.to.getTime();
  const starts: number[] = [];
  const push = (start: number) => {
    if (starts.length >= MAX_BUCKETS) {
      throw validationFailed([{ field: 'interval', message: `interval ${interval} would give more than ${MAX_BUCKETS} buckets for this range; choose a longer interval or a shorter range`, type: 'buckets' }]);
    }
    starts.push(start);
  };
  if (interval === 'hour') {
    // Local hours begin where UTC time plus the zone's offset is a whole hour; offsets move by
    // whole hours at DST changes, so stepping by 60 minutes in UTC walks the local hours.
    const offset = zoneOffsetMs(range.timezone, range.from);
    const first = from - ((((from + offset) % HOUR_MS) + HOUR_MS) % HOUR_MS);
    for (let start = first; start < to; start += HOUR_MS) push(start);
    return starts;
  }
  const lastDay = localDate(new Date(to - 1), range.timezone);
  let day = localDate(range.from, range.timezone);
  if (interval === 'week') day = addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
  if (interval === 'month') day = `${day.slice(0, 8)}01`;
  while (day <= lastDay) {
    push(startOfLocalDay(day, range.timezone).getTime());
    if (interval === 'day') day = addDays(day, 1);
    else if (interval === 'week') day = addDays(day, 7);
    else {
      const [y, m] = day.split('-').map(Number);
      day = new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
    }
  }
  return starts;
}

/** The epoch ms a bucket key from BUCKET_KEY stands for. */
function keyToStart(key: string, interval: Interval, timezone: string): number {
  return interval === 'hour' ? Number(key) * 1000 : startOfLocalDay(key, timezone).getTime();
}

export async function eventTimeseries(store: AnalyticsStore, query: EventQuery, requested?: Interval): Promise<Timeseries> {
  const interval = requested ?? autoInterval(query.range);
  // Buckets first: a range with too many of them is refused before any query runs.
  const starts = bucketStarts(query.range, interval);
  const { from, where, params } = eventScope(query);
  const rows = await store.query<{ key: string; unique_sessions: string; events: string }>(
    `SELECT ${BUCKET_KEY[interval]} AS key, uniqExact(session_id) AS unique_sessions, count() AS events
    FROM ${from}
    WHERE ${where}
    GROUP BY key
    ${JOIN_SETTINGS}`,
    { ...params, tz: query.range.timezone },
  );
  const counted = new Map(rows.map((r) => [keyToStart(r.key, interval, query.range.timezone), r]));
  return {
    interval,
    rows: starts.map((start) => {
      const row = counted.get(start);
      return { bucket: new Date(start).toISOString(), unique_sessions: Number(row?.unique_sessions ?? 0), events: Number(row?.events ?? 0) };
    }),
  };
}
