// Imported aggregates in the stats: the daily imported_* rows another tool's export left (see
// lib/imports/sources/plausible.ts) count for the days of a range that have no native visits of
// the site; on a day with any native visit, native data wins and that day's imported rows are
// ignored. Days are the site's local days (an imported date is taken as one), and only days lying
// wholly inside the range count: a day's total cannot be split by the hour.
//
// Which imported table answers what:
// - KPIs and the timeseries: imported_visitors, and only without filters (it has no dimension).
// - A breakdown: the table of its dimension (below), when every filter of the request names a
//   column of that same table; otherwise, and for dimensions without a table (hostnames,
//   channels, AI assistants), the answer has no imported figures and says so.
// Imported values are stored in Plumb's spellings (the source maps them), so filters and
// breakdown values compare them as they are.
//
// Cost: a site without imported rows in the range pays one look-up of (site_id, date), the
// tables' sorting key prefix, beside its usual statement; the native-days set is computed only
// when there are imported rows, and only over their span.
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import { localDate, startOfLocalDay, type TimeRange } from '../range.ts';
import { type Row, statsQueries } from './batch.ts';
import type { Filter, FilterDimension } from './filters.ts';
import type { Interval } from './interval.ts';
import type { BreakdownDimension, DimensionSource } from './plan.ts';
import { Binder, type BreakdownPage, breakdownGroups, type Scope, type Statement, scopeParams, valueCondition } from './sql.ts';

/** What an answer says about imported data: whether it holds any, and for which local days. */
export interface ImportedView {
  included: boolean;
  /** Contiguous runs of local days (YYYY-MM-DD, both ends inclusive) whose figures came from imports. */
  ranges: { from: string; to: string }[];
}

export const NO_IMPORTED: ImportedView = Object.freeze({ included: false, ranges: [] }) as ImportedView;

/** One imported table as a breakdown reads it; every name is from this closed list, never a request. */
interface ImportedTable {
  table: string;
  /** The filter dimensions the table holds, and their column. */
  columns: Partial<Record<FilterDimension, string>>;
  /** The column that counts a row's visits (entrances of an entry page, exits of an exit page). */
  visits: string;
  /** Whether rows carry bounces and visit_duration (page rows do not). */
  rated: boolean;
}

const SOURCES: ImportedTable = {
  table: 'imported_sources',
  columns: { source: 'source', referrer: 'referrer', utm_source: 'utm_source', utm_medium: 'utm_medium', utm_campaign: 'utm_campaign', utm_term: 'utm_term', utm_content: 'utm_content' },
  visits: 'visits',
  rated: true,
};
const PAGES: ImportedTable = { table: 'imported_pages', columns: { page: 'page', hostname: 'hostname' }, visits: 'visits', rated: false };
const ENTRY_PAGES: ImportedTable = { table: 'imported_entry_pages', columns: { entry_page: 'entry_page' }, visits: 'entrances', rated: true };
const EXIT_PAGES: ImportedTable = { table: 'imported_exit_pages', columns: { exit_page: 'exit_page' }, visits: 'exits', rated: true };
const LOCATIONS: ImportedTable = { table: 'imported_locations', columns: { country: 'country', region: 'region' }, visits: 'visits', rated: true };
const DEVICES: ImportedTable = { table: 'imported_devices', columns: { device: 'device' }, visits: 'visits', rated: true };
const BROWSERS: ImportedTable = { table: 'imported_browsers', columns: { browser: 'browser' }, visits: 'visits', rated: true };
const SYSTEMS: ImportedTable = { table: 'imported_operating_systems', columns: { os: 'operating_system' }, visits: 'visits', rated: true };

/**
 * Breakdown dimension → its imported table and the filter dimension it groups by. Hostnames are
 * left out: summing page rows by hostname would count a visitor once per page.
 */
const BREAKDOWN_TABLES: Partial<Record<BreakdownDimension, { source: ImportedTable; dimension: FilterDimension }>> = {
  pages: { source: PAGES, dimension: 'page' },
  entry_pages: { source: ENTRY_PAGES, dimension: 'entry_page' },
  exit_pages: { source: EXIT_PAGES, dimension: 'exit_page' },
  sources: { source: SOURCES, dimension: 'source' },
  referrers: { source: SOURCES, dimension: 'referrer' },
  utm_source: { source: SOURCES, dimension: 'utm_source' },
  utm_medium: { source: SOURCES, dimension: 'utm_medium' },
  utm_campaign: { source: SOURCES, dimension: 'utm_campaign' },
  utm_term: { source: SOURCES, dimension: 'utm_term' },
  utm_content: { source: SOURCES, dimension: 'utm_content' },
  countries: { source: LOCATIONS, dimension: 'country' },
  regions: { source: LOCATIONS, dimension: 'region' },
  devices: { source: DEVICES, dimension: 'device' },
  browsers: { source: BROWSERS, dimension: 'browser' },
  os: { source: SYSTEMS, dimension: 'os' },
};

export interface ImportedBreakdownPlan {
  source: ImportedTable;
  /** The column grouped by. */
  column: string;
  /** Each filter with the column of the table it is on. */
  filters: { column: string; filter: Filter }[];
}

