// One property of one event broken down by value (GET /api/sites/:id/events/breakdown): a row per
// distinct value, most sessions first, ties by value so the order is stable.
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import type { EventQuery } from './filters.ts';
import { eventScope, JOIN_SETTINGS } from './scope.ts';

export interface BreakdownRow {
  value: string;
  unique_sessions: number;
  events: number;
}

/**
 * A property can hold ids or free text; beyond this many values a breakdown is no longer read by
 * anyone, and the answer must stay small enough for the dashboard.
 */
export const BREAKDOWN_LIMIT = 1000;

export async function eventBreakdown(store: AnalyticsStore, query: EventQuery, propertyKey: string): Promise<BreakdownRow[]> {
  const { from, where, params } = eventScope(query);
  const rows = await store.query<{ value: string; unique_sessions: string; events: string }>(
    `SELECT props[{breakdown_key:String}] AS value, uniqExact(session_id) AS unique_sessions, count() AS events
    FROM ${from}
    WHERE ${where}
      AND mapContains(props, {breakdown_key:String})
    GROUP BY value
    ORDER BY unique_sessions DESC, value
    LIMIT {limit:UInt32}
    ${JOIN_SETTINGS}`,
    { ...params, breakdown_key: propertyKey, limit: BREAKDOWN_LIMIT },
  );
  return rows.map((r) => ({ value: r.value, unique_sessions: Number(r.unique_sessions), events: Number(r.events) }));
}
