// The stats use cases behind GET /api/sites/:id/stats, …/stats/kpis, …/stats/timeseries and …/stats/breakdown:
// read the request (range in the site's time zone, interval, filters, comparison) → run the
// statements of sql.ts → shape the answer. Ratios and rounding happen here, once, for both stores.
//
// Definitions (over the visits that started in the half-open range, each with all its pageviews
// and events; see plan.ts):
// - visitors: distinct visitor_id of the visits in scope (a visit's visitor is its first
//   pageview's). visits: their number. pageviews: their pageviews.
// - views_per_visit: pageviews / visits, 2 decimals.
// - bounce_rate: % of visits with exactly one pageview and no custom event (any event other than
//   `$engagement`), 1 decimal.
// - visit_duration: mean over visits of (last pageview's ts − first pageview's ts), in seconds, rounded.
// - engagement_time: sum of the visits' `$engagement` events' engagement_ms / visits, in seconds,
//   rounded; a visit that sent none counts as 0.
// - live_visitors: distinct visitor_id with a pageview in the last 5 minutes, whatever the range
//   and filters (so it has no comparison value).
// Filters AND-combine and keep or drop whole visits. The timeseries puts each visit in the bucket
// it started in.
//
// Imported data (imported.ts): unless the request says with_imported=false, the days of the range
// without native visits add their imported figures. Visitors of imported days are summed, day by
// day (a daily export cannot tell the same visitor on two days apart). Imported visits count in
// every mean but engagement time's: they carry no engagement, so engagement_time is the mean over
// native visits. Every answer says which days came from imports (`imported`).
import { type FieldError, validationFailed } from '../../errors.ts';
import { pageFields } from '../../pagination.ts';
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import { checkRange, previousPeriod, previousYear, type TimeRange } from '../range.ts';
import { checkFilters, type Filter } from './filters.ts';
import { bucketKeyToMs, bucketStarts, chooseInterval, type Interval } from './interval.ts';
import { type Row, statsQueries } from './batch.ts';
import {
  type ImportedBreakdownPlan,
  type ImportedDay,
  type ImportedView,
  importedBreakdownDays,
  importedBreakdownStatement,
  importedBucketKey,
  importedView,
  importedVisitorDays,
  NO_IMPORTED,
  planImportedBreakdown,
} from './imported.ts';
import { type BreakdownDimension, type DimensionSource, planBreakdown } from './plan.ts';
import { bucketsHoldUtcDays, dailyBreakdownStatement, dailyKpiStatement, dailyStatsStatement } from './daily-breakdowns.ts';
import { type BreakdownPage, breakdownStatement, kpiStatement, liveVisitorsStatement, type Scope, type Statement, statsStatement } from './sql.ts';

export const COMPARISONS = ['previous_period', 'year', 'custom'] as const;
export type Comparison = (typeof COMPARISONS)[number];
const LIVE_WINDOW_MS = 5 * 60_000;

/** The site as the stats need it: where its rows are and which clock its days follow. */
export interface StatsSite {
  id: string;
  tenant: string;
  timezone: string;
  /**
   * false: the site has no completed import (lib/imports/imports.ts hasCompletedImport), so its
   * imported tables are not read at all; absent: they are read, and add nothing when empty.
   */
  imports?: boolean;
}

/** Query parameters shared by every stats endpoint (already type-checked by the action). */
export interface StatsRequest {
  from?: string;
  to?: string;
  filter?: unknown;
  compare?: Comparison;
  compare_from?: string;
  compare_to?: string;
  /** false leaves imported data out; absent or true adds it for the days without native data. */
  with_imported?: boolean;
}

export interface RangeView {
  from: string;
  to: string;
  timezone: string;
  interval: Interval;
}

export interface Kpis {
  visitors: number;
  visits: number;
  pageviews: number;
  views_per_visit: number;
  bounce_rate: number;
  visit_duration: number;
  engagement_time: number;
}

export interface TimeseriesPoint {
  /** UTC instant (RFC 3339) at which the bucket starts on the site's local clock. */
  bucket: string;
  visitors: number;
  visits: number;
  pageviews: number;
}

