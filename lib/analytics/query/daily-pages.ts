// The SQL of the daily pages table (migration 0005): how a day's visits are fingerprinted, how a
// day is counted into it, and the pages breakdown that sums its rows for the days where they are
// current and reads the visits for the rest of the range.
//
// Why the sum is exact: a row of daily_pages holds what breakdownGroups gives for one page over
// one UTC day's visits, and a range's figures are the sums of its days' figures, visitors too,
// because a visitor id of Plumb's belongs to one UTC day (the day's salt makes it, and a visit
// takes the id of its first pageview, on the day it starts). Days with imported visits, whose ids
// may span days, are never counted. A day's rows are used only while the fingerprint of its
// visits is the one they were counted from, so a late event, a deletion or an import on that day
// sends the day back to the visits until it is counted again.
import { NATIVE_IMPORT_ID } from '../../imports/tables.ts';
import { FILTER_SOURCES, type DimensionSource } from './plan.ts';
import { Binder, type BreakdownPage, breakdownGroups, IN_RANGE, type Scope, type Statement, scopeParams } from './sql.ts';

/** The breakdown the table holds: pages, unfiltered. */
const PAGES = FILTER_SOURCES.page;

/**
 * The fingerprint of a set of visit rows: the sum, wrapping, of sign × a hash of each row's visit
 * state. A state and its cancellation carry the same values, so they cancel out of the sum, and
 * the background merges that drop such pairs leave it as it is; a new state, a deleted or an
 * added visit moves it. The hash covers what the figures are made of (a visit's pages change
 * only with its version).
 */
const FINGERPRINT = 'sumWithOverflow(sign * toInt64(cityHash64(session_id, version, visitor_id, visit_pageviews, events, first_ts, last_ts)))';
/** Visit rows an import wrote: their visitor ids may span days. */
const IMPORTED_ROWS = 'countIf(import_id != {native:UUID})';

/** A day counted into daily_pages, as the store answers it: the day (YYYY-MM-DD) and the fingerprint of its visits then. */
export interface CountedDay {
  day: string;
  fingerprint: string;
}

/** Whether a breakdown may read daily_pages: pages, without filters. */
export const readsDailyPages = (scope: Scope, source: DimensionSource): boolean => source === PAGES && scope.filters.length === 0;

/**
 * The UTC days lying wholly inside the scope whose visits are, now, exactly those counted into
 * daily_pages: no imported visit, and the fingerprint of a count. Ordered by day.
 */
export function countedDaysStatement(scope: Scope): Statement {
  const sql = `
    SELECT toString(day) AS day, toString(fingerprint) AS fingerprint
      FROM (SELECT toDate(start) AS day, ${FINGERPRINT} AS fingerprint, ${IMPORTED_ROWS} AS imported
              FROM {db:Identifier}.visits
             WHERE ${IN_RANGE}
             GROUP BY day)
     WHERE imported = 0
       AND toDateTime64(day, 3, 'UTC') >= {from:DateTime64(3)}
       AND toDateTime64(day, 3, 'UTC') + INTERVAL 1 DAY <= {to:DateTime64(3)}
       AND (day, fingerprint) IN (SELECT day, fingerprint FROM {db:Identifier}.daily_pages_days
                                   WHERE site_id = {site:UUID} AND day >= toDate({from:DateTime64(3)}, 'UTC') AND day <= toDate({to:DateTime64(3)}, 'UTC'))
     ORDER BY day`;
  return { sql, params: { ...scopeParams(scope), native: NATIVE_IMPORT_ID } };
}

/**
 * breakdownStatement for the pages of an unfiltered scope, the `counted` days summed from
 * daily_pages and the rest of the range (its partial days at the ends in the site's time zone,
 * today, days not counted or changed since) from the visits. The same rows, order and `total`.
 * A day counted twice at once (two leaders in a hand-over) has its rows twice: one of each is read.
 */
