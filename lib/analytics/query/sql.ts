// The SQL of the stats API, in ClickHouse's dialect. Every value is a bound parameter
// ({f0:String}, {site:UUID}, …); the only names written into the text come from plan.ts's closed
// list of columns, never from a request. Each builder returns its statement and parameters.
//
// All statements share one shape: a `visits` CTE groups the range's hits by session (one row per
// visit, with its pageviews, duration, visitor ids and the columns it is filtered or grouped by),
// and the filters are its HAVING clause, so a filter always keeps or drops whole visits.
import type { Params } from '../../stores/analytics/index.ts';
import { type Filter, wildcardToLike } from './filters.ts';
import { bucketSql, type Interval } from './interval.ts';
import { type DimensionSource, FILTER_SOURCES, type HitColumn } from './plan.ts';

export interface Statement {
  sql: string;
  params: Params;
}

/** What every statement reads: one site's hits in [from, to) of one tenant, narrowed by filters. */
export interface Scope {
  db: string;
  site: string;
  from: Date;
  to: Date;
  filters: readonly Filter[];
}

const IN_RANGE = 'site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}';
/** Visits with a custom event (any event but `$engagement`) in the range are not bounces. */
const CONVERTED = `(SELECT session_id FROM {db:Identifier}.events WHERE ${IN_RANGE} AND name != '$engagement')`;
/** Milliseconds from a visit's first to its last hit. */
const DURATION_MS = 'toUnixTimestamp64Milli(max(ts)) - toUnixTimestamp64Milli(min(ts))';