/**
 * Where a breakdown's imported figures come from, or null when it has none: no table for the
 * dimension, or a filter on a dimension that table does not hold (`filters` include the ones the
 * dimension implies, so AI assistants, sources under channel is ai, have none).
 */
export function planImportedBreakdown(dimension: BreakdownDimension, filters: readonly Filter[]): ImportedBreakdownPlan | null {
  const entry = BREAKDOWN_TABLES[dimension];
  if (!entry) return null;
  const { source } = entry;
  const mapped: ImportedBreakdownPlan['filters'] = [];
  for (const filter of filters) {
    const column = source.columns[filter.dimension];
    if (column === undefined) return null;
    mapped.push({ column, filter });
  }
  return { source, column: source.columns[entry.dimension] as string, filters: mapped };
}

const DAY_MS = 86_400_000;
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The first and last local dates lying wholly inside the range, or null when no whole day does. */
export function wholeDays(range: TimeRange): { first: string; last: string } | null {
  let first = localDate(range.from, range.timezone);
  if (startOfLocalDay(first, range.timezone).getTime() < range.from.getTime()) first = addDays(first, 1);
  const last = addDays(localDate(range.to, range.timezone), -1);
  return first <= last ? { first, last } : null;
}

/** Sorted days → the contiguous runs they form. */
export function importedView(days: readonly string[]): ImportedView {
  const ranges: ImportedView['ranges'] = [];
  for (const day of days) {
    const run = ranges.at(-1);
    if (run && addDays(run.to, 1) === day) run.to = day;
    else ranges.push({ from: day, to: day });
  }
  return { included: ranges.length > 0, ranges };
}

/** What the statements of one site and range share. */
export interface ImportedScope {
  db: string;
  site: string;
  timezone: string;
  first: string;
  last: string;
}

/** The dates that hold rows of `table` for the site, first and last, and how many rows. */
export function importedSpanStatement(scope: ImportedScope, table: string): Statement {
  return {
    sql: `
    SELECT count() AS n, toString(min(date)) AS first, toString(max(date)) AS last
      FROM {db:Identifier}.{table:Identifier}
     WHERE site_id = {site:UUID} AND date >= {first:Date} AND date <= {last:Date}`,
    params: { db: scope.db, site: scope.site, table, first: scope.first, last: scope.last },
  };
}

/**
 * The local days from `first` to `last` that have native visits (a visit belongs to the day it
 * started on; cancelled states do not count). `{tz}`, `{first}`, `{last}` and `{native_from}`/
 * `{native_to}` (the instants bounding those days) are bound by the caller.
 */
const NATIVE_DAYS = `SELECT toDate(toTimeZone(start, {tz:String})) AS day
                        FROM {db:Identifier}.visits
                       WHERE site_id = {site:UUID} AND start >= {native_from:DateTime64(3)} AND start < {native_to:DateTime64(3)}
                       GROUP BY day
                      HAVING sum(sign) > 0`;

const nativeParams = (scope: ImportedScope) => ({
  tz: scope.timezone,
  native_from: startOfLocalDay(scope.first, scope.timezone),
  native_to: startOfLocalDay(addDays(scope.last, 1), scope.timezone),
});

/** The days of imported_visitors without native visits, each with its figures (sums of its rows). */
export function importedDailyStatement(scope: ImportedScope): Statement {
  return {
    sql: `
    SELECT toString(date) AS day,
           sum(visitors) AS visitors,
           sum(visits) AS visits,
           sum(pageviews) AS pageviews,
           sum(bounces) AS bounces,
           sum(visit_duration) AS duration_s
      FROM {db:Identifier}.imported_visitors
     WHERE site_id = {site:UUID} AND date >= {first:Date} AND date <= {last:Date}
       AND date NOT IN (${NATIVE_DAYS})
     GROUP BY date
     ORDER BY date`,
    params: { db: scope.db, site: scope.site, first: scope.first, last: scope.last, ...nativeParams(scope) },
  };
}

/** The days of `table` holding rows for the site and no native visits, in order. */
export function importedDaysStatement(scope: ImportedScope, table: string): Statement {
  return {
    sql: `
    SELECT toString(date) AS day
      FROM {db:Identifier}.{table:Identifier}
     WHERE site_id = {site:UUID} AND date >= {first:Date} AND date <= {last:Date}
       AND date NOT IN (${NATIVE_DAYS})
     GROUP BY date
     ORDER BY date`,
    params: { db: scope.db, site: scope.site, table, first: scope.first, last: scope.last, ...nativeParams(scope) },
  };
}

/** A filter on an imported column, as visitCondition reads it on a visit's own value. */
function importedCondition(column: string, filter: Filter, binder: Binder): string {
  const matches = valueCondition(column, filter, binder);
  return filter.op === 'is_not' ? `NOT ${matches}` : matches;
}

/**
 * breakdownStatement with the imported rows of `days` added: each value's native figures plus the
 * sums of its imported rows, then ordered and paged the same way. `rated_visits` counts the visits
 * whose bounces and duration are known (imported page rows carry neither), the divisor of the
 * bounce rate and mean duration. Every figure is cast to Int64 so the two halves have one type.
 */
