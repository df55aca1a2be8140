// The SQL of the daily breakdowns (migration 0005): how a day's visits are fingerprinted, how a
// day is counted, and the unfiltered breakdowns that sum the counted rows for the days where they
// are current and read the visits for the rest of the range.
//
// Why the sum is exact: a row of daily_breakdowns holds what the breakdown gives for one value
// over one UTC day's visits, and a range's figures are the sums of its days' figures, visitors
// too, because a visitor id of Plumb's belongs to one UTC day (the day's salt makes it, and a
// visit takes the id of its first pageview, on the day it starts). Days with imported visits,
// whose ids may span days, are never counted. A day's rows are used only while the fingerprint of
// its visits is the one they were counted from, so a late event, a deletion or an import on that
// day sends the day back to the visits until it is counted again.
import { NATIVE_IMPORT_ID } from '../../imports/tables.ts';
import { utcDay } from '../../ingest/salts.ts';
import { type DimensionSource, FILTER_SOURCES } from './plan.ts';
import { localDate } from '../range.ts';
import { bucketSql, type Interval } from './interval.ts';
import { Binder, type BreakdownPage, breakdownGroups, breakdownSets, bucketFigures, kpiFigures, type Scope, type Statement, scopeParams, type VisitSource } from './sql.ts';

const DAY_MS = 86_400_000;

/** Every dimension a breakdown groups by, each counted under its visits column's name. */
const PER_VALUE_SOURCES = [FILTER_SOURCES.page, FILTER_SOURCES.hostname];
const VISIT_SOURCES = [...new Set(Object.values(FILTER_SOURCES))].filter((source): source is VisitSource => source.kind === 'visit');

/**
 * The fingerprint of a set of visit rows: the sum, wrapping, of sign × a hash of each row's visit
 * state, named by (session_id, version). A state and its cancellation carry the same pair, so they
 * cancel out of the sum, and the background merges that drop such pairs leave it as it is; a new
 * state (the ingest writer's next version), a deleted visit or an added one (an import's new
 * sessions) moves it. rebuildVisits, which writes visits again under the same pairs, forgets every
 * count first.
 */
const FINGERPRINT = 'sumWithOverflow(sign * toInt64(cityHash64(session_id, version)))';
/** No visit row of the day was written by an import (their visitor ids may span days). */
const NO_IMPORTED_ROWS = 'countIf(import_id != {native:UUID}) = 0';

/** A day whose visits have the fingerprint of a listed count, and that count (YYYY-MM-DD, and the count's id as the store answers a UInt64). */
export interface CountedDay {
  day: string;
  count: string;
}

/** Whether a breakdown may sum daily_breakdowns: every dimension is counted, but only without filters. */
export const readsDailyBreakdowns = (scope: Scope): boolean => scope.filters.length === 0;

/** The UTC days wholly inside the scope and before `now`'s (the ones that may be counted), as [first, end) of YYYY-MM-DD; null if none. */
export function wholeClosedDays(scope: Scope, now: Date): { first: string; end: string } | null {
  const first = Math.ceil(scope.from.getTime() / DAY_MS) * DAY_MS;
  const end = Math.min(Math.floor(scope.to.getTime() / DAY_MS), Math.floor(now.getTime() / DAY_MS)) * DAY_MS;
  return end > first ? { first: utcDay(new Date(first)), end: utcDay(new Date(end)) } : null;
}

/**
 * The fingerprint of each UTC day in [first, end) of one site's visits (or every site's, each row
 * naming its site), in order of site and day. `countable`: only the days without imported visits,
 * which a count needs to know; a day's fingerprint matching a count's says as much.
 */
