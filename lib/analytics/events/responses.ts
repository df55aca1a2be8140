// Response schemas of the event analytics routes (services/events.service.ts): the OpenAPI
// document publishes them and each handler's return type is checked against them.
import { Type } from '@sinclair/typebox';
import { DateTime, eventStream, keyed, object, stringEnum } from '../../openapi/responses.ts';
import { DIMENSION_KEYS } from './filters.ts';
import { INTERVALS } from './timeseries.ts';

const count = (description: string) => Type.Integer({ minimum: 0, description });
const uniqueSessions = count('Distinct sessions that sent the event');
const events = count('Events sent');
const rows = <T extends Parameters<typeof Type.Array>[0]>(row: T) => object({ rows: Type.Array(row) });

export const EventNames = rows(object({ name: Type.String(), unique_sessions: uniqueSessions, events }));
export const EventProperties = rows(object({ key: Type.String(), unique_sessions: uniqueSessions }));
export const EventBreakdown = rows(object({ value: Type.String(), unique_sessions: uniqueSessions, events }));
export const EventTimeseries = object({
  interval: stringEnum(INTERVALS),
  rows: Type.Array(object({ bucket: { ...DateTime, description: 'Start of the bucket in the site’s time zone, as a UTC instant' }, unique_sessions: uniqueSessions, events })),
});
export const EventAudience = keyed(DIMENSION_KEYS, Type.Array(object({ value: Type.String(), unique_sessions: uniqueSessions })), {
  description: 'The top values of each panel by unique sessions',
});
/** `snapshot` events carry lib/analytics/realtime.ts RealtimeSnapshot as JSON. */
export const RealtimeStream = eventStream();
/** One snapshot of the realtime feed (lib/analytics/realtime.ts RealtimeSnapshot), as the MCP server answers it. */
export const RealtimeSnapshot = object({
  live_visitors: Type.Integer({ minimum: 0, description: 'Visitors seen in the last five minutes' }),
  current_pages: Type.Array(object({ path: Type.String(), visitors: Type.Integer({ minimum: 0 }) }), { description: 'The last page each live visitor viewed, top 10' }),
  current_sources: Type.Array(object({ source: Type.String(), visitors: Type.Integer({ minimum: 0 }) }), {
    description: 'Live visitors by the source of their visit, top 10 (an empty string for direct visits)',
  }),
  recent_events: Type.Array(object({ name: Type.String(), path: Type.String(), source: Type.String(), ts: DateTime }), { description: 'The latest custom events of the last day, newest first' }),
  at: { ...DateTime, description: 'When the snapshot was taken; the windows end here' },
});