/** Hands out parameter names f0, f1, … so filter values are bound, never spliced. */
class Binder {
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

const scopeParams = (scope: Scope): Params => ({ db: scope.db, site: scope.site, from: scope.from, to: scope.to });

/** The visit's value of a column: its first hit's (argMin), last hit's (argMax). */
function visitValue(column: HitColumn, pick: 'first' | 'last'): string {
  return pick === 'first' ? `argMin(${column}, ts)` : `argMax(${column}, ts)`;
}

/** `expr` against the filter's values, with `is_not` read as "not is". */
function valueCondition(expr: string, filter: Filter, binder: Binder): string {
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

/**
 * A filter as a condition on one visit (a HAVING term of the visits CTE). For per-hit
 * dimensions: some hit matches, or for `is_not` no hit has any of the values.
 */
function visitCondition(filter: Filter, binder: Binder): string {
  const { column, pick } = FILTER_SOURCES[filter.dimension];
  if (pick === 'each') {
    const matching = `countIf(${valueCondition(column, filter, binder)})`;
    return filter.op === 'is_not' ? `${matching} = 0` : `${matching} > 0`;
  }
  const condition = valueCondition(visitValue(column, pick), filter, binder);
  return filter.op === 'is_not' ? `NOT ${condition}` : condition;
}

/** The visits CTE body: one row per visit in range that passes every filter (AND). */
function visitsCte(scope: Scope, binder: Binder, extraColumns = ''): string {
  const having = scope.filters.map((f) => visitCondition(f, binder));
  return `SELECT session_id,
           groupUniqArray(visitor_id) AS visitor_ids,
           count() AS visit_pageviews,
           ${DURATION_MS} AS visit_duration_ms${extraColumns}
      FROM {db:Identifier}.hits
     WHERE ${IN_RANGE}
     GROUP BY session_id${having.length > 0 ? `\n    HAVING ${having.join('\n       AND ')}` : ''}`;
}

/**
 * KPIs of the visits in scope. visitors = distinct visitor ids over their hits; visits = count;
 * pageviews = hits; bounces = visits with one pageview and no custom event; duration_ms = sum of
 * (last hit − first hit); engagement_ms = sum of their `$engagement` events' engagement_ms.
 * Ratios and rounding are left to the caller, so both stores round alike.
 */
export function kpiStatement(scope: Scope): Statement {
  const binder = new Binder(scopeParams(scope));
  // Engagement is joined to the visits rather than read with `session_id IN (SELECT … FROM visits)`:
  // ClickHouse inlines a CTE at each use, so the IN form grouped the range's hits by session twice.
  // Unfiltered, every hit in range belongs to a visit in scope, so visitors are counted straight off
  // the hits and ClickHouse drops the per-visit visitor arrays (a third of the query's work).
  const visitors = scope.filters.length === 0 ? `(SELECT uniqExact(visitor_id) FROM {db:Identifier}.hits WHERE ${IN_RANGE})` : 'uniqExactArray(visitor_ids)';
  const sql = `
    WITH visits AS (${visitsCte(scope, binder)})
    SELECT ${visitors} AS visitors,
           count() AS visits,
           sum(visit_pageviews) AS pageviews,
           countIf(visit_pageviews = 1 AND session_id NOT IN ${CONVERTED}) AS bounces,
           sum(visit_duration_ms) AS duration_ms,
           sum(engaged.engagement_ms) AS engagement_ms
      FROM visits
      LEFT JOIN (SELECT session_id, sum(toUInt64OrZero(props['engagement_ms'])) AS engagement_ms
                   FROM {db:Identifier}.events
                  WHERE ${IN_RANGE} AND name = '$engagement'
                  GROUP BY session_id) AS engaged USING (session_id)`;
  return { sql, params: binder.params };
}

/** Distinct visitors with a hit at or after `since`, whatever the range and filters. */
export function liveVisitorsStatement(db: string, site: string, since: Date): Statement {
  return {
    sql: 'SELECT uniqExact(visitor_id) AS live_visitors FROM {db:Identifier}.hits WHERE site_id = {site:UUID} AND ts >= {since:DateTime64(3)}',
    params: { db, site, since },
  };
}

/**
 * Per bucket of the site's local time: distinct visitors and visits with a hit in the bucket,
 * and the hits. A visit spanning two buckets counts in both. Filters keep whole visits.
 */
export function timeseriesStatement(scope: Scope, interval: Interval, timezone: string): Statement {
  const binder = new Binder({ ...scopeParams(scope), tz: timezone });
  const filtered = scope.filters.length > 0;
  const sql = `
    ${filtered ? `WITH visits AS (${visitsCte(scope, binder)})` : ''}
    SELECT ${bucketSql(interval)} AS bucket,
           uniqExact(visitor_id) AS visitors,
           uniqExact(session_id) AS visits,
           count() AS pageviews
      FROM {db:Identifier}.hits
     WHERE ${IN_RANGE}${filtered ? ' AND session_id IN (SELECT session_id FROM visits)' : ''}
     GROUP BY bucket
     ORDER BY bucket`;
  return { sql, params: binder.params };
}

export interface BreakdownPage {
  limit: number;
  offset: number;
  /** Only these values (the comparison of a page of rows). */
  only?: readonly string[];
}

/**
 * One row per value: visitors (distinct visitor ids of the row's visits), visits, pageviews,
 * bounces and summed duration of the visits with that value, plus `total`, the number of values
 * before paging. So a row's visitors, visits, bounce rate and duration are those the KPIs give
 * under the filter `dimension is value`. Per-visit values (entry page, source, country, …): each
 * visit is in one row and brings all its pageviews. Per-hit values (page, hostname): a visit is
 * in the row of every value it has (one pass: the visit's values are collected, then ARRAY
 * JOINed, which is cheaper than grouping hits by value and visit and joining back), and
 * pageviews are its hits with that value. Ordered by visitors, most first, then value.
 */
export function breakdownStatement(scope: Scope, source: DimensionSource, page: BreakdownPage): Statement {
  const binder = new Binder({ ...scopeParams(scope), limit: page.limit, offset: page.offset });
  const only = page.only ? `\n     WHERE has(${binder.bind(page.only, 'Array(String)')}, value)` : '';
  const rows =
    source.pick === 'each'
      ? `visits AS (${visitsCte(scope, binder, `,\n           groupArray(${source.column}) AS hit_values`)}),
    rows AS (
    SELECT value, session_id, visitor_ids, countEqual(hit_values, value) AS hits, visit_pageviews, visit_duration_ms
      FROM visits ARRAY JOIN arrayDistinct(hit_values) AS value${only})`
      : `visits AS (${visitsCte(scope, binder, `,\n           ${visitValue(source.column, source.pick)} AS value`)}),
    rows AS (
    SELECT value, session_id, visitor_ids, visit_pageviews AS hits, visit_pageviews, visit_duration_ms
      FROM visits${only})`;
  const sql = `
    WITH ${rows}
    SELECT value,
           uniqExactArray(visitor_ids) AS visitors,
           count() AS visits,
           sum(hits) AS pageviews,
           countIf(visit_pageviews = 1 AND session_id NOT IN ${CONVERTED}) AS bounces,
           sum(visit_duration_ms) AS duration_ms,
           count() OVER () AS total
      FROM rows
     GROUP BY value
     ORDER BY visitors DESC, value ASC
     LIMIT {limit:UInt32} OFFSET {offset:UInt32}`;
  return { sql, params: binder.params };
}