export function dayFingerprintsStatement(db: string, days: { first: string; end: string }, site?: string, countable = false): Statement {
  const ofSite = site === undefined ? '' : 'site_id = {site:UUID} AND ';
  return {
    sql: `
    SELECT toString(site) AS site_id, toString(utc_day) AS day, toString(state) AS fingerprint
      FROM (SELECT site_id AS site, toDate(start) AS utc_day, ${FINGERPRINT} AS state
              FROM {db:Identifier}.visits
             WHERE ${ofSite}toDate(start) >= {first:Date} AND toDate(start) < {end:Date}
             GROUP BY site, utc_day${countable ? `\n            HAVING ${NO_IMPORTED_ROWS}` : ''})
     ORDER BY site_id, day`,
    params: { db, ...(site === undefined ? {} : { site }), first: days.first, end: days.end, ...(countable ? { native: NATIVE_IMPORT_ID } : {}) },
  };
}

/** The counts listed in daily_breakdowns_days: of one site's days in [first, end), or of every day of the tenant. */
export function countsStatement(db: string, of?: { site: string; first: string; end: string }): Statement {
  const where = of ? ' WHERE site_id = {site:UUID} AND day >= {first:Date} AND day < {end:Date}' : '';
  return {
    sql: `SELECT toString(site) AS site_id, toString(utc_day) AS day, toString(state) AS fingerprint, toString(id) AS count_id
            FROM (SELECT site_id AS site, day AS utc_day, fingerprint AS state, count_id AS id FROM {db:Identifier}.daily_breakdowns_days${where})`,
    params: { db, ...of },
  };
}

/**
 * The counted days among a site's days: those whose fingerprint now is that of a listed count,
 * each with its count (the lowest id where two leaders counted the same visits), in the order of
 * `current` (ascending days, as the statements below take them).
 */
export function matchCounts(current: readonly { day: string; fingerprint: string }[], counts: readonly { day: string; fingerprint: string; count_id: string }[]): CountedDay[] {
  const countOf = new Map<string, bigint>();
  for (const count of counts) {
    const key = `${count.day} ${count.fingerprint}`;
    const id = BigInt(count.count_id);
    const known = countOf.get(key);
    if (known === undefined || id < known) countOf.set(key, id);
  }
  const counted: CountedDay[] = [];
  for (const day of current) {
    const id = countOf.get(`${day.day} ${day.fingerprint}`);
    if (id !== undefined) counted.push({ day: day.day, count: id.toString() });
  }
  return counted;
}

/** The rows of the `counted` days' counts: the columns of breakdownGroups with the day, `dimension` and engagement_ms. */
function countedRows(counted: readonly CountedDay[], binder: Binder, dimensions: string): string {
  // A count's id is its own (random, 64 bits), so the ids alone pick the rows; the days narrow the read.
  const counts = binder.bind(
    counted.map((c) => BigInt(c.count)),
    'Array(UInt64)',
  );
  const days = counted.length > 0 ? `day >= ${binder.bind(counted[0].day, 'Date')} AND day <= ${binder.bind(counted[counted.length - 1].day, 'Date')}` : '0';
  return `SELECT day, dimension, value, visitors, visits, pageviews, bounces, duration_ms, engagement_ms
              FROM {db:Identifier}.daily_breakdowns
             WHERE site_id = {site:UUID} AND ${days} AND has(${counts}, count_id)
               AND ${dimensions}`;
}

const SUMS = `sum(visitors) AS visitors,
           sum(visits) AS visits,
           sum(pageviews) AS pageviews,
           sum(bounces) AS bounces,
           sum(duration_ms) AS duration_ms`;
/** The dimension of a day's KPIs. */
const KPIS = 'visits';
const ALL_FIGURES = 'visitors, visits, pageviews, bounces, duration_ms, engagement_ms';

/** kpiStatement for an unfiltered scope, the `counted` days summed from daily_breakdowns: the same row. */
export function dailyKpiStatement(scope: Scope, counted: readonly CountedDay[]): Statement {
  const binder = new Binder(scopeParams(scope));
  const sql = `
    SELECT ${SUMS},
           sum(engagement_ms) AS engagement_ms
      FROM (SELECT ${ALL_FIGURES} FROM (${countedRows(counted, binder, `dimension = '${KPIS}'`)})
            UNION ALL
            ${kpiFigures({ ...scope, exceptDays: counted.map((c) => c.day) }, binder)})`;
  return { sql, params: binder.params };
}

