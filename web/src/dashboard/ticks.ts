// Where the chart puts its labels. The x-axis labels whole buckets of the range's own interval
// (hours for a day, days for a month, months for a year), as many as fit without touching; the
// y-axis counts in whole numbers (1, 2, 5, 10, 20 … apart), so no axis ever reads "0.5 visitors".
import { type Interval, localParts } from './dates.ts';

/** Room a label needs, in CSS pixels, by interval (an hour "12 PM", a day "Nov 25", "Nov 2026"). */
const LABEL_PX: Record<Interval, number> = { hour: 52, day: 60, week: 60, month: 76 };
/** Buckets between two labels, finest first; hours and months only land on round clock values. */
const STEPS: Record<Interval, number[]> = {
  hour: [1, 2, 3, 4, 6, 12, 24],
  day: [1, 2, 3, 7, 14, 28, 56],
  week: [1, 2, 4, 8, 13, 26, 52],
  month: [1, 2, 3, 6, 12, 24, 60, 120],
};

/**
 * The indexes of the buckets (UTC start instants in ms, in order) that get a label on an axis
 * `widthPx` wide. Hours are labelled where the site's clock shows a multiple of the step (0:00,
 * 6:00, 12:00 …), months at multiples from January, days and weeks every step-th from the first.
 */
export function timeTicks(buckets: readonly number[], interval: Interval, timeZone: string, widthPx: number): number[] {
  if (buckets.length === 0) return [];
  const room = Math.max(1, Math.floor(widthPx / LABEL_PX[interval]));
  const steps = STEPS[interval];
  for (const step of steps) {
    const picked = pick(buckets, interval, timeZone, step);
    if (picked.length <= room || step === steps[steps.length - 1]) return picked.length > 0 ? picked : [0];
  }
  return [0];
}

function pick(buckets: readonly number[], interval: Interval, timeZone: string, step: number): number[] {
  const out: number[] = [];
  buckets.forEach((ms, i) => {
    if (interval === 'hour') {
      // The hour repeated when clocks go back would get a second label right beside the first.
      const last = out[out.length - 1];
      if (localParts(ms, timeZone).hour % step === 0 && (last === undefined || i - last >= step)) out.push(i);
    } else if (interval === 'month') {
      if ((localParts(ms, timeZone).month - 1) % step === 0) out.push(i);
    } else if (i % step === 0) out.push(i);
  });
  return out;
}

/**
 * The y-axis for counts whose largest value is `max` on a plot `heightPx` tall: whole-number
 * ticks from 0, a step of 1, 2 or 5 times a power of ten, and a top that is a tick at or above
 * `max`. An empty chart still gets 0 and 1.
 */
export function countTicks(max: number, heightPx: number): { top: number; step: number; ticks: number[] } {
  const room = Math.max(2, Math.floor(heightPx / 36));
  let step = 1;
  for (let power = 1; ; power *= 10) {
    const found = [1, 2, 5].map((m) => m * power).find((s) => Math.ceil(max / s) <= room);
    if (found !== undefined) {
      step = found;
      break;
    }
  }
  const top = Math.max(step, Math.ceil(max / step) * step);
  const ticks: number[] = [];
  for (let v = 0; v <= top; v += step) ticks.push(v);
  return { top, step, ticks };
}
