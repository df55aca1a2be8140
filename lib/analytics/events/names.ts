// Event names recorded in a range (GET /api/sites/:id/events/names), most sessions first. Names
// starting with `$` are Plumb's own automatic events ($engagement) and are not custom events.
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import type { EventQuery } from './filters.ts';
import { eventScope, JOIN_SETTINGS } from './scope.ts';

export interface EventNameRow {
  name: string;
  unique_sessions: number;
  events: number;
}

export async function eventNames(store: AnalyticsStore, query: EventQuery): Promise<EventNameRow[]> {
  const { from, where, params } = eventScope(query);
  const rows = await store.query<{ name: string; unique_sessions: string; events: string }>(
    `SELECT name, uniqExact(session_id) AS unique_sessions, count() AS events
    FROM ${from}
    WHERE ${where}
      AND NOT startsWith(name, '$')
    GROUP BY name
    ORDER BY unique_sessions DESC, events DESC, name
    ${JOIN_SETTINGS}`,
    params,
  );
  return rows.map((r) => ({ name: r.name, unique_sessions: Number(r.unique_sessions), events: Number(r.events) }));
}