/**
 * Whether every UTC day the scope touches lies within one local day of `timezone` (a time zone
 * at UTC+0 all through it). Then a day, week or month bucket of the site is made of whole UTC
 * days, and a bucket's visitors add up to the range's as a day's do.
 */
export function bucketsHoldUtcDays(scope: Scope, timezone: string): boolean {
  if (timezone === 'UTC') return true;
  // Day by day (a zone's offset may leave 0 for a while, as London's does each summer); a zone
  // away from UTC+0 fails at the first day.
  for (let start = Math.floor(scope.from.getTime() / DAY_MS) * DAY_MS; start < scope.to.getTime(); start += DAY_MS) {
    const day = utcDay(new Date(start));
    if (localDate(new Date(start), timezone) !== day || localDate(new Date(start + DAY_MS - 1), timezone) !== day) return false;
  }
  return true;
}

/**
 * statsStatement for an unfiltered scope and a day, week or month interval whose buckets hold
 * whole UTC days (bucketsHoldUtcDays), the `counted` days summed into their buckets from
 * daily_breakdowns and the rest grouped by bucket from the visits: the same rows.
 */
export function dailyStatsStatement(scope: Scope, interval: Exclude<Interval, 'hour'>, timezone: string, counted: readonly CountedDay[]): Statement {
  const binder = new Binder({ ...scopeParams(scope), tz: timezone });
  const rest = { ...scope, exceptDays: counted.map((c) => c.day) };
  const countedKpis = countedRows(counted, binder, `dimension = '${KPIS}'`);
  // The total is not the buckets' sum: the visits read here may hold an imported visitor on two days.
  const sql = `
    SELECT *
      FROM (SELECT bucket, 0 AS is_total, ${SUMS},
                   sum(engagement_ms) AS engagement_ms
              FROM (SELECT ${bucketSql(interval, "toDateTime64(day, 3, 'UTC')")} AS bucket, ${ALL_FIGURES} FROM (${countedKpis})
                    UNION ALL
                    ${bucketFigures(rest, interval, binder)})
             GROUP BY bucket
            HAVING visits > 0
            UNION ALL
            SELECT toDate(0) AS bucket, 1 AS is_total, ${SUMS},
                   sum(engagement_ms) AS engagement_ms
              FROM (SELECT ${ALL_FIGURES} FROM (${countedKpis})
                    UNION ALL
                    ${kpiFigures(rest, binder)}))
     ORDER BY is_total, bucket`;
  return { sql, params: binder.params };
}

/**
 * breakdownStatement for an unfiltered scope, the `counted` days summed from daily_breakdowns and
 * the rest of the range (its partial days at the ends in the site's time zone, today, days not
 * counted or changed since) from the visits: the same rows, order and `total`.
 */
export function dailyBreakdownStatement(scope: Scope, source: DimensionSource, counted: readonly CountedDay[], page: BreakdownPage): Statement {
  const binder = new Binder({ ...scopeParams(scope), limit: page.limit, offset: page.offset });
  const only = page.only ? ` AND has(${binder.bind(page.only, 'Array(String)')}, value)` : '';
  const sql = `
    SELECT value, ${SUMS},
           count() OVER () AS total
      FROM (SELECT value, visitors, visits, pageviews, bounces, duration_ms
              FROM (${countedRows(counted, binder, `dimension = ${binder.bind(source.column, 'String')}${only}`)})
            UNION ALL
            ${breakdownGroups({ ...scope, exceptDays: counted.map((c) => c.day) }, source, binder, page.only)})
     GROUP BY value
    HAVING visits > 0
     ORDER BY visitors DESC, value ASC
     LIMIT {limit:UInt32} OFFSET {offset:UInt32}`;
  return { sql, params: binder.params };
}

