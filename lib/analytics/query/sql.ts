// The SQL of the stats API, in ClickHouse's dialect. Every value is a bound parameter
// ({f0:String}, {site:UUID}, …); the only names written into the text come from plan.ts's closed
// list of columns, never from a request. Each builder returns its statement and parameters.
//
// All statements read the `visits` table: one row per state of a visit, `sign` 1 for a state and
// -1 for its cancellation (see migration 0003). Counts and sums are therefore `sum(sign * …)`, and
// a group whose states all cancelled out is dropped with `HAVING visits > 0`. Distinct visitors
// need no sign: a visit's cancelled states carry its one visitor in the same rows as its current
// state, except where plan.ts's needsFinal says otherwise, and there the table is read FINAL.
// daily-breakdowns.ts adds to some of them the rows of the closed days it has counted.
import type { Params } from '../../stores/analytics/index.ts';
import { type Filter, wildcardToLike } from './filters.ts';
import { bucketSql, type Interval } from './interval.ts';
import { type DimensionSource, FILTER_SOURCES, needsFinal } from './plan.ts';

/** A per-visit dimension's source. */
export type VisitSource = DimensionSource & { kind: 'visit' };

export interface Statement {
  sql: string;
  params: Params;
}

/** What every statement reads: one site's visits that started in [from, to) of one tenant, narrowed by filters. */
export interface Scope {
  db: string;
  site: string;
  from: Date;
  to: Date;
  filters: readonly Filter[];
  /** UTC days (YYYY-MM-DD, ascending) whose visits are left out: the statement's caller sums them from daily_breakdowns (daily-breakdowns.ts). */
  exceptDays?: readonly string[];
}

const IN_RANGE = 'site_id = {site:UUID} AND start >= {from:DateTime64(3)} AND start < {to:DateTime64(3)}';
/** One pageview and no custom event. */
const BOUNCED = 'sign * (visit_pageviews = 1 AND events = 0)';
/** Milliseconds from a visit's first to its last pageview. */
const DURATION_MS = 'sign * (toInt64(toUnixTimestamp64Milli(last_ts)) - toInt64(toUnixTimestamp64Milli(first_ts)))';

/** Hands out parameter names f0, f1, … so filter values are bound, never spliced. */
export class Binder {
  readonly params: Params;
  private next = 0;
  constructor(params: Params) {
    this.params = params;
  }
  bind(value: unknown, type: string): string {
    const name = `f${this.next++}`;
    this.params[name] = value;
    return `{${name}:${type}}`;
  }
}

export const scopeParams = (scope: Scope): Params => ({ db: scope.db, site: scope.site, from: scope.from, to: scope.to });

/** `expr` against the filter's values, with `is_not` read as "not is". */
export function valueCondition(expr: string, filter: Filter, binder: Binder): string {
  switch (filter.op) {
    case 'is':
    case 'is_not':
      return `has(${binder.bind(filter.values, 'Array(String)')}, ${expr})`;
    case 'contains':
      return `position(${expr}, ${binder.bind(filter.values[0], 'String')}) > 0`;
    case 'matches':
      return `like(${expr}, ${binder.bind(wildcardToLike(filter.values[0]), 'String')})`;
  }
}

/** A filter as a condition on one visit row. For per-pageview values: some value matches, or for `is_not` none is any of them. */
function visitCondition(filter: Filter, binder: Binder): string {
  const source = FILTER_SOURCES[filter.dimension];
  const matches = source.kind === 'each' ? `arrayExists(x -> ${valueCondition('x', filter, binder)}, ${source.column})` : valueCondition(source.column, filter, binder);
  return filter.op === 'is_not' ? `NOT ${matches}` : matches;
}

const DAY_MS = 86_400_000;