export function importedBreakdownStatement(scope: Scope, source: DimensionSource, plan: ImportedBreakdownPlan, days: readonly string[], page: BreakdownPage): Statement {
  const binder = new Binder({ ...scopeParams(scope), limit: page.limit, offset: page.offset });
  const native = breakdownGroups(scope, source, binder, page.only);
  const table = plan.source;
  const conditions = [
    'site_id = {site:UUID}',
    `date >= ${binder.bind(days[0], 'Date')} AND date <= ${binder.bind(days.at(-1), 'Date')}`,
    `has(${binder.bind(days, 'Array(Date)')}, date)`,
    ...plan.filters.map(({ column, filter }) => importedCondition(column, filter, binder)),
  ];
  if (page.only) conditions.push(`has(${binder.bind(page.only, 'Array(String)')}, ${plan.column})`);
  const sql = `
    SELECT value,
           sum(n_visitors) AS visitors,
           sum(n_visits) AS visits,
           sum(n_pageviews) AS pageviews,
           sum(n_bounces) AS bounces,
           sum(n_duration_ms) AS duration_ms,
           sum(n_rated_visits) AS rated_visits,
           count() OVER () AS total
      FROM (
        SELECT value, toInt64(visitors) AS n_visitors, toInt64(visits) AS n_visits, toInt64(pageviews) AS n_pageviews,
               toInt64(bounces) AS n_bounces, toInt64(duration_ms) AS n_duration_ms, toInt64(visits) AS n_rated_visits
          FROM (${native})
        UNION ALL
        SELECT ${plan.column} AS value,
               toInt64(sum(visitors)) AS n_visitors,
               toInt64(sum(${table.visits})) AS n_visits,
               toInt64(sum(pageviews)) AS n_pageviews,
               ${table.rated ? 'toInt64(sum(bounces))' : 'toInt64(0)'} AS n_bounces,
               ${table.rated ? 'toInt64(sum(visit_duration)) * 1000' : 'toInt64(0)'} AS n_duration_ms,
               ${table.rated ? `toInt64(sum(${table.visits}))` : 'toInt64(0)'} AS n_rated_visits
          FROM {db:Identifier}.${table.table}
         WHERE ${conditions.join('\n           AND ')}
         GROUP BY value
      )
     GROUP BY value
    HAVING visits > 0
     ORDER BY visitors DESC, value ASC
     LIMIT {limit:UInt32} OFFSET {offset:UInt32}`;
  return { sql, params: binder.params };
}

// ---- Running them ----

const run = (store: AnalyticsStore, statement: Statement): Promise<Row[]> => statsQueries(store).run(statement);

/** The scope's whole local days, or null when it has none. */
function importedScope(scope: Scope, timezone: string): ImportedScope | null {
  const days = wholeDays({ from: scope.from, to: scope.to, timezone });
  return days && { db: scope.db, site: scope.site, timezone, ...days };
}

/** The scope narrowed to the dates of `table`'s rows for the site, or null when there are none. */
async function narrowed(store: AnalyticsStore, scope: ImportedScope, table: string): Promise<ImportedScope | null> {
  const [span] = await run(store, importedSpanStatement(scope, table));
  if (Number(span?.n ?? 0) === 0) return null;
  return { ...scope, first: String(span.first), last: String(span.last) };
}

/** One imported day's figures (imported_visitors): visit_duration is the day's total seconds. */
export interface ImportedDay {
  day: string;
  visitors: number;
  visits: number;
  pageviews: number;
  bounces: number;
  duration_s: number;
}

/** The days of the scope's range whose KPIs come from imported_visitors, with their figures. */
export async function importedVisitorDays(store: AnalyticsStore, scope: Scope, timezone: string): Promise<ImportedDay[]> {
  const whole = importedScope(scope, timezone);
  const span = whole && (await narrowed(store, whole, 'imported_visitors'));
  if (!span) return [];
  const rows = await run(store, importedDailyStatement(span));
  return rows.map((r) => ({ day: String(r.day), visitors: Number(r.visitors), visits: Number(r.visits), pageviews: Number(r.pageviews), bounces: Number(r.bounces), duration_s: Number(r.duration_s) }));
}

/** The days of the scope's range whose breakdown rows of `plan` come from its imported table. */
export async function importedBreakdownDays(store: AnalyticsStore, scope: Scope, timezone: string, plan: ImportedBreakdownPlan): Promise<string[]> {
  const whole = importedScope(scope, timezone);
  const span = whole && (await narrowed(store, whole, plan.source.table));
  if (!span) return [];
  return (await run(store, importedDaysStatement(span, plan.source.table))).map((r) => String(r.day));
}

/**
 * The bucket key (as bucketSql gives it for a day, week or month) that an imported day adds to;
 * null for hours: a daily total has no hour, so hourly charts show native data only.
 */
export function importedBucketKey(day: string, interval: Interval): string | null {
  switch (interval) {
    case 'hour':
      return null;
    case 'day':
      return day;
    case 'week':
      return addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
    case 'month':
      return `${day.slice(0, 7)}-01`;
  }
}
