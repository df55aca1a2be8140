// Property keys present on one event in a range (GET /api/sites/:id/events/properties), with the
// number of sessions whose events carried each key, most first.
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import type { EventQuery } from './filters.ts';
import { eventScope, JOIN_SETTINGS } from './scope.ts';

export interface PropertyKeyRow {
  key: string;
  unique_sessions: number;
}

export async function eventProperties(store: AnalyticsStore, query: EventQuery): Promise<PropertyKeyRow[]> {
  const { from, where, params } = eventScope(query);
  const rows = await store.query<{ key: string; unique_sessions: string }>(
    `SELECT key, uniqExact(session_id) AS unique_sessions
    FROM ${from}
    ARRAY JOIN mapKeys(props) AS key
    WHERE ${where}
    GROUP BY key
    ORDER BY unique_sessions DESC, key
    ${JOIN_SETTINGS}`,
    params,
  );
  return rows.map((r) => ({ key: r.key, unique_sessions: Number(r.unique_sessions) }));
}