/** [from, to) without the UTC days `except` (YYYY-MM-DD, ascending): the intervals left, in order. */
export function rangeWithoutDays(from: Date, to: Date, except: readonly string[]): [Date, Date][] {
  const left: [Date, Date][] = [];
  let at = from.getTime();
  for (const day of except) {
    const start = Date.parse(`${day}T00:00:00.000Z`);
    if (start > at) left.push([new Date(at), new Date(Math.min(start, to.getTime()))]);
    at = Math.max(at, start + DAY_MS);
  }
  if (at < to.getTime()) left.push([new Date(at), to]);
  return left.filter(([a, b]) => a < b);
}

/** FROM and WHERE of a statement: the visits in scope (FINAL where plan.ts asks for it). */
function visitsInScope(scope: Scope, binder: Binder, source?: DimensionSource, arrayJoin = ''): string {
  const final = needsFinal(scope.filters, source) ? ' FINAL' : '';
  const conditions = [IN_RANGE, ...scope.filters.map((f) => visitCondition(f, binder))];
  if (scope.exceptDays?.length) {
    // As ranges of `start`, which the table's sorting key can skip to, not a test of every row.
    const left = rangeWithoutDays(scope.from, scope.to, scope.exceptDays).map(([from, to]) => `start >= ${binder.bind(from, 'DateTime64(3)')} AND start < ${binder.bind(to, 'DateTime64(3)')}`);
    conditions.push(left.length > 0 ? `(${left.join(' OR ')})` : '0');
  }
  return `FROM {db:Identifier}.visits${final}${arrayJoin}
     WHERE ${conditions.join('\n       AND ')}`;
}

/** The figures every statement gives for a set of visits; `pageviews` is the column counted as its pageviews. */
function visitFigures(pageviews: 'visit_pageviews' | 'value_pageviews'): string {
  return `uniqExact(visitor_id) AS visitors,
           sum(sign) AS visits,
           sum(sign * ${pageviews}) AS pageviews,
           sum(${BOUNCED}) AS bounces,
           sum(${DURATION_MS}) AS duration_ms`;
}

/**
 * The KPIs of a set of visits: visitors (distinct visitor ids), visits, pageviews, bounces (visits
 * with one pageview and no custom event), duration_ms (sum of last − first pageview) and
 * engagement_ms (sum of the visits' `$engagement` time). Ratios and rounding are left to the
 * caller, so both stores round alike.
 */
const FIGURES = `${visitFigures('visit_pageviews')},
           sum(sign * toInt64(visit_engagement_ms)) AS engagement_ms`;

/** The KPIs of the visits in scope (one row). */
export function kpiStatement(scope: Scope): Statement {
  const binder = new Binder(scopeParams(scope));
  return { sql: kpiFigures(scope, binder), params: binder.params };
}

/** The statement of kpiStatement, its values bound by `binder`, for a statement that adds other rows to it. */
export function kpiFigures(scope: Scope, binder: Binder): string {
  return `
    SELECT ${FIGURES}
      ${visitsInScope(scope, binder)}`;
}

/**
 * The rows of statsStatement before the rollup: a bucket (of `start` in the site's local time)
 * and the figures of the visits that started in it, a row each; for a statement that adds other
 * rows to them.
 */
export function bucketFigures(scope: Scope, interval: Interval, binder: Binder): string {
  return `
    SELECT ${bucketSql(interval)} AS bucket,
           ${FIGURES}
      ${visitsInScope(scope, binder)}
     GROUP BY bucket`;
}

/**
 * The KPIs and the timeseries of the visits in scope in one pass: a row per bucket of the site's
 * local time with the figures of the visits that started in it, and the rollup's row over all
 * buckets (`is_total` = 1), which holds the KPIs.
 */
export function statsStatement(scope: Scope, interval: Interval, timezone: string): Statement {
  const binder = new Binder({ ...scopeParams(scope), tz: timezone });
  const sql = `
    SELECT ${bucketSql(interval)} AS bucket,
           grouping(bucket) AS is_total,
           ${FIGURES}
      ${visitsInScope(scope, binder)}
     GROUP BY ROLLUP(bucket)
    HAVING visits > 0 OR is_total = 1
     ORDER BY is_total, bucket`;
  return { sql, params: binder.params };
}

