// Numbers and durations as the dashboard shows them.
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const whole = new Intl.NumberFormat();

export const formatNumber = (n: number) => (Math.abs(n) >= 10_000 ? compact.format(n) : whole.format(Math.round(n * 100) / 100));

export const formatPercent = (n: number) => `${Math.round(n * 10) / 10}%`;

export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** Change from `previous` to `current` in percent, or null when there is nothing to compare. */
export function change(current: number, previous: number | undefined): number | null {
  if (previous === undefined) return null;
  if (previous === 0) return current === 0 ? 0 : null;
  return Math.round(((current - previous) / previous) * 1000) / 10;
}
