// Decides where each answer comes from, before any SQL is written: which `visits` column a filter
// or breakdown dimension reads, and whether it is a value of the visit as a whole or one of the
// values its pageviews have (page, hostname). The SQL builders in sql.ts follow this table;
// nothing else knows column names.
//
// Everything is computed over the `visits` table (migration 0003): the visits that started in the
// half-open range [from, to), each with all its pageviews and events, whenever they happened.
import type { ORIGIN_COLUMNS } from '../../ingest/visits.ts';
import type { Filter, FilterDimension } from './filters.ts';

/** Columns of `visits` holding one value per visit; a closed list, so a name never comes from a request. */
export type VisitColumn = 'entry_page' | 'exit_page' | (typeof ORIGIN_COLUMNS)[number];

/**
 * How a visit has its value of a dimension:
 * - `visit`: one value per visit. The entry page and the acquisition and client columns are those
 *   of its first pageview; the exit page is its last pageview's.
 * - `each`: every pageview has its own (page, hostname): the visit holds the distinct values with
 *   a count each (`pages`/`page_hits`). A filter matches a visit when ANY of its values matches
 *   (`is`, `contains`, `matches`), and `is_not` when NONE of them is any of the values, so `is`
 *   and `is_not` split the visits in two. A breakdown row counts the pageviews with that value
 *   and the visits that have at least one.
 */
export type DimensionSource =
  | { kind: 'visit'; column: VisitColumn; /** Changes as the visit goes on (the exit page). */ changes: boolean }
  | { kind: 'each'; column: 'pages' | 'hostnames'; counts: 'page_hits' | 'hostname_hits' };

const visitColumn = (column: VisitColumn): DimensionSource => ({ kind: 'visit', column, changes: column === 'exit_page' });

export const FILTER_SOURCES: Record<FilterDimension, DimensionSource> = {
  page: { kind: 'each', column: 'pages', counts: 'page_hits' },
  hostname: { kind: 'each', column: 'hostnames', counts: 'hostname_hits' },
  entry_page: visitColumn('entry_page'),
  exit_page: visitColumn('exit_page'),
  source: visitColumn('referrer_source'),
  channel: visitColumn('channel'),
  referrer: visitColumn('referrer'),
  utm_source: visitColumn('utm_source'),
  utm_medium: visitColumn('utm_medium'),
  utm_campaign: visitColumn('utm_campaign'),
  utm_term: visitColumn('utm_term'),
  utm_content: visitColumn('utm_content'),
  country: visitColumn('country'),
  region: visitColumn('region'),
  browser: visitColumn('browser'),
  os: visitColumn('os'),
  device: visitColumn('device'),
};

/**
 * Whether the answer must read visits with FINAL (cancelled states collapsed at read time). Sums
 * with `sign` are exact on their own, but distinct visitors are not when a visit's earlier state
 * and its current one fall on different sides of a filter or in different rows: an exit page
 * moves on, and a visit gains pages (so it may stop passing `page is_not`). Other values of a
 * visit never change once written, and gaining pages only ever adds a visit to `is`/`contains`/
 * `matches` (its earlier state was cancelled in the same rows).
 */
export function needsFinal(filters: readonly Filter[], source?: DimensionSource): boolean {
  const changing = (s: DimensionSource, op?: Filter['op']) => (s.kind === 'visit' ? s.changes : op === 'is_not');
  return filters.some((f) => changing(FILTER_SOURCES[f.dimension], f.op)) || (source?.kind === 'visit' && source.changes);
}

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
