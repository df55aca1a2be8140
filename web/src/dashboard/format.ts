// Numbers, counts, durations and "no value" as the dashboard shows them, in the reader's locale
// (navigator.language). The words are English, so plural forms follow English rules whatever the
// locale; the digits follow the locale.
const LOCALE = typeof navigator === 'undefined' ? undefined : navigator.language;

const compact = new Intl.NumberFormat(LOCALE, { notation: 'compact', maximumFractionDigits: 1 });
const whole = new Intl.NumberFormat(LOCALE);
const english = new Intl.PluralRules('en-US');

export const formatNumber = (n: number) => (Math.abs(n) >= 10_000 ? compact.format(n) : whole.format(Math.round(n * 100) / 100));

export const formatPercent = (n: number) => `${whole.format(Math.round(n * 10) / 10)}%`;

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
