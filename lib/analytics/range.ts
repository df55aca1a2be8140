// Date ranges of analytics queries, in the site's time zone. `from`/`to` are calendar dates
// (YYYY-MM-DD, `to` inclusive) meaning whole local days, or RFC 3339 instants; the result is a
// half-open UTC interval [from, to) that the SQL binds as DateTime64(3). Local midnights are found
// with Intl, so days across a DST change have their true 23 or 25 hours.
import { type FieldError, validationFailed } from '../errors.ts';

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

/** The names a request gives the two ends of a range (`from`/`to`, or `compare_from`/`compare_to`). */
export interface RangeFields {
  from: string;
  to: string;
}

/**
 * Checks `from`/`to` query values, adding each problem to `problems` (both ends at once), and
 * gives the range when there is none. Defaults: the last 30 local days including today. Refuses
 * malformed values, an end before the start, and ranges longer than ten years.
 */
export function checkRange(
  input: { from?: string; to?: string },
  timezone: string,
  problems: FieldError[],
  now: Date = new Date(),
  names: RangeFields = { from: 'from', to: 'to' },
): TimeRange | undefined {
  const today = localDate(now, timezone);
  // The end is read first (the default start depends on it), its problem listed after the start's.
  const endProblems: FieldError[] = [];
  const start = (value: string, field: string, into = problems): Date | undefined => {
    if (DATE.test(value) && validDate(value)) return startOfLocalDay(value, timezone);
    if (INSTANT.test(value) && !Number.isNaN(Date.parse(value))) return new Date(value);
    into.push({ field, message: `${field} must be a date (YYYY-MM-DD) or an RFC 3339 date-time`, type: 'dateOrDateTime' });
    return undefined;
  };
  const end = (value: string): Date | undefined => {
    if (DATE.test(value) && validDate(value)) {
      const next = new Date(Date.parse(`${value}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
      return startOfLocalDay(next, timezone);
    }
    return start(value, names.to, endProblems);
  };
  const toValue = input.to ?? today;
  const to = end(toValue);
  // Without a valid end, the default start is a month before today rather than before nothing.
  const fromValue = input.from ?? new Date(Date.parse(`${(to ? toValue : today).slice(0, 10)}T00:00:00Z`) - 29 * DAY_MS).toISOString().slice(0, 10);
  const from = start(fromValue, names.from);
  problems.push(...endProblems);
  if (!from || !to) return undefined;
  if (to.getTime() <= from.getTime()) {
    problems.push({ field: names.to, message: `${names.to} must be after ${names.from}`, type: 'rangeOrder' });
    return undefined;
  }
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    problems.push({ field: names.to, message: `${names.to} may be at most ${MAX_RANGE_DAYS} days after ${names.from}`, type: 'rangeLength' });
    return undefined;
  }
  return { from, to, timezone };
}

/** checkRange on its own: a 400 naming every bad end. */
export function parseRange(input: { from?: string; to?: string }, timezone: string, now: Date = new Date(), names?: RangeFields): TimeRange {
  const problems: FieldError[] = [];
  const range = checkRange(input, timezone, problems, now, names);
  if (!range) throw validationFailed(problems);
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
