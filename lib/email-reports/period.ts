// The period a scheduled report covers, in the site's time zone: weekly, the previous Monday to
// Sunday; monthly, the previous calendar month. Each comes with the period before it, which the
// report compares against, and the UTC instant it ended (a report is due from then on).
import { localDate, startOfLocalDay } from '../analytics/range.ts';

export const FREQUENCIES = ['weekly', 'monthly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** Local calendar dates (YYYY-MM-DD), both inclusive. */
export interface DateSpan {
  from: string;
  to: string;
}

export interface ReportPeriod {
  current: DateSpan;
  previous: DateSpan;
  /** The UTC instant the current period ended: local midnight after its last day. */
  endedAt: Date;
}

const day = (date: string) => new Date(`${date}T00:00:00Z`);
const iso = (date: Date) => date.toISOString().slice(0, 10);
const addDays = (date: string, days: number) => iso(new Date(day(date).getTime() + days * 86_400_000));
const firstOfMonth = (date: string, monthsBack: number) => {
  const d = day(date);
  return iso(new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsBack, 1)));
};

/** The last complete period of `frequency` at `now` on the site's clock, and the one before it. */
export function reportPeriod(frequency: Frequency, timezone: string, now: Date): ReportPeriod {
  const today = localDate(now, timezone);
  if (frequency === 'weekly') {
    const monday = addDays(today, -((day(today).getUTCDay() + 6) % 7));
    return {
      current: { from: addDays(monday, -7), to: addDays(monday, -1) },
      previous: { from: addDays(monday, -14), to: addDays(monday, -8) },
      endedAt: startOfLocalDay(monday, timezone),
    };
  }
  const thisMonth = firstOfMonth(today, 0);
  const lastMonth = firstOfMonth(today, 1);
  return {
    current: { from: lastMonth, to: addDays(thisMonth, -1) },
    previous: { from: firstOfMonth(today, 2), to: addDays(lastMonth, -1) },
    endedAt: startOfLocalDay(thisMonth, timezone),
  };
}
