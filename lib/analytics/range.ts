// Date ranges of analytics queries, in the site's time zone. `from`/`to` are calendar dates
// (YYYY-MM-DD, `to` inclusive) meaning whole local days, or RFC 3339 instants; the result is a
// half-open UTC interval [from, to) that the SQL binds as DateTime64(3). Local midnights are found
// with Intl, so days across a DST change have their true 23 or 25 hours.
import { badRequest } from '../errors.ts';

export interface TimeRange {
  /** Inclusive UTC start. */
  from: Date;
  /** Exclusive UTC end. */
  to: Date;
  timezone: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 86_400_000;
export const MAX_RANGE_DAYS = 3660;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `timezone` from UTC at `instant`, in milliseconds (positive east of Greenwich). */
export function zoneOffsetMs(timezone: string, instant: Date): number {
  let format = formatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(timezone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, p.value]));
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

/** The UTC instant of local midnight starting `date` (YYYY-MM-DD) in `timezone`. */
export function startOfLocalDay(date: string, timezone: string): Date {
  const [y, m, d] = date.split('-').map(Number);
  const guess = Date.UTC(y, m - 1, d);
  // Two rounds settle the offset even when the guess lands on the other side of a DST change.
  let instant = guess - zoneOffsetMs(timezone, new Date(guess));
  instant = guess - zoneOffsetMs(timezone, new Date(instant));
  return new Date(instant);
}

/** The local calendar date (YYYY-MM-DD) of an instant in `timezone`. */
export function localDate(instant: Date, timezone: string): string {
  return new Date(instant.getTime() + zoneOffsetMs(timezone, instant)).toISOString().slice(0, 10);
}

function validDate(value: string): boolean {
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

/**
 * Parses `from`/`to` query values. Defaults: the last 30 local days including today. Refuses
 * malformed values, an end before the start, and ranges longer than ten years (400).
 */
export function parseRange(input: { from?: string; to?: string }, timezone: string, now: Date = new Date()): TimeRange {
  const today = localDate(now, timezone);
  const start = (value: string, field: string): Date => {
    if (DATE.test(value) && validDate(value)) return startOfLocalDay(value, timezone);
    if (INSTANT.test(value) && !Number.isNaN(Date.parse(value))) return new Date(value);
    throw badRequest(`${field} must be a date (YYYY-MM-DD) or an RFC 3339 date-time`);
  };
  const end = (value: string): Date => {
    if (DATE.test(value) && validDate(value)) {
      const next = new Date(Date.parse(`${value}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
      return startOfLocalDay(next, timezone);
    }
    return start(value, 'to');
  };
  const toValue = input.to ?? today;
  const fromValue = input.from ?? new Date(Date.parse(`${toValue.slice(0, 10)}T00:00:00Z`) - 29 * DAY_MS).toISOString().slice(0, 10);
  const range = { from: start(fromValue, 'from'), to: end(toValue), timezone };
  if (range.to.getTime() <= range.from.getTime()) throw badRequest('to must be after from');
  if (range.to.getTime() - range.from.getTime() > MAX_RANGE_DAYS * DAY_MS) throw badRequest(`The range may span at most ${MAX_RANGE_DAYS} days`);
  return range;
}

/** The range just before `range`, of the same length (the "previous period" comparison). */
export function previousPeriod(range: TimeRange): TimeRange {
  const length = range.to.getTime() - range.from.getTime();
  return { from: new Date(range.from.getTime() - length), to: new Date(range.from.getTime()), timezone: range.timezone };
}

/** The same local dates one year earlier (the "year over year" comparison). */
export function previousYear(range: TimeRange): TimeRange {
  const shift = (instant: Date) => {
    const local = localDate(instant, range.timezone);
    const [y, m, d] = local.split('-').map(Number);
    // 29 February has no counterpart: the day before stands in.
    const date = new Date(Date.UTC(y - 1, m - 1, d));
    const iso = date.getUTCMonth() === m - 1 ? date.toISOString().slice(0, 10) : new Date(Date.UTC(y - 1, m - 1, d - 1)).toISOString().slice(0, 10);
    const offsetIntoDay = instant.getTime() - startOfLocalDay(local, range.timezone).getTime();
    return new Date(startOfLocalDay(iso, range.timezone).getTime() + offsetIntoDay);
  };
  return { from: shift(range.from), to: shift(range.to), timezone: range.timezone };
}
