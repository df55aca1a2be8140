// Which of the chart's buckets hold figures imported from another tool: the stats answer names
// the days (site-local dates) whose figures came from imports; a bucket is shaded when any of its
// days is one of them.
import { addDays } from './range.ts';
import { type Interval, localParts } from './dates.ts';

export interface DayRange {
  from: string;
  to: string;
}

const dateOf = (ms: number, timezone: string) => {
  const p = localParts(ms, timezone);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
};

/** The last local day of a bucket with no bucket after it. */
function lastDayAlone(first: string, interval: Interval): string {
  if (interval === 'week') return addDays(first, 6);
  if (interval === 'month') {
    const [year, month] = first.split('-').map(Number);
    return new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
  }
  return first;
}

/** For each bucket (its start instant), whether one of its local days lies in one of the ranges. */
export function importedBuckets(buckets: readonly string[], interval: Interval, timezone: string, ranges: readonly DayRange[]): boolean[] {
  if (ranges.length === 0) return buckets.map(() => false);
  const starts = buckets.map((b) => Date.parse(b));
  return starts.map((start, i) => {
    const first = dateOf(start, timezone);
    const last = i + 1 < starts.length ? dateOf(starts[i + 1] - 1, timezone) : lastDayAlone(first, interval);
    return ranges.some((r) => first <= r.to && last >= r.from);
  });
}

/** Runs of shaded buckets as [first index, last index] pairs, for drawing one band per run. */
export function bands(mask: readonly boolean[]): [number, number][] {
  const runs: [number, number][] = [];
  mask.forEach((on, i) => {
    if (!on) return;
    const last = runs[runs.length - 1];
    if (last && last[1] === i - 1) last[1] = i;
    else runs.push([i, i]);
  });
  return runs;
}
