// Date ranges as the dashboard's URL holds them (period, custom from/to) and as the API takes
// them: calendar dates in the site's time zone, `to` inclusive.
import { formatDateRange } from './dates.ts';

export const PERIODS = [
  { id: 'realtime', label: 'Realtime' },
  { id: 'today', label: 'Today' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: 'month', label: 'This month' },
  { id: 'custom', label: 'Custom' },
] as const;

export type Period = (typeof PERIODS)[number]['id'];

export const DEFAULT_PERIOD: Period = '30d';

export function isPeriod(value: string | null): value is Period {
  return PERIODS.some((p) => p.id === value);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const isDate = (value: string | null): value is string => value !== null && DATE.test(value);

/** Today's calendar date on the site's clock. */
export function todayIn(timezone: string, now = new Date()): string {
  // en-CA formats as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export interface DateRange {
  from: string;
  to: string;
}

/** The calendar dates a period covers; realtime reads today for its totals. */
export function rangeOf(period: Period, timezone: string, custom: Partial<DateRange> = {}, now = new Date()): DateRange {
  const today = todayIn(timezone, now);
  switch (period) {
    case 'realtime':
    case 'today':
      return { from: today, to: today };
    case '7d':
      return { from: addDays(today, -6), to: today };
    case 'month':
      return { from: `${today.slice(0, 8)}01`, to: today };
    case 'custom':
      if (isDate(custom.from ?? null) && isDate(custom.to ?? null)) {
        return custom.from! <= custom.to! ? { from: custom.from!, to: custom.to! } : { from: custom.to!, to: custom.from! };
      }
      return { from: addDays(today, -29), to: today };
    default:
      return { from: addDays(today, -29), to: today };
  }
}

/** The range in words, in the reader's locale: "Oct 27 – Nov 25, 2026". */
export const describeRange = (range: DateRange) => formatDateRange(range);

/** The same number of days right before the range: what the dashboard compares with. */
export function previousRange(range: DateRange): DateRange {
  const days = Math.round((Date.parse(`${range.to}T00:00:00Z`) - Date.parse(`${range.from}T00:00:00Z`)) / 86_400_000) + 1;
  return { from: addDays(range.from, -days), to: addDays(range.from, -1) };
}
