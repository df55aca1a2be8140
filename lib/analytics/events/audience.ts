// The audience panels of one event (GET /api/sites/:id/events/audience): the pages it was sent on,
// and the sources, devices and countries of the visits that sent it (as the dashboard's
// breakdowns name them), under the same filters as the chart.
import type { AnalyticsStore } from '../../stores/analytics/index.ts';
import { DIMENSION_KEYS, type DimensionKey, type EventQuery } from './filters.ts';
import { DIMENSION_SQL, eventScope, JOIN_SETTINGS } from './scope.ts';

export interface AudienceRow {
  value: string;
  unique_sessions: number;
}

export type Audience = Record<DimensionKey, AudienceRow[]>;

export const AUDIENCE_TOP = 10;

/**
 * One statement for all four panels: each event row, with its session's visit beside it, is fanned
 * out into one (dimension, value) pair per panel, grouped, and LIMIT BY keeps the top of each
 * panel, instead of reading the events and visits four times.
 */
export async function eventAudience(store: AnalyticsStore, query: EventQuery): Promise<Audience> {
  const { from, where, params } = eventScope(query, { visits: true });
  const pairs = DIMENSION_KEYS.map((key) => `('${key}', ${DIMENSION_SQL[key]})`).join(', ');
  const rows = await store.query<{ dimension: DimensionKey; value: string; unique_sessions: string }>(
    `SELECT pair.1 AS dimension, pair.2 AS value, uniqExact(session_id) AS unique_sessions
    FROM (
      SELECT session_id, [${pairs}] AS pairs
      FROM ${from}
      WHERE ${where}
    )
    ARRAY JOIN pairs AS pair
    GROUP BY dimension, value
    ORDER BY dimension, unique_sessions DESC, value
    LIMIT {top:UInt32} BY dimension
    ${JOIN_SETTINGS}`,
    { ...params, top: AUDIENCE_TOP },
  );
  const audience: Audience = { path: [], referrer: [], device: [], country: [] };
  for (const row of rows) audience[row.dimension].push({ value: row.value, unique_sessions: Number(row.unique_sessions) });
  return audience;
}
