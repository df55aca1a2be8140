// Decides where each answer comes from, before any SQL is written: which hits column a filter or
// breakdown dimension reads, and whether it is a property of every hit of a visit (page,
// hostname) or of the visit as a whole (taken from its first or last hit). The SQL builders in
// sql.ts follow this table; nothing else knows column names.
//
// Everything is computed over the `hits` table (pageviews) in the half-open range [from, to):
// a visit is the set of a session's hits inside the range, so a session crossing the range's
// edge contributes only its hits inside. `events` answers only two questions: whether a visit had
// a custom event (events other than `$engagement`; such a visit is not a bounce), and the visit's
// engagement time (sum of `$engagement` events' props['engagement_ms']), both within the range.
import type { Filter, FilterDimension } from './filters.ts';

/** Columns of `hits` a dimension may read; a closed list, so a name never comes from a request. */
export type HitColumn =
  | 'path'
  | 'hostname'
  | 'referrer'
  | 'referrer_source'
  | 'channel'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'utm_term'
  | 'utm_content'
  | 'country'
  | 'region'
  | 'browser'
  | 'os'
  | 'device';

/**
 * How a visit gets its value of a dimension:
 * - `each`: every hit has its own (page, hostname). A filter matches a visit when ANY of its
 *   hits matches (`is`, `contains`, `matches`), and `is_not` when NONE of its hits has any of
 *   the values, so `is` and `is_not` split the visits in two. A breakdown row counts the hits
 *   with that value and the visits that have at least one.
 * - `first`: the value of the visit's first hit (argMin by ts): the entry page, and the
 *   acquisition and client columns. Later hits of a visit are internal navigations without
 *   referrer or campaign tags, so the first hit is where the visit came from.
 * - `last`: the value of the visit's last hit (argMax by ts): the exit page.
 */
export type Pick = 'each' | 'first' | 'last';

export interface DimensionSource {
  column: HitColumn;
  pick: Pick;
}

export const FILTER_SOURCES: Record<FilterDimension, DimensionSource> = {
  page: { column: 'path', pick: 'each' },
  hostname: { column: 'hostname', pick: 'each' },
  entry_page: { column: 'path', pick: 'first' },
  exit_page: { column: 'path', pick: 'last' },
  source: { column: 'referrer_source', pick: 'first' },
  channel: { column: 'channel', pick: 'first' },
  referrer: { column: 'referrer', pick: 'first' },
  utm_source: { column: 'utm_source', pick: 'first' },
  utm_medium: { column: 'utm_medium', pick: 'first' },
  utm_campaign: { column: 'utm_campaign', pick: 'first' },
  utm_term: { column: 'utm_term', pick: 'first' },
  utm_content: { column: 'utm_content', pick: 'first' },
  country: { column: 'country', pick: 'first' },
  region: { column: 'region', pick: 'first' },
  browser: { column: 'browser', pick: 'first' },
  os: { column: 'os', pick: 'first' },
  device: { column: 'device', pick: 'first' },
};

/** Breakdown dimensions (the API's plural names) → the filter dimension they group by. */
const BREAKDOWN_FILTER_DIMENSION = {
  pages: 'page',
  entry_pages: 'entry_page',
  exit_pages: 'exit_page',
  hostnames: 'hostname',
  sources: 'source',
  channels: 'channel',
  referrers: 'referrer',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  utm_term: 'utm_term',
  utm_content: 'utm_content',
  countries: 'country',
  regions: 'region',
  browsers: 'browser',
  os: 'os',
  devices: 'device',
  // Sources of visits whose channel is 'ai': the assistants that sent people here.
  ai_assistants: 'source',
} as const satisfies Record<string, FilterDimension>;

export type BreakdownDimension = keyof typeof BREAKDOWN_FILTER_DIMENSION;
export const BREAKDOWN_DIMENSIONS = Object.keys(BREAKDOWN_FILTER_DIMENSION) as BreakdownDimension[];

export interface BreakdownPlan {
  source: DimensionSource;
  /** The request's filters plus any the dimension implies (ai_assistants → channel is ai). */
  filters: Filter[];
}

export function planBreakdown(dimension: BreakdownDimension, filters: readonly Filter[]): BreakdownPlan {
  const implied: Filter[] = dimension === 'ai_assistants' ? [{ dimension: 'channel', op: 'is', values: ['ai'] }] : [];
  return { source: FILTER_SOURCES[BREAKDOWN_FILTER_DIMENSION[dimension]], filters: [...filters, ...implied] };
}