/** breakdownSetsStatement for an unfiltered scope, the `counted` days summed from daily_breakdowns: the same rows. */
export function dailySetsStatement(scope: Scope, sources: readonly VisitSource[], counted: readonly CountedDay[]): Statement {
  const binder = new Binder(scopeParams(scope));
  const columns = binder.bind(
    sources.map((source) => source.column),
    'Array(String)',
  );
  const sql = `
    SELECT set_index, value, ${SUMS}
      FROM (SELECT toInt64(indexOf(${columns}, dimension)) - 1 AS set_index, value, visitors, visits, pageviews, bounces, duration_ms
              FROM (${countedRows(counted, binder, `has(${columns}, dimension)`)})
            UNION ALL
            SELECT toInt64(set_index) AS set_index, value, visitors, visits, pageviews, bounces, duration_ms
              FROM (${breakdownSets({ ...scope, exceptDays: counted.map((c) => c.day) }, sources, binder)}))
     GROUP BY set_index, value
    HAVING visits > 0`;
  return { sql, params: binder.params };
}

// ---- Counting days (lib/analytics/daily-breakdowns.ts) ----

/**
 * Counts one site's UTC day into daily_breakdowns as count `countId`: every dimension's breakdown
 * of that day's visits, a row per value, and the day's KPIs (dimension `visits`).
 */
export function countDayStatement(db: string, site: string, day: string, countId: bigint): Statement {
  const from = new Date(`${day}T00:00:00.000Z`);
  const scope: Scope = { db, site, from, to: new Date(from.getTime() + DAY_MS), filters: [] };
  const binder = new Binder({ ...scopeParams(scope), day, count: countId });
  const row = (dimension: string, engagement = '0') =>
    `{site:UUID}, {day:Date}, {count:UInt64}, ${dimension}, value, visitors, visits, pageviews, bounces, duration_ms, ${engagement}`;
  const totals = `SELECT ${row(`'${KPIS}'`, 'engagement_ms')} FROM (SELECT '' AS value, * FROM (${kpiFigures(scope, binder)}) WHERE visits > 0)`;
  const perValue = PER_VALUE_SOURCES.map((source) => `SELECT ${row(`'${source.column}'`)} FROM (${breakdownGroups(scope, source, binder)})`);
  const columns = binder.bind(
    VISIT_SOURCES.map((source) => source.column),
    'Array(String)',
  );
  const perVisit = `SELECT ${row(`${columns}[set_index + 1]`)} FROM (${breakdownSets(scope, VISIT_SOURCES, binder)})`;
  const sql = `
    INSERT INTO {db:Identifier}.daily_breakdowns (site_id, day, count_id, dimension, value, visitors, visits, pageviews, bounces, duration_ms, engagement_ms)
    ${[totals, ...perValue, perVisit].join('\n    UNION ALL\n    ')}`;
  return { sql, params: binder.params };
}

/** Removes counts of one site's day, the list first, so a count is never listed without its rows. */
export function forgetCountsStatements(db: string, site: string, day: string, countIds: readonly string[]): Statement[] {
  const params = { db, site, day, counts: countIds.map((id) => BigInt(id)) };
  const where = 'WHERE site_id = {site:UUID} AND day = {day:Date} AND has({counts:Array(UInt64)}, count_id)';
  return [
    { sql: `DELETE FROM {db:Identifier}.daily_breakdowns_days ${where}`, params },
    { sql: `DELETE FROM {db:Identifier}.daily_breakdowns ${where}`, params },
  ];
}

/** Forgets every count of a tenant (its visits are written again). */
export const forgetAllCountsStatements = (db: string): Statement[] => [
  { sql: 'TRUNCATE TABLE {db:Identifier}.daily_breakdowns_days', params: { db } },
  { sql: 'TRUNCATE TABLE {db:Identifier}.daily_breakdowns', params: { db } },
];