/** Distinct visitors with a pageview at or after `since`, whatever the range and filters. */
export function liveVisitorsStatement(db: string, site: string, since: Date): Statement {
  return {
    sql: 'SELECT uniqExact(visitor_id) AS live_visitors FROM {db:Identifier}.hits WHERE site_id = {site:UUID} AND ts >= {since:DateTime64(3)}',
    params: { db, site, since },
  };
}

export interface BreakdownPage {
  limit: number;
  offset: number;
  /** Only these values (the comparison of a page of rows). */
  only?: readonly string[];
}

/**
 * One row per value: visitors, visits, pageviews, bounces and summed duration of the visits with
 * that value, plus `total`, the number of values before paging. So a row's visitors, visits,
 * bounce rate and duration are those the KPIs give under the filter `dimension is value`.
 * Per-visit values: each visit is in one row and brings all its pageviews. Per-pageview values
 * (page, hostname): a visit is in the row of every value it has, and pageviews are its pageviews
 * with that value. Ordered by visitors, most first, then value.
 */
export function breakdownStatement(scope: Scope, source: DimensionSource, page: BreakdownPage): Statement {
  const binder = new Binder({ ...scopeParams(scope), limit: page.limit, offset: page.offset });
  const sql = `
    ${breakdownGroups(scope, source, binder, page.only, ',\n           count() OVER () AS total')}
     ORDER BY visitors DESC, value ASC
     LIMIT {limit:UInt32} OFFSET {offset:UInt32}`;
  return { sql, params: binder.params };
}

/**
 * The grouped rows of breakdownStatement without order or paging (value, visitors, visits,
 * pageviews, bounces, duration_ms, then `extra`), for a statement that adds other rows to them.
 */
export function breakdownGroups(scope: Scope, source: DimensionSource, binder: Binder, only?: readonly string[], extra = ''): string {
  const each = source.kind === 'each';
  const value = each ? 'value' : source.column;
  const onlyValues = only ? `\n       AND has(${binder.bind(only, 'Array(String)')}, ${value})` : '';
  const arrayJoin = each ? `\n     ARRAY JOIN ${source.column} AS value, ${source.counts} AS value_pageviews` : '';
  return `SELECT ${value} AS value,
           ${visitFigures(each ? 'value_pageviews' : 'visit_pageviews')}${extra}
      ${visitsInScope(scope, binder, source, arrayJoin)}${onlyValues}
     GROUP BY value
    HAVING visits > 0`;
}

/**
 * Several per-visit breakdowns of one scope in one pass (GROUPING SETS): every value of each
 * column, with `set_index` = the index of its column in `columns` and the same figures as
 * breakdownStatement. No paging: the caller orders and pages each set. Which rows a set holds and
 * what they count is exactly what breakdownStatement gives for that column alone.
 */
export function breakdownSetsStatement(scope: Scope, sources: readonly VisitSource[]): Statement {
  const binder = new Binder(scopeParams(scope));
  return { sql: breakdownSets(scope, sources, binder), params: binder.params };
}

/** The statement of breakdownSetsStatement, its values bound by `binder`, for a statement that adds other rows to it. */
export function breakdownSets(scope: Scope, sources: readonly VisitSource[], binder: Binder): string {
  const columns = sources.map((source) => source.column);
  // grouping(c) is 0 in the rows grouped by c, 1 in the others'.
  const setCases = columns.map((column, index) => `grouping(${column}) = 0, ${index}`).join(', ');
  const valueCases = columns.map((column, index) => `set_index = ${index}, toString(${column})`).join(', ');
  return `
    SELECT multiIf(${setCases}, -1) AS set_index,
           multiIf(${valueCases}, '') AS value,
           ${visitFigures('visit_pageviews')}
      ${visitsInScope(scope, binder, sources.find((source) => source.changes))}
     GROUP BY GROUPING SETS (${columns.map((column) => `(${column})`).join(', ')})
    HAVING visits > 0`;
}