export type { ImportedView } from './imported.ts';

export interface StatsResponse {
  range: RangeView;
  kpis: Kpis & { live_visitors: number };
  comparison?: { range: RangeView; kpis: Kpis; imported: ImportedView };
  timeseries: TimeseriesPoint[];
  imported: ImportedView;
}

export interface BreakdownRow {
  value: string;
  visitors: number;
  visits: number;
  pageviews: number;
  bounce_rate: number;
  visit_duration: number;
  comparison?: { visitors: number };
}

export interface BreakdownResponse {
  dimension: BreakdownDimension;
  rows: BreakdownRow[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
  imported: ImportedView;
}

interface ParsedRequest {
  range: TimeRange;
  filters: Filter[];
  comparison?: TimeRange;
  /** Whether imported data may be added (the request did not say with_imported=false). */
  withImported: boolean;
}

/** Validates the range, filters and comparison of a request; every problem at once in one 400. */
export function parseStatsRequest(site: StatsSite, request: StatsRequest, now: Date): ParsedRequest {
  const problems: FieldError[] = [];
  const range = checkRange({ from: request.from, to: request.to }, site.timezone, problems, now);
  const filters = checkFilters(request.filter, problems);
  const custom = request.compare_from !== undefined || request.compare_to !== undefined;
  let comparison: TimeRange | undefined;
  if (custom && request.compare !== 'custom') problems.push({ field: 'compare', message: 'compare must be custom with compare_from and compare_to', type: 'compareCustom' });
  else if (request.compare === 'custom') {
    for (const field of ['compare_from', 'compare_to'] as const) {
      if (request[field] === undefined) problems.push({ field, message: `${field} is required with compare=custom`, type: 'required' });
    }
    if (request.compare_from !== undefined && request.compare_to !== undefined) comparison = checkRange({ from: request.compare_from, to: request.compare_to }, site.timezone, problems, now, { from: 'compare_from', to: 'compare_to' });
  }
  if (problems.length > 0 || !range) throw validationFailed(problems);
  if (request.compare === 'previous_period') comparison = previousPeriod(range);
  if (request.compare === 'year') comparison = previousYear(range);
  const withImported = request.with_imported !== false && site.imports !== false;
  return comparison ? { range, filters, comparison, withImported } : { range, filters, withImported };
}

const scopeOf = (site: StatsSite, range: TimeRange, filters: readonly Filter[]): Scope => ({ db: site.tenant, site: site.id, from: range.from, to: range.to, filters });
/** A range's bounds as answers give them; with its interval where a chart goes with it. */
const rangeBounds = (range: TimeRange): RangeBounds => ({ from: range.from.toISOString(), to: range.to.toISOString(), timezone: range.timezone });
const rangeView = (range: TimeRange, interval: Interval): RangeView => ({ ...rangeBounds(range), interval });
/** `numerator / denominator` rounded to `decimals`, 0 when there is nothing to divide by. */
const ratio = (numerator: number, denominator: number, decimals: number) => {
  if (denominator === 0) return 0;
  const scale = 10 ** decimals;
  return Math.round((numerator * scale) / denominator) / scale;
};

/** ClickHouse sends 64-bit counts as strings; every count here fits a double exactly. */
async function run(store: AnalyticsStore, statement: Statement): Promise<Row[]> {
  return statsQueries(store).run(statement);
}
const num = (value: unknown) => Number(value ?? 0);

/** The KPIs of the native figures in `row` plus those of imported days. */
function kpisOf(row: Record<string, unknown> | undefined, imported: readonly ImportedDay[] = []): Kpis {
  const sum = (field: 'visitors' | 'visits' | 'pageviews' | 'bounces' | 'duration_s') => imported.reduce((total, day) => total + day[field], 0);
  const nativeVisits = num(row?.visits);
  const visits = nativeVisits + sum('visits');
  const pageviews = num(row?.pageviews) + sum('pageviews');
  return {
    visitors: num(row?.visitors) + sum('visitors'),
    visits,
    pageviews,
    views_per_visit: ratio(pageviews, visits, 2),
    bounce_rate: ratio(100 * (num(row?.bounces) + sum('bounces')), visits, 1),
    visit_duration: ratio(num(row?.duration_ms) + 1000 * sum('duration_s'), visits * 1000, 0),
    engagement_time: ratio(num(row?.engagement_ms), nativeVisits * 1000, 0),
  };
}

/** The imported days of a scope's range, none when the request or its filters leave them out. */
async function importedDays(store: AnalyticsStore, scope: Scope, timezone: string, withImported: boolean): Promise<ImportedDay[] | null> {
  // imported_visitors has no dimension, so any filter leaves imported data out.
  if (!withImported || scope.filters.length > 0) return null;
  return importedVisitorDays(store, scope, timezone);
}

const viewOf = (days: readonly ImportedDay[] | null): ImportedView => (days ? importedView(days.map((d) => d.day)) : NO_IMPORTED);

/** kpiStatement, or for an unfiltered scope the same row with the counted days summed from daily_breakdowns. */
async function kpiOf(store: AnalyticsStore, scope: Scope): Promise<Statement> {
  const counted = await statsQueries(store).countedDays(scope);
  return counted.length > 0 ? dailyKpiStatement(scope, counted) : kpiStatement(scope);
}

/** statsStatement, or for an unfiltered scope whose buckets hold whole UTC days the same rows with the counted days summed from daily_breakdowns. */
async function statsOf(store: AnalyticsStore, scope: Scope, interval: Interval, timezone: string): Promise<Statement> {
  if (interval === 'hour' || !bucketsHoldUtcDays(scope, timezone)) return statsStatement(scope, interval, timezone);
  const counted = await statsQueries(store).countedDays(scope);
  return counted.length > 0 ? dailyStatsStatement(scope, interval, timezone, counted) : statsStatement(scope, interval, timezone);
}

async function kpis(store: AnalyticsStore, scope: Scope, timezone: string, withImported: boolean): Promise<{ kpis: Kpis; imported: ImportedView }> {
  const [[row], days] = await Promise.all([kpiOf(store, scope).then((statement) => run(store, statement)), importedDays(store, scope, timezone, withImported)]);
  return { kpis: kpisOf(row, days ?? []), imported: viewOf(days) };
}

async function liveVisitors(store: AnalyticsStore, site: StatsSite, now: Date): Promise<number> {
  const [row] = await run(store, liveVisitorsStatement(site.tenant, site.id, new Date(now.getTime() - LIVE_WINDOW_MS)));
  return num(row?.live_visitors);
}

/** The KPIs and every bucket of the range, in order, zero where nothing happened. */
async function kpisAndTimeseries(
  store: AnalyticsStore,
  scope: Scope,
  range: TimeRange,
  interval: Interval,
  withImported: boolean,
): Promise<{ kpis: Kpis; timeseries: TimeseriesPoint[]; imported: ImportedView }> {
  const [rows, days] = await Promise.all([
    statsOf(store, scope, interval, range.timezone).then((statement) => run(store, statement)),
    importedDays(store, scope, range.timezone, withImported),
  ]);
  const total = rows.find((r) => num(r.is_total) === 1);
  const bucketOf = (key: string | number) => bucketKeyToMs(key, interval, range.timezone);
  const found = new Map(rows.filter((r) => r !== total).map((r) => [bucketOf(r.bucket as string | number), r]));
  const added = new Map<number, { visitors: number; visits: number; pageviews: number }>();
  for (const day of days ?? []) {
    const key = importedBucketKey(day.day, interval);
    if (key === null) continue;
    const bucket = added.get(bucketOf(key)) ?? { visitors: 0, visits: 0, pageviews: 0 };
    added.set(bucketOf(key), { visitors: bucket.visitors + day.visitors, visits: bucket.visits + day.visits, pageviews: bucket.pageviews + day.pageviews });
  }
  const timeseries = bucketStarts(range, interval).map((start) => {
    const row = found.get(start.getTime());
    const more = added.get(start.getTime());
    return { bucket: start.toISOString(), visitors: num(row?.visitors) + (more?.visitors ?? 0), visits: num(row?.visits) + (more?.visits ?? 0), pageviews: num(row?.pageviews) + (more?.pageviews ?? 0) };
  });
  return { kpis: kpisOf(total, days ?? []), timeseries, imported: viewOf(days) };
}

export async function siteStats(store: AnalyticsStore, site: StatsSite, request: StatsRequest & { interval?: Interval }, now = new Date()): Promise<StatsResponse> {
  const { range, filters, comparison, withImported } = parseStatsRequest(site, request, now);
  const interval = chooseInterval(range, request.interval);
  const scope = scopeOf(site, range, filters);
  const [current, live, previous] = await Promise.all([
    kpisAndTimeseries(store, scope, range, interval, withImported),
    liveVisitors(store, site, now),
    comparison ? kpis(store, scopeOf(site, comparison, filters), comparison.timezone, withImported) : undefined,
  ]);
  const response: StatsResponse = { range: rangeView(range, interval), kpis: { ...current.kpis, live_visitors: live }, timeseries: current.timeseries, imported: current.imported };
  if (comparison && previous) response.comparison = { range: rangeView(comparison, interval), ...previous };
  return response;
}

export type RangeBounds = Omit<RangeView, 'interval'>;

export interface KpisResponse {
  range: RangeBounds;
  kpis: Kpis;
  comparison?: { range: RangeBounds; kpis: Kpis; imported: ImportedView };
  imported: ImportedView;
}

/**
 * The KPIs of a range (and of its comparison) without the chart and live visitors: one pass over
 * the range's visits, for a caller that has the chart already (the dashboard's previous period).
 */
export async function siteKpis(store: AnalyticsStore, site: StatsSite, request: StatsRequest, now = new Date()): Promise<KpisResponse> {
  const { range, filters, comparison, withImported } = parseStatsRequest(site, request, now);
  const [current, previous] = await Promise.all([
    kpis(store, scopeOf(site, range, filters), range.timezone, withImported),
    comparison ? kpis(store, scopeOf(site, comparison, filters), comparison.timezone, withImported) : undefined,
  ]);
  const response: KpisResponse = { range: rangeBounds(range), ...current };
  if (comparison && previous) response.comparison = { range: rangeBounds(comparison), ...previous };
  return response;
}

export async function siteTimeseries(
  store: AnalyticsStore,
  site: StatsSite,
  request: StatsRequest & { interval?: Interval },
  now = new Date(),
): Promise<{ range: RangeView; timeseries: TimeseriesPoint[]; imported: ImportedView }> {
  const { range, filters, withImported } = parseStatsRequest(site, { ...request, compare: undefined, compare_from: undefined, compare_to: undefined }, now);
  const interval = chooseInterval(range, request.interval);
  const { timeseries, imported } = await kpisAndTimeseries(store, scopeOf(site, range, filters), range, interval, withImported);
  return { range: rangeView(range, interval), timeseries, imported };
}

export interface BreakdownRequest extends StatsRequest {
  dimension: BreakdownDimension;
  limit: number;
  offset: number;
}

/** Most visitors first, then value in byte order: the ORDER BY of breakdownStatement. */
const byVisitors = (a: Row, b: Row) => num(b.visitors) - num(a.visitors) || Buffer.compare(Buffer.from(String(a.value)), Buffer.from(String(b.value)));

/** breakdownStatement of any page, or for an unfiltered scope the same answer with the counted days (looked up once) summed from daily_breakdowns. */
async function breakdownOf(store: AnalyticsStore, scope: Scope, source: DimensionSource): Promise<(page: BreakdownPage) => Statement> {
  const counted = await statsQueries(store).countedDays(scope);
  return (page) => (counted.length > 0 ? dailyBreakdownStatement(scope, source, counted, page) : breakdownStatement(scope, source, page));
}

/** One page of a breakdown's rows and the number of values; batched with others when the store is busy. */
async function breakdownPage(store: AnalyticsStore, scope: Scope, source: DimensionSource, page: { limit: number; offset: number }): Promise<{ rows: Row[]; total: number }> {
  const batched = source.kind === 'visit' ? statsQueries(store).visitBreakdownRows(scope, source) : null;
  if (batched) {
    const rows = (await batched).slice().sort(byVisitors);
    return { rows: rows.slice(page.offset, page.offset + page.limit), total: rows.length };
  }
  const statementOf = await breakdownOf(store, scope, source);
  const rows = await run(store, statementOf(page));
  let total = num(rows[0]?.total);
  // Past the last row there is no row to carry the total; count once more from the start.
  if (rows.length === 0 && page.offset > 0) {
    const [first] = await run(store, statementOf({ limit: 1, offset: 0 }));
    total = num(first?.total);
  }
  return { rows, total };
}

/**
 * One page of a breakdown with the imported rows of the range's days without native visits
 * added, when the dimension has an imported table and the filters allow it. The native page runs
 * meanwhile, so a site without imported rows in the range waits for nothing more.
 */
async function breakdownWithImported(
  store: AnalyticsStore,
  scope: Scope,
  timezone: string,
  source: DimensionSource,
  imported: ImportedBreakdownPlan | null,
  page: { limit: number; offset: number },
): Promise<{ rows: Row[]; total: number; imported: ImportedView }> {
  const [native, days] = await Promise.all([breakdownPage(store, scope, source, page), imported ? importedBreakdownDays(store, scope, timezone, imported) : []]);
  if (!imported || days.length === 0) return { ...native, imported: NO_IMPORTED };
  const rows = await run(store, importedBreakdownStatement(scope, source, imported, days, page));
  let total = num(rows[0]?.total);
  if (rows.length === 0 && page.offset > 0) {
    const [first] = await run(store, importedBreakdownStatement(scope, source, imported, days, { limit: 1, offset: 0 }));
    total = num(first?.total);
  }
  return { rows, total, imported: importedView(days) };
}

/** The visitors of each of `values` in a comparison range, imported days included as in the current one. */
async function comparisonVisitors(store: AnalyticsStore, scope: Scope, timezone: string, source: DimensionSource, imported: ImportedBreakdownPlan | null, values: string[]): Promise<Map<string, number>> {
  const page = { limit: values.length, offset: 0, only: values };
  const days = imported ? await importedBreakdownDays(store, scope, timezone, imported) : [];
  const statement = imported && days.length > 0 ? importedBreakdownStatement(scope, source, imported, days, page) : (await breakdownOf(store, scope, source))(page);
  return new Map((await run(store, statement)).map((r) => [String(r.value), num(r.visitors)]));
}

export async function siteBreakdown(store: AnalyticsStore, site: StatsSite, request: BreakdownRequest, now = new Date()): Promise<BreakdownResponse> {
  const { range, filters, comparison, withImported } = parseStatsRequest(site, request, now);
  const plan = planBreakdown(request.dimension, filters);
  const imported = withImported ? planImportedBreakdown(request.dimension, plan.filters) : null;
  const { limit, offset } = request;
  const current = await breakdownWithImported(store, scopeOf(site, range, plan.filters), range.timezone, plan.source, imported, { limit, offset });
  const shaped: BreakdownRow[] = current.rows.map((r) => {
    // Imported page rows have no bounces or duration: the means are over the visits that have them.
    const rated = r.rated_visits === undefined ? num(r.visits) : num(r.rated_visits);
    return {
      value: String(r.value),
      visitors: num(r.visitors),
      visits: num(r.visits),
      pageviews: num(r.pageviews),
      bounce_rate: ratio(100 * num(r.bounces), rated, 1),
      visit_duration: ratio(num(r.duration_ms), rated * 1000, 0),
    };
  });
  if (comparison && shaped.length > 0) {
    const visitors = await comparisonVisitors(store, scopeOf(site, comparison, plan.filters), comparison.timezone, plan.source, imported, shaped.map((r) => r.value));
    for (const row of shaped) row.comparison = { visitors: visitors.get(row.value) ?? 0 };
  }
  return { dimension: request.dimension, rows: shaped, ...pageFields(shaped.length, current.total, { limit, offset }), imported: current.imported };
}
