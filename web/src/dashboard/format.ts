// Numbers, counts, durations and "no value" as the dashboard shows them, in the reader's locale
// (navigator.language). The words are English, so plural forms follow English rules whatever the
// locale; the digits follow the locale.
const LOCALE = typeof navigator === 'undefined' ? undefined : navigator.language;

const compact = new Intl.NumberFormat(LOCALE, { notation: 'compact', maximumFractionDigits: 1 });
const whole = new Intl.NumberFormat(LOCALE);
const english = new Intl.PluralRules('en-US');

export const formatNumber = (n: number) => (Math.abs(n) >= 10_000 ? compact.format(n) : whole.format(Math.round(n * 100) / 100));

export const formatPercent = (n: number) => `${whole.format(Math.round(n * 10) / 10)}%`;

const tenths = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** A size for people, in 1024-based units with one decimal: 512 B, 8.1 KiB, 5.1 MiB, … TiB. */
export function formatBytes(bytes: number): string {
  if (Math.abs(Math.round(bytes)) < 1024) return `${whole.format(Math.round(bytes))} B`;
  let value = bytes / 1024;
  let unit = 0;
  // Moves up a unit when the figure would round to 1024 of this one: 1,048,575 bytes is "1.0 MiB", never "1,024.0 KiB".
  while (unit < BYTE_UNITS.length - 1 && Math.abs(Math.round(value * 10) / 10) >= 1024) {
    value /= 1024;
    unit += 1;
  }
  return `${tenths.format(value)} ${BYTE_UNITS[unit]}`;
}

/** What every panel, table and list shows where the server sent '' (no referrer, no UTM tag, …). */
export const NONE = '(none)';
export const valueLabel = (value: string) => (value === '' ? NONE : value);

/** A noun's singular and plural, as `count` says them. */
export interface Noun {
  one: string;
  other: string;
}

export const NOUNS = {
  visitor: { one: 'visitor', other: 'visitors' },
  visit: { one: 'visit', other: 'visits' },
  pageview: { one: 'pageview', other: 'pageviews' },
  session: { one: 'session', other: 'sessions' },
  event: { one: 'event', other: 'events' },
  currentVisitor: { one: 'current visitor', other: 'current visitors' },
} as const satisfies Record<string, Noun>;

/** The noun that goes with `n` ("1 visitor", "2 visitors", "0 visitors"). */
export const nounFor = (n: number, noun: Noun) => (english.select(n) === 'one' ? noun.one : noun.other);

/** `n` in the locale's digits with its noun: "1 visitor", "1,234 visitors". */
export const formatCount = (n: number, noun: Noun) => `${formatNumber(n)} ${nounFor(n, noun)}`;

const twoDigits = new Intl.NumberFormat(LOCALE, { maximumSignificantDigits: 2 });

/** A short time for people, to two significant digits: 0.31 ms, 2.5 ms, 34 ms, 1.2 s. */
export function formatMilliseconds(ms: number): string {
  // From 995 ms on, two digits of milliseconds would read "1,000 ms".
  return ms < 995 ? `${twoDigits.format(ms)} ms` : `${twoDigits.format(ms / 1000)} s`;
}

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