export function dailyPagesBreakdownStatement(scope: Scope, counted: readonly CountedDay[], page: BreakdownPage): Statement {
  const binder = new Binder({ ...scopeParams(scope), limit: page.limit, offset: page.offset });
  const days = binder.bind(
    counted.map((c) => c.day),
    'Array(Date)',
  );
  const fingerprints = binder.bind(
    counted.map((c) => BigInt(c.fingerprint)),
    'Array(Int64)',
  );
  const onlyPages = page.only ? `\n               AND has(${binder.bind(page.only, 'Array(String)')}, page)` : '';
  const sql = `
    SELECT value,
           sum(visitors) AS visitors,
           sum(visits) AS visits,
           sum(pageviews) AS pageviews,
           sum(bounces) AS bounces,
           sum(duration_ms) AS duration_ms,
           count() OVER () AS total
      FROM (SELECT page AS value, any(visitors) AS visitors, any(visits) AS visits, any(pageviews) AS pageviews,
                   any(bounces) AS bounces, any(duration_ms) AS duration_ms
              FROM {db:Identifier}.daily_pages
             WHERE site_id = {site:UUID} AND has(${days}, day) AND fingerprint = ${fingerprints}[indexOf(${days}, day)]${onlyPages}
             GROUP BY day, page
            UNION ALL
            ${breakdownGroups({ ...scope, exceptDays: counted.map((c) => c.day) }, PAGES, binder, page.only)})
     GROUP BY value
    HAVING visits > 0
     ORDER BY visitors DESC, value ASC
     LIMIT {limit:UInt32} OFFSET {offset:UInt32}`;
  return { sql, params: binder.params };
}

// ---- Counting days (lib/analytics/daily-pages.ts) ----

/** The fingerprint of each UTC day before `before` of each site of a tenant, for the days without imported visits. */
export function dayFingerprintsStatement(db: string, before: Date): Statement {
  return {
    sql: `
    SELECT toString(site_id) AS site_id, toString(toDate(start)) AS day, toString(${FINGERPRINT}) AS fingerprint
      FROM {db:Identifier}.visits
     WHERE start < {before:DateTime64(3)}
     GROUP BY site_id, toDate(start)
    HAVING ${IMPORTED_ROWS} = 0`,
    params: { db, before, native: NATIVE_IMPORT_ID },
  };
}

/** The fingerprint of one site's visits of one UTC day, and their imported rows. */
export function dayFingerprintStatement(db: string, site: string, day: string): Statement {
  return {
    sql: `
    SELECT toString(${FINGERPRINT}) AS fingerprint, ${IMPORTED_ROWS} AS imported
      FROM {db:Identifier}.visits
     WHERE site_id = {site:UUID} AND toDate(start) = {day:Date}`,
    params: { db, site, day, native: NATIVE_IMPORT_ID },
  };
}

/** Every count of a tenant's daily_pages_days. */
export const countedDaysOfTenantStatement = (db: string): Statement => ({
  sql: 'SELECT DISTINCT toString(site_id) AS site_id, toString(day) AS day, toString(fingerprint) AS fingerprint FROM {db:Identifier}.daily_pages_days',
  params: { db },
});

/** Counts one site's UTC day into daily_pages under `fingerprint`: breakdownGroups of that day's pages, a row each. */
export function countDayStatement(db: string, site: string, day: string, fingerprint: string): Statement {
  const from = new Date(`${day}T00:00:00.000Z`);
  const scope: Scope = { db, site, from, to: new Date(from.getTime() + 86_400_000), filters: [] };
  const binder = new Binder({ ...scopeParams(scope), day, fingerprint: BigInt(fingerprint) });
  const sql = `
    INSERT INTO {db:Identifier}.daily_pages (site_id, day, fingerprint, page, visitors, visits, pageviews, bounces, duration_ms)
    SELECT {site:UUID}, {day:Date}, {fingerprint:Int64}, value, visitors, visits, pageviews, bounces, duration_ms
      FROM (${breakdownGroups(scope, PAGES, binder)})`;
  return { sql, params: binder.params };
}

/** Removes counts of one site's day, the day's list first, so a count is never listed without its rows. */
export function forgetCountsStatements(db: string, site: string, day: string, fingerprints: readonly string[]): Statement[] {
  const params = { db, site, day, fingerprints: fingerprints.map((f) => BigInt(f)) };
  const where = 'WHERE site_id = {site:UUID} AND day = {day:Date} AND has({fingerprints:Array(Int64)}, fingerprint)';
  return [
    { sql: `DELETE FROM {db:Identifier}.daily_pages_days ${where}`, params },
    { sql: `DELETE FROM {db:Identifier}.daily_pages ${where}`, params },
  ];
}
