// The rows every /events endpoint reads, as SQL: one site's events in the range, narrowed by the
// event name, a property value and an audience dimension, combined with AND, every value a bound
// parameter. `path` is the page the event happened on; `referrer`, `device` and `country` are the
// VISIT's, as the dashboard's breakdowns give them: its source named as the Sources panel names it
// ("Google", '' for direct), the device and country of its first pageview. A visitor who came
// from Google and signed up on their second page is Google's, not the second page's referrer's.
import type { Params } from '../../stores/analytics/index.ts';
import type { DimensionKey, EventQuery } from './filters.ts';

/**
 * Each dimension's value on an event row of eventScope's FROM. A fixed map, so the only text that
 * reaches SQL this way is ours; the audience panels list these values and the dimension filter
 * compares with them, so a value picked in a panel filters exactly those sessions. A session
 * without a visit (events sent without any pageview, e.g. by a server) has only the event's own
 * origin, which ingest classified with the same names.
 */
export const DIMENSION_SQL: Readonly<Record<DimensionKey, string>> = {
  path: 'path',
  referrer: 'if(has_visit = 1, visit_source, toString(referrer_source))',
  device: 'if(has_visit = 1, visit_device, toString(device))',
  country: 'if(has_visit = 1, visit_country, toString(country))',
};

const readsVisit = (key: DimensionKey) => key !== 'path';

/**
 * How far a visit's start may lie from the range of its events. Visitor ids, and with them the
 * tracker's sessions, change with the daily (UTC) salt, so a visit starts at most a day before
 * any of its events; the day after covers events sent before the visit's first pageview.
 */
export const VISIT_MARGIN_MS = 86_400_000;

export interface EventScope {
  /** FROM (with the visit joined when asked for or filtered on). */
  from: string;
  /** WHERE, every condition ANDed. */
  where: string;
  params: Params;
}

/**
 * The FROM and WHERE of an events query. With `visits` (or a filter on a visit's dimension) each
 * event row carries its session's visit as `has_visit` and `visit_*` columns, for DIMENSION_SQL.
 *
 * The visit is found by session in the `visits` table, whose rows are states of a visit (sign 1)
 * and their cancellations (-1) until merges collapse them. A visit's origin columns are written
 * once, with its first pageview, and every state and cancellation repeats them, so ANY row of the
 * session is the visit's: an ANY join takes one per event, without FINAL and without duplicates.
 * Only the sessions that sent a matching event are looked up (a set read from the events' key
 * columns), so the join's table stays the size of the answer, not of the site's traffic, and the
 * visits' primary key skips the other sessions.
 */
export function eventScope(query: EventQuery, options: { visits?: boolean } = {}): EventScope {
  const clauses = ['site_id = {site:UUID}', "ts >= {from:DateTime64(3, 'UTC')}", "ts < {to:DateTime64(3, 'UTC')}"];
  const params: Params = { db: query.tenant, site: query.siteId, from: query.range.from, to: query.range.to };
  if (query.eventName !== undefined) {
    clauses.push('name = {event_name:String}');
    params.event_name = query.eventName;
  }
  if (query.property) {
    // props[key] reads '' for a missing key, and '' must not match events without it.
    clauses.push('mapContains(props, {property_key:String})', 'props[{property_key:String}] = {property_value:String}');
    params.property_key = query.property.key;
    params.property_value = query.property.value;
  }
  const events = clauses.join('\n         AND ');
  let from = '{db:Identifier}.events';
  if (options.visits || (query.dimension && readsVisit(query.dimension.key))) {
    params.visits_from = new Date(query.range.from.getTime() - VISIT_MARGIN_MS);
    params.visits_to = new Date(query.range.to.getTime() + VISIT_MARGIN_MS);
    from = `{db:Identifier}.events
    LEFT ANY JOIN (
      SELECT session_id, 1 AS has_visit, toString(referrer_source) AS visit_source, toString(device) AS visit_device, toString(country) AS visit_country
      FROM {db:Identifier}.visits
      WHERE site_id = {site:UUID}
        AND start >= {visits_from:DateTime64(3, 'UTC')} AND start < {visits_to:DateTime64(3, 'UTC')}
        AND session_id IN (
          SELECT session_id FROM {db:Identifier}.events
          WHERE ${events})
    ) AS visit USING (session_id)`;
  }
  if (query.dimension) {
    clauses.push(`${DIMENSION_SQL[query.dimension.key]} = {dimension_value:String}`);
    params.dimension_value = query.dimension.value;
  }
  return { from, where: clauses.join('\n      AND '), params };
}

/**
 * Ends every statement that may join: a session without a visit gets the column defaults (0, ''),
 * whatever the server's profile says, so DIMENSION_SQL never sees NULL.
 */
export const JOIN_SETTINGS = 'SETTINGS join_use_nulls = 0';
